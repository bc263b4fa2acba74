"""The hub's step debugger, as typed calls (README: *The step debugger*).

A debug run or a replay is one NDJSON stream: a ``DebugStart`` (its session, source
and pausable lines), ``LogLine``s and ``DebugPause``s as they happen, then the
outcome like any run (``MetaData`` + ``Payload``, or a ``Failure``). The run is driven
by commands on its session. Before each pause comes a ``stack`` line (the async
call chain), read here as the wire's :class:`~shared.wire.debug.DebugStack`; each
pause as its :class:`~shared.wire.debug.DebugPaused`, its values (and those ``expand`` answers) as
:class:`~shared.wire.debug.DebugValue`s, once, where they arrive. A live attach opens a
session for a page job; the tab's requests then show up on the session's events stream.
Every call blocks: the GUI makes them through ``session.tasks``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from console_app.client.connection import API, CancelToken, HubConnection
from console_app.client.errors import NotAHub
from shared import wire
from shared.ndjson import DebugPause, StreamEvent, UnknownLine
from shared.wire import debug as wire_debug
from shared.wire.debug import DebugPaused, DebugStack, DebugValue

__all__ = [
    "Attached",
    "DebugEvent",
    "Expansion",
    "attach",
    "command",
    "configure",
    "expand",
    "replay",
    "session_events",
    "start",
]

T = TypeVar("T")
COMMANDS = ("step", "into", "over", "out", "continue", "stop", "detach")
# A live session on a page job; ``url`` (hub-relative) is the tagged page.
Attached = wire_debug.DebugAttached


@dataclass(frozen=True)
class Expansion:
    """``expand``'s answer: one more level of a paused value, or why it cannot be shown."""

    handle: int
    entries: dict[str, DebugValue]
    more: int  # entries left out
    error: str | None


# What a debug stream yields: its lines, the stack and pause ones typed here.
DebugEvent = StreamEvent | DebugStack | DebugPaused


def _values(entries: dict[str, Any], where: str) -> dict[str, DebugValue]:
    """The hub's value descriptions as DebugValues; NotAHub when one is of another shape
    (the debugger would show it wrong)."""
    try:
        return wire.decode(dict[str, DebugValue], entries)
    except wire.ShapeError as err:
        raise NotAHub(f"{where} describes a value in a shape this console does not know "
                      f"({err})") from None


def _pause(event: DebugPause) -> DebugPaused:
    vars_ = _values(event.vars, f"the pause at line {event.line}")
    return DebugPaused(event.line, event.column, event.reason, vars_)


def _events(items: Iterator[StreamEvent]) -> Iterator[DebugEvent]:
    """The stream's events, its ``stack`` lines made :class:`DebugStack`s (a stack line
    of another shape is passed on unknown, as any line this console cannot read) and
    its pauses :class:`DebugPaused` (a value of another shape ends the stream: NotAHub)."""
    for event in items:
        if isinstance(event, DebugPause):
            yield _pause(event)
        elif isinstance(event, UnknownLine) and event.raw.get("type") == "stack":
            try:
                yield wire.decode(DebugStack, event.raw)
            except wire.ShapeError:
                yield event
        else:
            yield event


def _options(step_from_start: bool, breakpoints: Iterable[int],
             pause_on_exception: bool) -> wire_debug.DebugReplayOptions:
    return wire_debug.DebugReplayOptions(step_from_start, tuple(sorted(set(breakpoints))),
                                         pause_on_exception)


def start(conn: HubConnection, name: str, cancel: CancelToken, *,
          params: dict[str, Any] | None = None, code: str | None = None,
          step_from_start: bool = True, breakpoints: Iterable[int] = (),
          pause_on_exception: bool = False,
          method: str = "POST") -> Iterator[DebugEvent]:
    """One simulated request of ``name`` (or of the unsaved ``code``) under the debugger."""
    how = _options(step_from_start, breakpoints, pause_on_exception)
    body = wire_debug.DebugRunOptions(params or {}, code, method, how.stepFromStart,
                                      how.breakpoints, how.pauseOnException)
    sent = wire.encode(body, drop_none=True)  # no code: the saved job
    return _events(conn.stream("POST", f"{API}/debug/{name}", cancel, json=sent))


def replay(conn: HubConnection, run_id: str, cancel: CancelToken, *,
           step_from_start: bool = True, breakpoints: Iterable[int] = (),
           pause_on_exception: bool = False) -> Iterator[DebugEvent]:
    """A recorded run again under the debugger, its calls answered from the recording."""
    body = wire.encode(_options(step_from_start, breakpoints, pause_on_exception))
    return _events(conn.stream("POST", f"{API}/debug/replay/{run_id}", cancel, json=body))


def _command(conn: HubConnection, session: str, given: wire_debug.DebugCommand,
             answer: type[T]) -> T:
    sent = wire.encode(given, drop_none=True)  # a field left out stays as it is
    return conn.typed(answer, "POST", f"{API}/debug-session/{session}/command", json=sent)


def command(conn: HubConnection, session: str,
            name: str) -> wire_debug.DebugStepped | wire_debug.DebugDone:
    """``step`` (= ``into``), ``over``, ``out``, ``continue``, ``stop`` or ``detach``:
    whether a parked run was resumed by it (a stop answers only that it was done)."""
    if name not in COMMANDS:
        raise ValueError(f"not a debugger command: {name}")
    given = wire_debug.DebugCommand(name)
    if name == "stop":
        return _command(conn, session, given, wire_debug.DebugDone)
    return _command(conn, session, given, wire_debug.DebugStepped)


def configure(conn: HubConnection, session: str, *, breakpoints: Iterable[int] | None = None,
              step_from_start: bool | None = None,
              pause_on_exception: bool | None = None) -> wire_debug.DebugDone:
    """Change a running session's breakpoints, stepping or exception pauses (any time)."""
    lines = None if breakpoints is None else tuple(sorted(set(breakpoints)))
    given = wire_debug.DebugCommand("config", step_from_start, lines, pause_on_exception)
    return _command(conn, session, given, wire_debug.DebugDone)


def expand(conn: HubConnection, session: str, handle: int) -> Expansion:
    """One more level of a value from the current pause (a Conflict when not paused)."""
    got = _command(conn, session, wire_debug.DebugCommand("expand", handle=handle),
                   wire_debug.DebugExpansion)
    return Expansion(got.handle, _values(got.entries, f"expand {handle}"), got.more,
                     got.error)


def attach(conn: HubConnection, name: str, *, step_from_start: bool = True,
           pause_on_exception: bool = False) -> Attached:
    """Open a live session on page job ``name``."""
    body = wire.encode(wire_debug.DebugAttach(step_from_start, pause_on_exception))
    return conn.typed(wire_debug.DebugAttached, "POST", f"{API}/debug/{name}/attach",
                      json=body)


def session_events(conn: HubConnection, session: str,
                   cancel: CancelToken) -> Iterator[DebugEvent]:
    """An attached session's events (request, stack, pause, log, answer) until it ends."""
    return _events(conn.stream("GET", f"{API}/debug-session/{session}/events", cancel))
