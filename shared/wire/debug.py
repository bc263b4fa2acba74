"""The step debugger's bodies: starting a debug run, a replay or a live attach, the
commands on a session and their answers, the ``stack`` and ``pause`` lines of its event
stream, and the paused values they describe.

A debug run's events are NDJSON lines (``shared.ndjson``); the ``stack`` line, sent
before each pause, is :class:`DebugStack` here, the ``pause`` line :class:`DebugPaused`,
each value in it (and in an ``expand`` answer's entries) a :class:`DebugValue`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["DebugAttach", "DebugAttached", "DebugCommand", "DebugCommandAnswer", "DebugDone",
           "DebugExpansion", "DebugPaused", "DebugReplayOptions", "DebugRunOptions",
           "DebugStack", "DebugStepped", "DebugValue", "StackFrame"]


@dataclass(frozen=True)
class DebugRunOptions:
    """``POST /debug/{name}``'s body: one simulated request of the saved job, or of the
    unsaved ``code``."""

    params: dict[str, Any] = field(default_factory=dict)
    code: str | None = None  # the editor's unsaved source; null: the saved job
    method: str = "POST"  # GET or POST, any case
    stepFromStart: bool = True  # false: run to the first breakpoint
    breakpoints: tuple[int, ...] = ()  # line numbers, from 1
    pauseOnException: bool = False  # park where an exception leaving the job is thrown


@dataclass(frozen=True)
class DebugReplayOptions:
    """``POST /debug/replay/{run_id}``'s body: how to step; the run's parameters and
    method are the recorded ones."""

    stepFromStart: bool = True
    breakpoints: tuple[int, ...] = ()
    pauseOnException: bool = False


@dataclass(frozen=True)
class DebugAttach:
    """``POST /debug/{name}/attach``'s body: how each of the tab's requests starts."""

    stepFromStart: bool = True
    pauseOnException: bool = False


@dataclass(frozen=True)
class DebugAttached:
    """The live session opened, and the hub-relative URL of the page it drives."""

    session: str
    url: str


@dataclass(frozen=True)
class DebugCommand:
    """``POST /debug-session/{id}/command``'s body. ``config`` changes the fields given
    (a field left out, or null, stays as it is); ``expand`` needs ``handle``."""

    command: str  # step, into, over, out, continue, stop, config, detach or expand
    stepFromStart: bool | None = None
    breakpoints: tuple[int, ...] | None = None
    pauseOnException: bool | None = None
    handle: int | None = None  # a value's handle from the current pause


@dataclass(frozen=True)
class DebugStepped:
    """A step, continue or detach: whether a parked run was resumed by it."""

    success: bool
    resumed: bool


@dataclass(frozen=True)
class DebugDone:
    """A ``config`` or ``stop`` was done."""

    success: bool


@dataclass(frozen=True)
class DebugExpansion:
    """``expand``: one more level of a paused value, or why it cannot be shown."""

    handle: int
    entries: dict[str, Any]
    more: int  # entries left out
    error: str | None


# What a command answers, by command: its answer is exactly one of these.
DebugCommandAnswer = DebugStepped | DebugDone | DebugExpansion


@dataclass(frozen=True)
class StackFrame:
    """One async function on the way to a pause, at the line it is at."""

    name: str
    line: int
    column: int


@dataclass(frozen=True)
class DebugStack:
    """The stream's ``stack`` line, just before each pause: the chain of async calls
    that led to it, innermost first; ``depth`` is the runtime's frame depth."""

    frames: tuple[StackFrame, ...]
    depth: int
    type: Literal["stack"] = "stack"


@dataclass(frozen=True)
class DebugValue:
    """A paused value as the hub's debug runtime describes it (``describe`` in
    hub/engine/js/debug_runtime.js). ``type`` is the JavaScript one (string, number,
    boolean, null, undefined, bigint, symbol, function, array, object), ``tdz`` for a
    ``let``/``const`` not yet initialised, ``group`` for the job globals (their values
    inline in ``entries``) or ``error`` when the scope could not be read. An array or
    object is not sent in full: its ``handle`` opens one level with ``expand``, good
    during the pause that gave it."""

    type: str
    # A plain value; a function's and a bigint's text; an error object's message.
    value: str | bool | int | float | None = None
    truncated: int | None = None  # a string cut to its first 200 characters: its length
    length: int | None = None  # an array's
    className: str | None = None  # an object's constructor name
    size: int | None = None  # an object's own keys
    handle: int | None = None  # an array or object: what ``expand`` takes
    entries: dict[str, DebugValue] | None = None  # a group's values


@dataclass(frozen=True)
class DebugPaused:
    """The stream's ``pause`` line: the run is parked before ``line``; ``vars`` are the
    names in scope (``<exception>`` first when an exception is leaving the job, the job
    globals as one ``<globals>`` group)."""

    line: int
    column: int
    reason: str = "step"  # start | step | breakpoint | exception
    vars: dict[str, DebugValue] = field(default_factory=dict)
    type: Literal["pause"] = "pause"
