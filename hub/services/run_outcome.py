"""What the routes that answer a run need from the engine and the history, and no
more: a run's result, background work that outlives a request, params as history
shows them, and the ref a failure is reported under."""

from __future__ import annotations

from hub.engine.background import background
from hub.engine.engine import RunResult, new_ref
from hub.history.record import mask_params

__all__ = ["RunResult", "background", "mask_params", "new_ref"]
