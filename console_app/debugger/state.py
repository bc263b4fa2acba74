"""What a debugger window knows, as plain Python: no Qt here.

The hub describes each variable as a :class:`~shared.wire.debug.DebugValue`: a type and
value (``tdz`` for a ``let``/``const`` not yet initialised, ``truncated`` with the full
length for a long string) or, for objects and arrays, a ``handle`` that ``expand`` opens
one level at a time. Handles
are only good during the pause that gave them, so the tree is rebuilt at each pause.
The job globals a job names come as one ``group`` (``<globals>``) with its entries
inline, shown as a node of their own under the job's names; an exception leaving the
job comes first, as ``<exception>``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum

from shared.ndjson import DebugAnswer, DebugRequest, Failure, MetaData
from shared.wire.debug import DebugValue, StackFrame

__all__ = ["GLOBALS", "DebugState", "Phase", "RequestEntry", "VarNode", "in_scope",
           "reason_text", "value_text"]

GLOBALS = "<globals>"
GLOBALS_LABEL = "job globals"
# Why the run is parked, as the status line says it.
REASONS = {"start": "on entry", "step": "after a step", "breakpoint": "at a breakpoint",
           "exception": "an uncaught exception"}


def reason_text(reason: str) -> str:
    return REASONS.get(reason, reason)


class Phase(Enum):
    CONNECTING = "connecting"   # the stream or the attach call is on its way
    WAITING = "waiting"         # live: attached, no request yet (or between requests)
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"       # the run ended (with a result or a failure)
    CLOSED = "closed"           # the stream ended or failed


def value_text(desc: DebugValue) -> str:
    """How a described value reads in the Value column."""
    kind = desc.type
    if kind == "tdz":  # the temporal dead zone, in words a job's author reads
        return "<not initialised yet>"
    if kind == "undefined":
        return "undefined"
    if kind == "array":
        return f"Array({desc.length or 0})"
    if kind == "group":
        return ", ".join(sorted(desc.entries or {}))
    if kind == "object":
        name = desc.className or "Object"
        if isinstance(desc.value, str):  # an error: its message says the most
            return f"{name}: {desc.value}"
        return f"{name} {{{desc.size or 0}}}"
    value = desc.value
    if kind == "string":
        text = json.dumps(value, ensure_ascii=False)
        if desc.truncated is not None:  # the hub cut it: say so, with its real length
            return f"{text[:-1]}…\" (truncated, {desc.truncated} chars)"
        return text
    if value is None:
        return "null" if kind == "null" else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(eq=False)
class VarNode:
    """One row of the variables tree. ``children`` is None until expanded."""

    name: str
    desc: DebugValue
    parent: VarNode | None = None
    children: list[VarNode] | None = None
    loading: bool = False
    more: int = 0              # entries the hub left out (it shows 50 a level)
    error: str | None = None

    @property
    def handle(self) -> int | None:
        return self.desc.handle

    @property
    def expandable(self) -> bool:
        return self.handle is not None and self._size() > 0

    def _size(self) -> int:
        desc = self.desc
        return desc.length if desc.length is not None else 1 if desc.size is None else desc.size

    @property
    def type_text(self) -> str:
        return "" if self.is_group else self.desc.type

    @property
    def is_group(self) -> bool:
        return self.desc.type == "group"

    @property
    def label(self) -> str:
        """The Name column: the globals' node says what it holds."""
        return GLOBALS_LABEL if self.is_group else self.name

    def path(self) -> tuple[str, ...]:
        """Names from the top of the tree down to this node (kept across pauses)."""
        names: list[str] = []
        node: VarNode | None = self
        while node is not None:
            names.append(node.name)
            node = node.parent
        return tuple(reversed(names))

    @property
    def value_text(self) -> str:
        if self.error:
            return f"<{self.error}>"
        return value_text(self.desc)

    @property
    def is_tdz(self) -> bool:
        return self.desc.type == "tdz"

    @property
    def is_truncated(self) -> bool:
        return self.desc.truncated is not None

    def fill(self, entries: dict[str, DebugValue], more: int,
             error: str | None) -> list[VarNode]:
        """The hub's answer to ``expand``: this node's children (and what was left out)."""
        self.loading, self.error, self.more = False, error, more
        self.children = [VarNode(name, value, self) for name, value in entries.items()]
        if more > 0:
            self.children.append(VarNode(f"… {more} more", DebugValue("more"), self))
        return self.children


def scope_nodes(vars_: dict[str, DebugValue]) -> list[VarNode]:
    """The top level of the tree for one pause: the job's names, then its globals'
    node (its children already there: the hub sends them inline)."""
    nodes = [VarNode(name, value) for name, value in vars_.items() if name != GLOBALS]
    group = vars_.get(GLOBALS)
    if group is not None and group.type == "group":
        node = VarNode(GLOBALS, group)
        node.fill(dict(group.entries or {}), 0, None)
        nodes.append(node)
    return nodes


def in_scope(vars_: dict[str, DebugValue], name: str) -> DebugValue | None:
    """What ``name`` holds in a pause's ``vars_``: a job name first, then a job global."""
    found = vars_.get(name) if name != GLOBALS else None
    group = vars_.get(GLOBALS)
    if found is None and group is not None and group.entries:
        found = group.entries.get(name)
    return found


@dataclass
class RequestEntry:
    """A browser request under a live session, and its answer once it has one."""

    job_id: str
    method: str
    path: str
    status: int | None = None
    success: bool | None = None
    code: str | None = None

    @property
    def answer_text(self) -> str:
        if self.status is None:
            return "waiting…"
        return f"{self.status}" + ("" if self.success else f" {self.code or 'failed'}")


@dataclass
class DebugState:
    """One window's session: where it is paused, its requests, how it ended (what it
    printed is in the console view only)."""

    live: bool = False
    phase: Phase = Phase.CONNECTING
    session: str = ""
    job_id: str = ""
    line: int | None = None
    reason: str = ""
    breakpoints: set[int] = field(default_factory=set)
    stack: list[StackFrame] = field(default_factory=list)  # the current pause's call chain
    vars: dict[str, DebugValue] = field(default_factory=dict)  # the current pause's names
    requests: list[RequestEntry] = field(default_factory=list)
    meta: MetaData | None = None
    result: bytes | None = None
    failure: Failure | None = None

    def paused(self, line: int, reason: str,
               vars_: dict[str, DebugValue] | None = None) -> None:
        self.phase, self.line, self.reason = Phase.PAUSED, line, reason
        self.vars = dict(vars_ or {})

    def resumed(self) -> None:
        self.phase, self.line, self.stack, self.vars = Phase.RUNNING, None, [], {}

    def lookup(self, name: str) -> DebugValue | None:
        """What ``name`` holds at this pause (a job name first, then a job global)."""
        if self.phase != Phase.PAUSED or name == GLOBALS:
            return None
        return in_scope(self.vars, name)

    def status_text(self) -> str:
        """The status line: the phase, where and why it is paused."""
        phase = self.phase
        if phase == Phase.PAUSED:
            return f"Paused at line {self.line}, {reason_text(self.reason)}"
        if phase == Phase.FINISHED and self.failure is not None:
            return "Failed"
        if phase == Phase.WAITING:
            return "Waiting — open the page; its requests stop here"
        return str(phase.value).capitalize()

    def request(self, event: DebugRequest) -> RequestEntry:
        """A live request arrived; its entry, for the requests model to append."""
        self.job_id, self.phase = event.jobId, Phase.RUNNING
        return RequestEntry(event.jobId, event.method, event.path)

    def answered(self, event: DebugAnswer) -> int | None:
        """Record an answer; the row of its request (None if it was never seen)."""
        self.phase, self.line = Phase.WAITING, None
        for row, entry in enumerate(self.requests):
            if entry.job_id == event.jobId:
                entry.status, entry.success, entry.code = (event.status, event.success,
                                                           event.code)
                return row
        return None

    def toggle_breakpoint(self, line: int) -> set[int]:
        self.breakpoints ^= {line}
        return set(self.breakpoints)

    def outcome_text(self) -> str:
        """The run's end in one line: result type and status, or the failure's code."""
        if self.failure is not None:
            line = self.failure.line
            # The hub's message may name the line already ("... at line 19 (line 19)").
            where = f" (line {line})" if line and f"line {line}" not in self.failure.error \
                else ""
            return f"Failed {self.failure.code}: {self.failure.error}{where}"
        if self.meta is not None:
            return (f"Finished: {self.meta.type} result, HTTP {self.meta.status}, "
                    f"{self.meta.runtime} ms")
        return ""

    def result_text(self) -> str:
        """The result as text: JSON pretty-printed, other text as is, files by size."""
        if self.result is None or self.meta is None:
            return ""
        if self.meta.type == "json":
            try:
                return json.dumps(json.loads(self.result), indent=2, ensure_ascii=False)
            except ValueError:
                pass
        try:
            return self.result.decode("utf-8")
        except UnicodeDecodeError:
            return f"<{len(self.result)} bytes of {self.meta.format}>"
