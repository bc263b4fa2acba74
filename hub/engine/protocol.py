"""Messages between the hub and its worker processes: one JSON object per line.

Hub → worker: ``{"op": "run", "source", "spec", "memoryMb"}``,
``{"op": "reply", "id", "ok", "value"}`` (answer to a bridge call), ``{"op": "exit"}``.

Worker → hub: ``{"t": "ready", "pid"}`` (a fresh context is waiting),
``{"t": "log", "lines": [[level, message, ms], ...]}``,
``{"t": "call", "id", "op", "args"}`` (the job calls the host),
``{"t": "done", "meta", "len", "cpuMs"}`` followed by ``len`` raw bytes of body.
The body travels unescaped after its line, so a large result is not re-encoded.
"""

from __future__ import annotations

import json
from typing import Any

# A run message carries the job source and parameters (bounded by the body limit).
MAX_LINE = 256 * 1024 * 1024


def encode(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
