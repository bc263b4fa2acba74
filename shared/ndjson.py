"""The NDJSON lines a run streams to a client, one JSON object per line.

A stream is: zero or more event lines tagged by ``type`` (``log``; and for a debug
run ``debug``, ``pause`` and ``expanded``; an attached session's event stream adds
``request`` and ``answer``), then either one metadata line (``isMetaData: true``)
followed by the result payload, or one failure line (``success: false``).

The payload after the metadata line is the rest of the stream, as is: a JSON
document for a JSON result, raw bytes for a file. Readers skip lines they do
not know, so a newer hub never breaks an older client, and lines they cannot
decode. A line is always UTF-8: a lone surrogate in its text is written as U+FFFD.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from shared.text import clean_text

__all__ = [
    "DebugAnswer",
    "DebugExpanded",
    "DebugPause",
    "DebugRequest",
    "DebugStart",
    "Failure",
    "LogLine",
    "MetaData",
    "Payload",
    "StreamEvent",
    "UnknownLine",
    "encode_line",
    "parse_line",
    "read_stream",
]

LOG_LEVELS = ("log", "info", "debug", "warn", "error")


@dataclass(frozen=True)
class LogLine:
    """One console call: ``t`` is milliseconds since the run started."""

    level: str
    message: str
    t: int
    type: str = field(default="log", init=False)


@dataclass(frozen=True)
class MetaData:
    """Precedes the payload. ``type`` here is the result type (json, html, csv, ...)."""

    jobId: str = ""
    type: str = "json"
    format: str = "application/json"
    status: int = 200
    contentLength: int = 0
    runtime: int = 0
    success: bool = True
    isMetaData: bool = True
    filename: str | None = None


@dataclass(frozen=True)
class Failure:
    """A run, or the request, failed; the stream ends here."""

    error: str = "unknown error"
    code: str = "SYS-500"
    ref: str | None = None
    runtime: int | None = None
    limit: str | None = None
    line: int | None = None
    column: int | None = None
    retry_after: int | None = None
    success: bool = False


@dataclass(frozen=True)
class Payload:
    """What follows the metadata line, undecoded."""

    data: bytes


@dataclass(frozen=True)
class DebugStart:
    """A debug run began: its session (for commands), source and pausable lines."""

    session: str
    jobId: str
    source: str
    pausable: list[int] = field(default_factory=list)
    type: str = field(default="debug", init=False)


@dataclass(frozen=True)
class DebugPause:
    """The run is parked before ``line``; ``vars`` maps each name in scope to its
    description (type, value or a ``handle`` to expand)."""

    line: int
    column: int
    reason: str = "step"          # step | breakpoint
    vars: dict[str, Any] = field(default_factory=dict)
    type: str = field(default="pause", init=False)


@dataclass(frozen=True)
class DebugExpanded:
    """One more level of a paused value (``entries``), or why it cannot be shown."""

    handle: int
    entries: dict[str, Any] = field(default_factory=dict)
    more: int = 0
    error: str | None = None
    type: str = field(default="expanded", init=False)


@dataclass(frozen=True)
class DebugRequest:
    """An attached debug session: a tagged browser request arrived and runs now."""

    jobId: str
    method: str
    path: str
    type: str = field(default="request", init=False)


@dataclass(frozen=True)
class DebugAnswer:
    """An attached debug session: the tagged request was answered."""

    jobId: str
    status: int
    success: bool
    code: str | None = None
    type: str = field(default="answer", init=False)


_DEBUG_TYPES: dict[str, type[Any]] = {
    "debug": DebugStart, "pause": DebugPause, "expanded": DebugExpanded,
    "request": DebugRequest, "answer": DebugAnswer}
DebugEvent = DebugStart | DebugPause | DebugExpanded | DebugRequest | DebugAnswer


@dataclass(frozen=True)
class UnknownLine:
    """A tagged line this reader does not know; kept so callers can log it."""

    raw: dict[str, Any]


StreamEvent = LogLine | MetaData | Failure | Payload | DebugEvent | UnknownLine


def encode_line(event: LogLine | MetaData | Failure | DebugEvent) -> bytes:
    """One event as a JSON line (None fields left out), newline-terminated."""
    if isinstance(event, LogLine):  # the most frequent line: no asdict() deep copy
        obj = {"type": "log", "level": event.level, "message": event.message, "t": event.t}
    else:
        obj = {k: v for k, v in asdict(event).items() if v is not None}
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate (a JavaScript string may hold one)
        return clean_text(text).encode() + b"\n"


def _pick(cls: type[Any], obj: dict[str, Any]) -> Any:
    names = {f for f in cls.__dataclass_fields__ if cls.__dataclass_fields__[f].init}
    return cls(**{k: v for k, v in obj.items() if k in names})


def parse_line(line: bytes | str) -> StreamEvent | None:
    """Classify one line before the payload; None for blank or unreadable lines."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested beyond decoding
        return None
    if not isinstance(obj, dict):
        return None
    try:
        if obj.get("isMetaData") is True:
            return _pick(MetaData, obj)  # type: ignore[no-any-return]
        if obj.get("success") is False and "code" in obj:
            return _pick(Failure, obj)  # type: ignore[no-any-return]
        if obj.get("type") == "log":
            return LogLine(str(obj.get("level", "log")), str(obj.get("message", "")),
                           int(obj.get("t", 0)))
        if obj.get("type") in _DEBUG_TYPES:
            return _pick(_DEBUG_TYPES[str(obj["type"])], obj)  # type: ignore[no-any-return]
    except (TypeError, ValueError, OverflowError):  # e.g. a "t" that is no integer
        return UnknownLine(obj)
    return UnknownLine(obj)


def read_stream(chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
    """Events from a byte stream; after a metadata line, the rest is one Payload."""
    buffer = b""
    it = iter(chunks)
    for chunk in it:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            event = parse_line(line) if line.strip() else None
            if event is None:
                continue
            yield event
            if isinstance(event, MetaData):
                yield Payload(buffer + b"".join(it))
                return
            if isinstance(event, Failure):
                return
    if buffer.strip():
        event = parse_line(buffer)
        if event is not None:
            yield event
            if isinstance(event, MetaData):
                yield Payload(b"")  # a metadata line with nothing after it
