"""The hub's step debugger, as typed calls (README: *The step debugger*).

A debug run or a replay is one NDJSON stream: a ``DebugStart`` (its session, source
and pausable lines), ``LogLine``s and ``DebugPause``s as they happen, then the
outcome like any run (``MetaData`` + ``Payload``, or a ``Failure``). The run is driven
by commands on its session. A live attach opens a session for a page job; the tab's
requests then show up on the session's events stream. Every call blocks: the GUI
makes them through ``session.tasks``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from console_app.client.connection import API, CancelToken, HubConnection
from shared.ndjson import DebugExpanded, StreamEvent

__all__ = [
    "Attached",
    "attach",
    "command",
    "configure",
    "expand",
    "replay",
    "session_events",
    "start",
]

COMMANDS = ("step", "continue", "stop", "detach")


@dataclass(frozen=True)
class Attached:
    """A live session on a page job; ``url`` (hub-relative) is the tagged page."""

    session: str
    url: str


def _options(step_from_start: bool, breakpoints: Iterable[int]) -> dict[str, Any]:
    return {"stepFromStart": step_from_start, "breakpoints": sorted(set(breakpoints))}


def start(conn: HubConnection, name: str, cancel: CancelToken, *,
          params: dict[str, Any] | None = None, code: str | None = None,
          step_from_start: bool = True, breakpoints: Iterable[int] = (),
          method: str = "POST") -> Iterator[StreamEvent]:
    """One simulated request of ``name`` (or of the unsaved ``code``) under the debugger."""
    body = {"params": params or {}, "method": method, **_options(step_from_start, breakpoints)}
    if code is not None:
        body["code"] = code
    return conn.stream("POST", f"{API}/debug/{name}", cancel, json=body)


def replay(conn: HubConnection, run_id: str, cancel: CancelToken, *,
           step_from_start: bool = True,
           breakpoints: Iterable[int] = ()) -> Iterator[StreamEvent]:
    """A recorded run again under the debugger, its calls answered from the recording."""
    return conn.stream("POST", f"{API}/debug/replay/{run_id}", cancel,
                       json=_options(step_from_start, breakpoints))


def command(conn: HubConnection, session: str, name: str) -> dict[str, Any]:
    """``step``, ``continue``, ``stop`` or ``detach``; the hub's answer."""
    if name not in COMMANDS:
        raise ValueError(f"not a debugger command: {name}")
    answer: dict[str, Any] = conn.post(f"{API}/debug-session/{session}/command",
                                       json={"command": name})
    return answer


def configure(conn: HubConnection, session: str, *, breakpoints: Iterable[int] | None = None,
              step_from_start: bool | None = None) -> dict[str, Any]:
    """Change a running session's line breakpoints or stepping (any time, paused or not)."""
    body: dict[str, Any] = {"command": "config"}
    if breakpoints is not None:
        body["breakpoints"] = sorted(set(breakpoints))
    if step_from_start is not None:
        body["stepFromStart"] = step_from_start
    answer: dict[str, Any] = conn.post(f"{API}/debug-session/{session}/command", json=body)
    return answer


def expand(conn: HubConnection, session: str, handle: int) -> DebugExpanded:
    """One more level of a value from the current pause (a Conflict when not paused)."""
    got = conn.post(f"{API}/debug-session/{session}/command",
                    json={"command": "expand", "handle": handle})
    return DebugExpanded(int(got.get("handle", handle)), dict(got.get("entries") or {}),
                         int(got.get("more") or 0), got.get("error"))


def attach(conn: HubConnection, name: str, *, step_from_start: bool = True) -> Attached:
    """Open a live session on page job ``name``."""
    got = conn.post(f"{API}/debug/{name}/attach", json={"stepFromStart": step_from_start})
    return Attached(str(got["session"]), str(got["url"]))


def session_events(conn: HubConnection, session: str,
                   cancel: CancelToken) -> Iterator[StreamEvent]:
    """An attached session's events (request, pause, log, answer) until it ends."""
    return conn.stream("GET", f"{API}/debug-session/{session}/events", cancel)

