"""What a worker answers the hub for a run: the done message's meta and body, and the
failure of a run it ended for a limit."""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any

from hub.engine import crossing, protocol, sandbox

TRIM_AFTER = 4 * 1024 * 1024  # a body this big is worth handing memory back after


def limit_failure(limit: str, limits: dict[str, Any]) -> sandbox.RawOutcome:
    text = {"cpu": f"The job used more than its CPU limit of {limits.get('cpuMs')} ms",
            "runtime": f"The job ran longer than its runtime limit of {limits.get('runtimeMs')} ms",
            "memory": f"The job used more than its memory limit of {limits.get('memoryMb')} MB",
            }.get(limit)
    if text is None:
        return sandbox.RawOutcome({"ok": False, "code": "JOB-001", "message": "The run was ended"})
    return sandbox.RawOutcome({"ok": False, "code": "JOB-003", "limit": limit, "message": text})


def answer_of(outcome: sandbox.RawOutcome, caps: protocol.Caps) -> tuple[dict[str, Any], bytes]:
    """The done message's meta and the body bytes, within the run's result cap."""
    meta, logs = outcome.meta, outcome.meta.get("logs", [])
    body = crossing.body_bytes(meta, outcome.body)
    if body is None:
        return {"ok": False, "code": "JOB-001", "logs": logs,
                "message": "The job's file body is not valid base64"}, b""
    if len(body) > caps.result_bytes:
        return {"ok": False, "code": "JOB-003", "limit": "result", "logs": logs,
                "message": protocol.over_cap("result", caps.result_bytes)}, b""
    if meta.get("ok"):
        if meta.get("type") == "json":  # JSON.stringify escapes a lone surrogate
            body = protocol.clean_json_text(body)
        meta["encoding"] = "binary"  # decoded here; raw bytes follow the line
    return meta, body


def give_back_memory() -> None:
    # glibc keeps a large freed buffer in its heap (its mmap threshold grows with
    # the sizes freed), so after a big answer the worker would stay that big.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)
