"""What the editor checks and completes against that only the hub knows: the approved
``require()`` modules (``WEBJOB_MODULES``) and the limit maxima (``WEBJOB_MAX_*``).

``GET /api/webjobs/available`` sends both next to the jobs (``modules``, ``maxima``);
this reads them from that answer's JSON. Plain data, no Qt. A hub too old to send
them, or sending something unreadable, gives ``None`` for that part, and the editor
goes on without it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.header import Limits

__all__ = ["HubContext", "context_from_available"]

_MAXIMA_KEYS = ("runtimeMs", "memoryMb", "cpuMs")


@dataclass(frozen=True)
class HubContext:
    modules: list[str] | None
    maxima: Limits | None


def _modules(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [m.strip() for m in value if isinstance(m, str) and m.strip()]


def _maxima(value: Any) -> Limits | None:
    if not isinstance(value, dict):
        return None
    numbers: list[int] = []
    for key in _MAXIMA_KEYS:
        number = value.get(key)
        if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
            return None
        numbers.append(number)
    runtime, memory, cpu = numbers
    return Limits(runtime_ms=runtime, memory_mb=memory, cpu_ms=cpu)


def context_from_available(data: Any) -> HubContext:
    """The modules and maxima in a ``/available`` answer (``None`` where missing)."""
    if not isinstance(data, dict):
        return HubContext(None, None)
    return HubContext(_modules(data.get("modules")), _maxima(data.get("maxima")))
