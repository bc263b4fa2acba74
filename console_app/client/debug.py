"""The hub's step debugger, as typed calls (README: *The step debugger*).

A debug run or a replay is one NDJSON stream: a ``DebugStart`` (its session, source
and pausable lines), ``LogLine``s and ``DebugPause``s as they happen, then the
outcome like any run (``MetaData`` + ``Payload``, or a ``Failure``). The run is driven
by commands on its session. Before each pause comes a ``stack`` line (the async
call chain), read here as :class:`DebugStack`. A live attach opens a session for a
page job; the tab's requests then show up on the session's events stream. Every call blocks: the GUI
makes them through ``session.tasks``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from console_app.client.connection import API, CancelToken, HubConnection
from shared.ndjson import DebugExpanded, StreamEvent, UnknownLine

__all__ = [
    "Attached",
    "DebugStack",
    "Frame",
    "attach",
    "command",
    "configure",
    "expand",
    "replay",
    "session_events",
    "start",
]

COMMANDS = ("step", "into", "over", "out", "continue", "stop", "detach")


@dataclass(frozen=True)
class Frame:
    """One async function on the way to a pause, at the line it is at."""

    name: str
    line: int
    column: int = 0


@dataclass(frozen=True)
class DebugStack:
    """The call chain of the pause that follows, innermost first."""

    frames: list[Frame] = field(default_factory=list)
    depth: int = 0


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _stack(raw: dict[str, Any]) -> DebugStack:
    frames = [Frame(str(f.get("name", "")), _number(f.get("line")), _number(f.get("column")))
              for f in raw.get("frames") or [] if isinstance(f, dict)]
    return DebugStack(frames, _number(raw.get("depth")))


def _events(items: Iterator[StreamEvent]) -> Iterator[StreamEvent | DebugStack]:
    """The stream's events, its ``stack`` lines made :class:`DebugStack`s."""
    for event in items:
        if isinstance(event, UnknownLine) and event.raw.get("type") == "stack":
            yield _stack(event.raw)
        else:
            yield event


@dataclass(frozen=True)
class Attached:
    """A live session on a page job; ``url`` (hub-relative) is the tagged page."""

    session: str
    url: str


def _options(step_from_start: bool, breakpoints: Iterable[int],
             pause_on_exception: bool) -> dict[str, Any]:
    return {"stepFromStart": step_from_start, "breakpoints": sorted(set(breakpoints)),
            "pauseOnException": pause_on_exception}


def start(conn: HubConnection, name: str, cancel: CancelToken, *,
          params: dict[str, Any] | None = None, code: str | None = None,
          step_from_start: bool = True, breakpoints: Iterable[int] = (),
          pause_on_exception: bool = False,
          method: str = "POST") -> Iterator[StreamEvent | DebugStack]:
    """One simulated request of ``name`` (or of the unsaved ``code``) under the debugger."""
    body = {"params": params or {}, "method": method,
            **_options(step_from_start, breakpoints, pause_on_exception)}
    if code is not None:
        body["code"] = code
    return _events(conn.stream("POST", f"{API}/debug/{name}", cancel, json=body))


def replay(conn: HubConnection, run_id: str, cancel: CancelToken, *,
           step_from_start: bool = True, breakpoints: Iterable[int] = (),
           pause_on_exception: bool = False) -> Iterator[StreamEvent | DebugStack]:
    """A recorded run again under the debugger, its calls answered from the recording."""
    return _events(conn.stream(
        "POST", f"{API}/debug/replay/{run_id}", cancel,
        json=_options(step_from_start, breakpoints, pause_on_exception)))


def command(conn: HubConnection, session: str, name: str) -> dict[str, Any]:
    """``step`` (= ``into``), ``over``, ``out``, ``continue``, ``stop`` or ``detach``."""
    if name not in COMMANDS:
        raise ValueError(f"not a debugger command: {name}")
    answer: dict[str, Any] = conn.post(f"{API}/debug-session/{session}/command",
                                       json={"command": name})
    return answer


def configure(conn: HubConnection, session: str, *, breakpoints: Iterable[int] | None = None,
              step_from_start: bool | None = None,
              pause_on_exception: bool | None = None) -> dict[str, Any]:
    """Change a running session's breakpoints, stepping or exception pauses (any time)."""
    body: dict[str, Any] = {"command": "config"}
    if breakpoints is not None:
        body["breakpoints"] = sorted(set(breakpoints))
    if step_from_start is not None:
        body["stepFromStart"] = step_from_start
    if pause_on_exception is not None:
        body["pauseOnException"] = pause_on_exception
    answer: dict[str, Any] = conn.post(f"{API}/debug-session/{session}/command", json=body)
    return answer


def expand(conn: HubConnection, session: str, handle: int) -> DebugExpanded:
    """One more level of a value from the current pause (a Conflict when not paused)."""
    got = conn.post(f"{API}/debug-session/{session}/command",
                    json={"command": "expand", "handle": handle})
    return DebugExpanded(int(got.get("handle", handle)), dict(got.get("entries") or {}),
                         int(got.get("more") or 0), got.get("error"))


def attach(conn: HubConnection, name: str, *, step_from_start: bool = True,
           pause_on_exception: bool = False) -> Attached:
    """Open a live session on page job ``name``."""
    got = conn.post(f"{API}/debug/{name}/attach", json={
        "stepFromStart": step_from_start, "pauseOnException": pause_on_exception})
    return Attached(str(got["session"]), str(got["url"]))


def session_events(conn: HubConnection, session: str,
                   cancel: CancelToken) -> Iterator[StreamEvent | DebugStack]:
    """An attached session's events (request, stack, pause, log, answer) until it ends."""
    return _events(conn.stream("GET", f"{API}/debug-session/{session}/events", cancel))

