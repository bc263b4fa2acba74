"""Debug sessions: one debug run each, driven by its owner's commands.

The run's instrumented code calls the host before each statement (``debug.pause``);
the session decides whether to park there — stepping, a line breakpoint, or a
``breakpoint()``/``debugger`` — and if so sends a ``pause`` event and waits for a
command. While it waits the engine holds the run's runtime limit.

Commands: ``step`` or ``into`` (park at the next statement), ``over`` (the next
statement of this function or one that called it), ``out`` (the next statement of a
function that called this one), ``continue`` (run to the next breakpoint), ``stop``
(the run ends with JOB-001 "Stopped by the debugger at line N"), ``config``
(``stepFromStart``, ``breakpoints``, ``pauseOnException``), ``detach`` (run on with
no more pauses) and ``expand`` (one more level of a paused value). A session nobody has
driven for 10 minutes is swept: its run is stopped and the session forgotten.

Each pause says why (``start``: the first statement of a run that steps from the
start; ``step``; ``breakpoint``: a line breakpoint, ``debugger`` or ``breakpoint()``;
``exception``: an exception is leaving the job, paused where it was thrown) and is
preceded by a ``stack`` event: the chain of async calls that led to it, innermost
first. Over and out compare the runtime's frame depth.

A session belongs to the identity that started it (:func:`owner_key`): a user by id,
the system token as its own identity. Never by name: a user may be named ``system``, or
renamed, and must not drive a session that is not theirs.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hub.auth import Caller
from shared import wire
from shared.errors import BadRequest, Conflict, JobFailed, NotFound
from shared.ndjson import (
    DebugAnswer,
    DebugExpanded,
    DebugPause,
    DebugRequest,
    LogLine,
    encode_line,
)
from shared.text import clean_text
from shared.wire.debug import (
    DebugCommand,
    DebugCommandAnswer,
    DebugDone,
    DebugExpansion,
    DebugStack,
    DebugStepped,
    StackFrame,
)

__all__ = ["IDLE_LIMIT_S", "DebugSession", "DebugSessions", "DebugStack", "breakpoint_lines",
           "encode_event", "owner_key", "session_node"]

IDLE_LIMIT_S = 600.0
EXPAND_WAIT_S = 5.0
MAX_FRAMES = 100
STEPS = ("step", "into", "over", "out", "continue", "detach")


Event = LogLine | DebugPause | DebugExpanded | DebugRequest | DebugAnswer | DebugStack


def encode_event(event: Event) -> bytes:
    """One session event as an NDJSON line (a stack is a ``shared.wire`` shape, not a
    ``shared.ndjson`` line: a reader that does not know it sees an unknown line and
    goes on)."""
    if not isinstance(event, DebugStack):
        return encode_line(event)
    text = json.dumps(wire.encode(event), ensure_ascii=False, separators=(",", ":"))
    return clean_text(text).encode() + b"\n"


def _frames(raw: Any) -> tuple[StackFrame, ...]:
    """The runtime's stack, kept to its expected shape (it comes from the job's V8)."""
    if not isinstance(raw, list):
        return ()
    return tuple(StackFrame(str(item.get("name", ""))[:200], _int(item.get("line")),
                            _int(item.get("column")))
                 for item in raw[:MAX_FRAMES] if isinstance(item, dict))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def breakpoint_lines(lines: tuple[int, ...]) -> set[int]:
    """Line breakpoints as asked for; a line is a whole number from 1."""
    if not all(n > 0 for n in lines):
        raise BadRequest("'breakpoints' must be a list of line numbers")
    return set(lines)


def owner_key(caller: Caller) -> str:
    """The identity a debug session belongs to: the caller's kind and id (``user:7``,
    ``system:system``), which no display name can imitate."""
    return f"{caller.kind}:{caller.id}"


@dataclass
class DebugSession:
    id: str
    owner: str                           # owner_key() of who started it
    job_name: str
    stop_run: Callable[[str], None]      # ends the run with that message
    clock: Callable[[], float] = time.monotonic
    step_mode: bool = True
    breakpoints: set[int] = field(default_factory=set)
    step_depth: int | None = None        # over/out: pause only at this depth or less
    pause_on_exception: bool = False
    started: bool = False                # a pause happened in this run (or request)
    detached: bool = False
    attached: bool = False               # drives a page's real requests (attach)
    step_from_start: bool = True         # attach: each request starts in step mode
    job_id: str = ""
    events: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # detached or swept
    paused_at: int | None = None
    paused_depth: int = 0
    last_active: float = 0.0
    _reply: asyncio.Future[dict[str, Any]] | None = None
    _expansion: asyncio.Future[DebugExpanded] | None = None

    def __post_init__(self) -> None:
        self.last_active = self.clock()

    # -- the run's side (DebugHost) -------------------------------------------------

    async def call(self, op: str, args: Any) -> Any:
        if op != "debug.pause" or not isinstance(args, dict):
            raise JobFailed(f"'{op}' is not a debugger call")
        kind = str(args.get("kind", "step"))
        if kind == "expand":
            self._expanded(args)
        else:
            line, depth = _int(args.get("line")), _int(args.get("depth"))
            if not self._should_pause(kind, line, depth):
                return {}
            self._pause(kind, line, depth, args)
        self._reply = asyncio.get_running_loop().create_future()
        try:
            return await self._reply
        finally:
            self._reply = None

    def log(self, line: LogLine) -> None:
        self.events.put_nowait(line)

    def _should_pause(self, kind: str, line: int, depth: int) -> bool:
        if self.detached:
            return False
        if kind == "exception":
            return self.pause_on_exception
        if kind == "breakpoint" or line in self.breakpoints:
            return True
        # A runtime that sends no depth (0) pauses at every step.
        return self.step_mode and (self.step_depth is None or depth <= self.step_depth)

    def _reason(self, kind: str, line: int) -> str:
        if kind in ("exception", "breakpoint") or line in self.breakpoints:
            return "breakpoint" if kind == "step" else kind
        return "step" if self.started else "start"

    def _pause(self, kind: str, line: int, depth: int, args: dict[str, Any]) -> None:
        reason = self._reason(kind, line)
        self.paused_at, self.paused_depth, self.started = line, depth, True
        self.events.put_nowait(DebugStack(_frames(args.get("stack")), depth))
        self.events.put_nowait(DebugPause(line, _int(args.get("column")), reason,
                                          dict(args.get("vars") or {})))

    def _expanded(self, args: dict[str, Any]) -> None:
        shown = DebugExpanded(int(args.get("handle", 0)), dict(args.get("entries") or {}),
                              int(args.get("more") or 0), args.get("error"))
        self.events.put_nowait(shown)
        if self._expansion is not None and not self._expansion.done():
            self._expansion.set_result(shown)

    # -- the owner's side -----------------------------------------------------------

    async def command(self, given: DebugCommand) -> DebugCommandAnswer:
        self.last_active = self.clock()
        name = given.command
        if name == "config":
            self._configure(given)
            return DebugDone(True)
        if name == "expand":
            return await self._expand(given.handle)
        if name == "stop":
            message = f"Stopped by the debugger at line {self.paused_at or 0}"
            self.stop_run(message)
            self._resume({"stop": True, "message": message})
            return DebugDone(True)
        if name not in STEPS:
            raise BadRequest(f"'{name}' is not a debugger command: use step, into, over, out, "
                             "continue, stop, config, detach or expand")
        self.step_mode = name in ("step", "into", "over", "out")
        self.step_depth = {"over": self.paused_depth, "out": self.paused_depth - 1}.get(name)
        if name == "detach":
            self.detached, self.breakpoints = True, set()
            self.ended.set()
            if self.attached and self._reply is not None:  # the paused request ends
                self.stop_run("Detached by the debugger")
                self._resume({"stop": True, "message": "Detached by the debugger"})
                return DebugStepped(True, resumed=False)
        return DebugStepped(True, resumed=self._resume({}))

    def _configure(self, given: DebugCommand) -> None:
        """Change the fields given; the wire has checked their types, not their range."""
        if given.stepFromStart is not None:
            self.step_mode, self.step_depth = given.stepFromStart, None
            if self.attached:  # and for every request the tab makes from now on
                self.step_from_start = given.stepFromStart
        if given.breakpoints is not None:
            self.breakpoints = breakpoint_lines(given.breakpoints)
        if given.pauseOnException is not None:
            self.pause_on_exception = given.pauseOnException

    async def _expand(self, handle: int | None) -> DebugExpansion:
        if handle is None or handle < 1:
            raise BadRequest("'handle' must be a value handle from the current pause")
        if self._reply is None:
            raise Conflict("The run is not paused: values can be expanded only at a pause")
        self._expansion = asyncio.get_running_loop().create_future()
        self._resume({"expand": handle})
        try:
            shown = await asyncio.wait_for(self._expansion, EXPAND_WAIT_S)
        finally:
            self._expansion = None
        return DebugExpansion(shown.handle, shown.entries, shown.more, shown.error)

    def _resume(self, answer: dict[str, Any]) -> bool:
        if self._reply is None or self._reply.done():
            return False
        self._reply.set_result(answer)
        return True


def session_node(session_id: str) -> str | None:
    """The node that holds a session, read from its id (``dbg_<random>.<node, hex>``);
    None for an id that names none (an older form, or not a session id at all)."""
    _, dot, named = session_id.partition(".")
    if not dot or not session_id.startswith("dbg_") or len(named) > 512:
        return None
    try:
        return bytes.fromhex(named).decode("utf-8")
    except ValueError:
        return None


class DebugSessions:
    """The sessions of this node, by id; only their owner may drive them. An id names
    the node (:func:`session_node`) so that any node of a cluster can pass a request
    for it on (:mod:`hub.api.forwarding`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, node: str = "") -> None:
        self.clock = clock
        self._suffix = f".{node.encode().hex()}" if node else ""
        self._sessions: dict[str, DebugSession] = {}

    def open(self, owner: str, job_name: str, stop_run: Callable[[str], None],
             step_from_start: bool, breakpoints: set[int]) -> DebugSession:
        session = DebugSession(f"dbg_{os.urandom(8).hex()}{self._suffix}", owner, job_name,
                               stop_run, self.clock, step_from_start, breakpoints)
        self._sessions[session.id] = session
        return session

    def attach(self, owner: str, job_name: str, stop_run: Callable[[str], None],
               step_from_start: bool) -> DebugSession:
        session = self.open(owner, job_name, stop_run, step_from_start, set())
        session.attached, session.step_from_start = True, step_from_start
        return session

    def tagged(self, session_id: str, owner: str | None, job_name: str) -> DebugSession | None:
        """The attached session a browser request is tagged with, if it still drives
        this job for this owner; anything else (unknown, expired, another owner's,
        detached) is None, and the request runs normally."""
        session = self._sessions.get(session_id)
        if (session is None or not session.attached or session.detached
                or owner is None or session.owner != owner or session.job_name != job_name):
            return None
        session.last_active = self.clock()
        return session

    def get(self, session_id: str, owner: str) -> DebugSession:
        session = self._sessions.get(session_id)
        if session is None or session.owner != owner:
            raise NotFound("No such debug session (it ended, or is another owner's)")
        return session

    def close(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def sweep(self) -> int:
        """Stop and forget sessions left alone for IDLE_LIMIT_S; how many."""
        now = self.clock()
        stale = [s for s in self._sessions.values() if now - s.last_active > IDLE_LIMIT_S]
        for session in stale:
            session.stop_run("The debug session was left alone for 10 minutes")
            session._resume({"stop": True, "message": "The debug session timed out"})
            session.ended.set()
            self.close(session.id)
        return len(stale)
