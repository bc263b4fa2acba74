"""One run's record, as every history store keeps it and the API shows it.

A record is written twice: ``running`` when the run starts, and again (same
``job_id``) when it ends. Everything in it is already bounded and masked by
:func:`bounded_record` helpers here, so no store has to think about size or secrets.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, fields
from typing import Any

from shared.outcomes import OUTCOMES, SOURCES

__all__ = [
    "MAX_CALLS",
    "MAX_LOG_BYTES",
    "MAX_LOG_LINES",
    "MAX_PARAMS_BYTES",
    "MAX_RESULT_BYTES",
    "OUTCOMES",
    "PARAMS_TRUNCATED",
    "SOURCES",
    "Caller",
    "RunRecord",
    "bound_calls",
    "bound_logs",
    "bound_params",
    "bound_result",
    "mask_params",
    "record_from_json",
    "record_to_json",
    "textual",
]

MAX_RESULT_BYTES = 64 * 1024
MAX_LOG_LINES = 300
MAX_LOG_BYTES = 32 * 1024
MAX_CALLS = 100
# Parameters are the caller's: a public job's anonymous caller may send 10 MB a request.
MAX_PARAMS_BYTES = 64 * 1024
PARAMS_TRUNCATED = "…truncated"  # the key that marks parameters history cut short
MASK = "***"
# Parameter names that look like they hold a secret: their values are never stored.
_SECRET_NAME = re.compile(r"pass|pwd|secret|token|api[-_]?key|apikey|^key$|_key$|-key$|auth|"
                          r"credential|private", re.IGNORECASE)


@dataclass(frozen=True)
class Caller:
    kind: str              # anonymous | user | owner | key | system | schedule
    id: str | None = None
    name: str | None = None
    user_class: str | None = None


@dataclass(frozen=True)
class RunRecord:
    job_id: str
    job_name: str
    source: str                      # one of SOURCES
    caller: Caller
    started: float                   # seconds since the epoch
    node: str
    ref: str
    outcome: str = "running"         # one of OUTCOMES
    job_version: int | None = None
    method: str = ""
    params: Any = None               # masked, JSON-safe
    code: str | None = None          # error code when failed/interrupted
    message: str | None = None
    limit: str | None = None         # which limit ended it: runtime | memory | cpu
    http_status: int | None = None
    result: str | None = None        # text result, at most MAX_RESULT_BYTES of UTF-8
    result_truncated: bool = False
    result_size: int = 0             # bytes of the full result
    result_type: str | None = None   # json | text | html | file ...
    result_format: str | None = None # content type
    logs: tuple[dict[str, Any], ...] = ()   # {level, message, ms}
    logs_truncated: bool = False
    calls: tuple[dict[str, Any], ...] = ()  # outbound http calls and db queries
    ended: float | None = None
    runtime_ms: int | None = None
    cpu_ms: int | None = None
    schedule_id: str | None = None
    schedule_name: str | None = None

    def finished(self, **changes: Any) -> RunRecord:
        """This record with ``changes``: ``dataclasses.replace`` without its walk
        through every field and the frozen ``__init__`` (a record has no derived
        fields), once per run on the request path."""
        unknown = changes.keys() - _FIELDS
        if unknown:
            raise TypeError(f"RunRecord has no field {', '.join(sorted(unknown))}")
        record = object.__new__(RunRecord)
        record.__dict__.update(self.__dict__)
        record.__dict__.update(changes)
        return record

    def as_json(self) -> dict[str, Any]:
        """The record as the API shows it (camelCase keys)."""
        data = asdict(self)
        return {_camel(k): v for k, v in data.items()} | {
            "caller": {"kind": self.caller.kind, "id": self.caller.id,
                       "name": self.caller.name, "userClass": self.caller.user_class},
            "logs": list(self.logs), "calls": list(self.calls)}

    def summary_json(self) -> dict[str, Any]:
        """A history row: the record without its console, calls and result text."""
        full = self.as_json()
        for key in ("logs", "calls", "result"):
            full.pop(key)
        return full


_FIELDS = frozenset(f.name for f in fields(RunRecord))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _Budget:
    """What is left of :data:`MAX_PARAMS_BYTES`, counted roughly as JSON would spend it."""

    def __init__(self, size: int) -> None:
        self.left = size

    def spend(self, size: int) -> bool:
        """Take ``size``; False (and nothing left) when it does not fit."""
        self.left -= size
        return self.left >= 0


def bound_params(value: Any) -> Any:
    """``value`` masked as :func:`mask_params` does, kept to about
    :data:`MAX_PARAMS_BYTES` of JSON: what fits, in order, under ``kept`` beside a
    :data:`PARAMS_TRUNCATED` note when the rest is cut. The walk stops where the budget
    ends, so a 10 MB body costs what 64 KB does (the job still gets all of it)."""
    budget = _Budget(MAX_PARAMS_BYTES)
    kept = _bounded(value, 0, budget)
    if budget.left >= 0:
        return kept
    return {PARAMS_TRUNCATED: f"history keeps the first {MAX_PARAMS_BYTES // 1024} KB of "
                              "these parameters", "kept": kept}


def _bounded(value: Any, depth: int, budget: _Budget) -> Any:
    if depth > 20:
        budget.spend(len(MASK))
        return MASK
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        budget.spend(2)
        for key, item in value.items():
            name = str(key)
            if not budget.spend(len(name) + 4):
                break
            out[name] = MASK if _SECRET_NAME.search(name) else _bounded(item, depth + 1, budget)
            if budget.left < 0:
                break
        return out
    if isinstance(value, list):
        items: list[Any] = []
        budget.spend(2)
        for item in value:
            if not budget.spend(1):
                break
            items.append(_bounded(item, depth + 1, budget))
            if budget.left < 0:
                break
        return items
    if isinstance(value, str):
        # Stored as UTF-8: up to three bytes a character outside ASCII (four for one
        # outside the BMP, which counts two here: a surrogate pair's length in JSON).
        width = 1 if value.isascii() else 3
        room = max(budget.left, 0) // width
        budget.spend(len(value) * width + 2)
        return value if budget.left >= 0 else value[:room]
    budget.spend(8)
    return value


def mask_params(value: Any, depth: int = 0) -> Any:
    """``value`` with every secret-looking key's value replaced by ``***``."""
    if depth > 20:
        return MASK
    if isinstance(value, dict):
        return {str(k): MASK if _SECRET_NAME.search(str(k)) else mask_params(v, depth + 1)
                for k, v in value.items()}
    if isinstance(value, list):
        return [mask_params(v, depth + 1) for v in value]
    return value


def textual(content_type: str | None) -> bool:
    """Whether a result of this type keeps its text in history (binary ones do not)."""
    kind = (content_type or "").split(";")[0].strip().lower()
    return kind.startswith("text/") or kind.endswith(("json", "xml", "javascript")) or not kind


def bound_result(body: bytes, content_type: str | None) -> tuple[str | None, bool, int]:
    """(text kept, truncated?, full size) for a result body. Binary bodies keep no text."""
    size = len(body)
    if not textual(content_type):
        return None, size > 0, size
    cut = body[:MAX_RESULT_BYTES].decode("utf-8", errors="ignore")
    return cut, size > MAX_RESULT_BYTES, size


def bound_logs(lines: list[dict[str, Any]]) -> tuple[tuple[dict[str, Any], ...], bool]:
    """At most MAX_LOG_LINES lines and MAX_LOG_BYTES of message text; truncated?"""
    kept: list[dict[str, Any]] = []
    used = 0
    for line in lines:
        message = str(line.get("message", ""))
        size = len(message.encode("utf-8", errors="ignore"))
        if len(kept) >= MAX_LOG_LINES or used + size > MAX_LOG_BYTES:
            return tuple(kept), True
        used += size
        kept.append({"level": str(line.get("level", "log")), "message": message,
                     "ms": int(line.get("ms", 0))})
    return tuple(kept), False


def bound_calls(calls: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(json.dumps(c, default=str)) for c in calls[:MAX_CALLS])


def record_to_json(record: RunRecord) -> dict[str, Any]:
    """The record as plain JSON (snake_case, for spools and document stores)."""
    return asdict(record)


def record_from_json(data: Any) -> RunRecord:
    """The inverse of :func:`record_to_json`; unknown keys are ignored. Anything that is
    not a record's shape (a spool line from elsewhere, a damaged one) is a ValueError
    here rather than a store's failure later."""
    if not isinstance(data, dict):
        raise ValueError("a run record is a JSON object")
    known = {f.name for f in fields(RunRecord)}
    values = {k: v for k, v in data.items() if k in known}
    caller = data.get("caller") or {}
    if not isinstance(caller, dict):
        raise ValueError("caller is not an object")
    values["caller"] = Caller(**{k: v for k, v in caller.items()
                                 if k in ("kind", "id", "name", "user_class")})
    values["logs"] = tuple(values.get("logs") or ())
    values["calls"] = tuple(values.get("calls") or ())
    record = RunRecord(**values)  # a missing field is a TypeError
    _check_shape(record)
    return record


_TEXT_FIELDS = ("job_id", "job_name", "source", "node", "ref", "outcome", "method")
_OPTIONAL_TEXT_FIELDS = ("code", "message", "limit", "result", "result_type", "result_format",
                         "schedule_id", "schedule_name")
_OPTIONAL_INT_FIELDS = ("job_version", "http_status", "runtime_ms", "cpu_ms")


def _check_shape(record: RunRecord) -> None:
    """ValueError unless every field holds what the stores expect of it."""
    wrong = [name for name in _TEXT_FIELDS if not isinstance(getattr(record, name), str)]
    wrong += [name for name in _OPTIONAL_TEXT_FIELDS
              if not isinstance(getattr(record, name), str | None)]
    wrong += [name for name in _OPTIONAL_INT_FIELDS
              if not isinstance(getattr(record, name), int | None)]
    if not isinstance(record.result_size, int):
        wrong.append("result_size")
    if not (isinstance(record.started, int | float) and math.isfinite(record.started)):
        wrong.append("started")
    if record.ended is not None and not (isinstance(record.ended, int | float)
                                         and math.isfinite(record.ended)):
        wrong.append("ended")
    caller = record.caller
    if not isinstance(caller.kind, str) or not all(
            isinstance(v, str | None) for v in (caller.id, caller.name, caller.user_class)):
        wrong.append("caller")
    for name in ("logs", "calls"):
        if not all(isinstance(item, dict) for item in getattr(record, name)):
            wrong.append(name)
    if wrong:
        raise ValueError(f"not a run record: {', '.join(wrong)}")
