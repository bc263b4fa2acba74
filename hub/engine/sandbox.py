"""Running a job script in a V8 context, driven from Python (inside a worker process),
and what fresh contexts and warm isolates share (``warm`` builds on it).

``prepare_context`` builds a fresh context ahead of demand (the sandbox scripts, the
notification hooks) for a job with ``Isolation: fresh``; ``run_script`` runs a job's
script and returns the raw outcome, read from the channel memory when it fits there;
``check_syntax`` and ``body_problem`` parse a job's text without running it. Only
this module, ``warm`` and ``v8`` know mini-racer.

A fresh context costs far more to build than a run costs, so it is built ahead of
demand; every ``eval`` is a round trip into V8, so a job that settles within its eval
never notifies, and console lines are batched by the sandbox and leave with the
outcome. The figures are the bench's (bench/README.md: warm against fresh, CPU per run).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hub.engine import crossing, hidden, modules, scripts, v8
from hub.engine.background import background
from hub.engine.channel import ConsoleChannel, current_slot
from hub.engine.inbox import Inbox

LogSink = Callable[[list[list[Any]]], None]
CallSink = Callable[[dict[str, Any]], Coroutine[Any, Any, None] | None]

# The script's value is the console channel's memory, whose global is gone before any job code.
TAKE_CHANNEL = ("(() => { const c = globalThis.__webjob_channel; "
                "delete globalThis.__webjob_channel; return c })()")


def sandbox_script(host: str, tail: str = TAKE_CHANNEL, slots: int = 1) -> str:
    """The layout (``hidden``, for ``slots`` runs at once), the sandbox up to ``host``
    (scripts.FRESH_HOST or WARM_HOST) and ``tail`` as one script (each eval is a round
    trip into V8)."""
    return scripts.JOIN.join([hidden.protocol_script(slots), scripts.sandbox_source(host), tail])


_FRESH_SANDBOX = sandbox_script(scripts.FRESH_HOST)

JOB_SCRIPT_PREFIX = "__webjob_host.run({spec}, async () => {{"
_PARSE_ERROR = re.compile(r"^(?:<anonymous>|job\.js):(\d+): (.*)$")
_MEMORY_POLL_S = 0.05


@dataclass
class RunSlot:
    """One run's part of a context while it holds it: its slot of the channel memory
    (console ring, outcome), its end, and where its console lines and calls go. Every
    note from the sandbox names its slot; one for a slot nobody holds is dropped."""

    index: int
    channel: ConsoleChannel
    done: asyncio.Event = field(default_factory=asyncio.Event)
    on_log: LogSink | None = None
    on_call: CallSink | None = None
    held: bool = False
    seq: int = 0  # the isolate's number for the run that holds the slot (warm_host.js)
    calls_out: int = 0  # bridge calls it has made that no reply has settled yet
    ending: int = 0  # ends sent into the isolate for it that have not had their turn yet
    # Set by the worker (its CPU monitor thread too) when the run broke a limit the
    # sandbox cannot see: the run fails with it, whatever the isolate says.
    breach: RawOutcome | None = None

    def take(self, on_log: LogSink | None, on_call: CallSink | None) -> None:
        self.on_log, self.on_call, self.held, self.breach = on_log, on_call, True, None
        self.calls_out = 0
        self.channel.reset()
        self.done.clear()

    def free(self) -> None:
        self.on_log = self.on_call = None
        self.held = False

    def forward_console(self) -> None:
        lines = self.channel.drain()
        if lines and self.on_log is not None:
            self.on_log(lines)


@dataclass
class PreparedContext:
    """A V8 context with the sandbox installed, waiting for jobs: a fresh context for
    one run, or (``warm.WarmIsolate``) a warm isolate for many runs, several at once."""

    racer: v8.Racer
    memory: memoryview | None = None  # the channel memory: a header, then the slots
    slots: list[RunSlot] = field(default_factory=list)
    modules: set[str] = field(default_factory=set)  # approved modules already loaded
    # A fresh context's key for the host's poll and reply, which its job could call:
    # armed before the job starts, never in its reach (fresh_host.js). "" when warm.
    host_key: str = ""
    # V8's heap-limit flag stays set once reached: the run it stopped has been told,
    # and no later run of this context is blamed for it (the context is retired).
    memory_blamed: bool = False
    # Start evals under way: V8 compiles a run's script (the job's text, its spec when
    # small) before the run's first line names it.
    starting: int = 0
    # Where large payloads for its runs enter: an isolate runs share (not a fresh
    # context: its run is alone in it, and a literal costs only that run).
    inbox: Inbox | None = None

    def memory_breach(self) -> bool:
        """Whether V8 stopped a run at the heap limit and no run has been blamed yet
        (the caller blames its own run)."""
        if self.memory_blamed or not self.racer.memory_limit_reached():
            return False
        self.memory_blamed = True
        return True

    def open_channel(self, memory: memoryview, slots: int, shared: bool = False) -> None:
        self.memory = memory.cast("B")
        self.slots = [RunSlot(i, ConsoleChannel(memory, i)) for i in range(slots)]
        self.inbox = Inbox(self.racer, self.memory, slots) if shared else None

    def through_inbox(self, size: int) -> Inbox | None:
        """The inbox, if a payload of ``size`` bytes is to cross through it."""
        return self.inbox if self.inbox is not None and Inbox.wanted(size) else None

    def free_slot(self) -> RunSlot | None:
        return next((slot for slot in self.slots if not slot.held), None)

    def held_slots(self) -> list[RunSlot]:
        return [slot for slot in self.slots if slot.held]

    def handle_wake(self) -> None:
        for slot in self.slots:
            if slot.held:
                slot.forward_console()

    def handle_done(self) -> None:
        # The wake-up names no run: every held slot with an outcome has ended.
        for slot in self.slots:
            if slot.held and slot.channel.settled():
                slot.done.set()

    def handle_note(self, text: str) -> None:
        kind, colon = text[:1], text.find(":", 1, 8)
        number = text[1:colon] if colon > 0 else ""
        if not number.isdigit() or int(number) >= len(self.slots):
            return
        slot, rest = self.slots[int(number)], text[colon + 1:]
        if not slot.held:
            return  # a run that has ended (or was ended) says no more
        if kind == "L" and slot.on_log is not None:
            slot.forward_console()  # earlier lines first
            lines = crossing.log_lines(crossing.parse_json(rest))
            if lines:
                slot.on_log(lines)
        elif kind == "C" and slot.on_call is not None:
            slot.calls_out += 1
            call = crossing.bridge_call(crossing.parse_json(rest))
            result = slot.on_call(call) if call is not None else None
            if asyncio.iscoroutine(result):
                background(result)

    def close(self) -> None:
        self.racer.close()


@dataclass
class RawOutcome:
    """What the prelude reported: ``meta`` (ok, code or type, logs...) and the body."""

    meta: dict[str, Any]
    body: str = ""


def install_notifiers(prepared: PreparedContext) -> None:
    """The host functions the prelude captures (before any sandbox code runs): notes
    (console batches, bridge calls), the live console's wake-up and the run's end."""
    prepared.racer.install_notifier(hidden.NOTE, prepared.handle_note)
    prepared.racer.install_notifier(hidden.WAKE, lambda _text: prepared.handle_wake(),
                                    with_args=False)
    prepared.racer.install_notifier(hidden.DONE, lambda _text: prepared.handle_done(),
                                    with_args=False)


async def prepare_context() -> PreparedContext:
    """A fresh context for one run of a job with ``Isolation: fresh``."""
    prepared = PreparedContext(v8.Racer())
    install_notifiers(prepared)
    prepared.open_channel(prepared.racer.eval(_FRESH_SANDBOX), 1)
    prepared.host_key = secrets.token_hex(16)
    prepared.racer.eval(f"{hidden.HOST}.arm('{prepared.host_key}')")
    return prepared


def keyed(prepared: PreparedContext) -> str:
    """The worker's key as the first argument of a host entry, where there is one."""
    return f"'{prepared.host_key}'" if prepared.host_key else ""


_module_sources: dict[str, str] = {}


def load_module(prepared: PreparedContext, build: dict[str, str],
                loader: Callable[[dict[str, str], str], str] = modules.loader_script) -> bool:
    """Load one approved module's browser build into the context (before the job),
    once: ``loader`` makes the script that evaluates and registers it (a warm
    isolate's is ``modules.warm_loader_script``). Each build's text is read once."""
    if build["name"] in prepared.modules:
        return True
    try:
        source = _module_sources.get(build["path"])
        if source is None:
            source = _module_sources[build["path"]] = Path(build["path"]).read_text("utf-8")
        prepared.racer.eval(loader(build, source))
    except (OSError, v8.EvalError):
        return False  # require() then says the module is not installed
    prepared.modules.add(build["name"])
    return True


def job_script(source: str, spec: dict[str, Any]) -> tuple[str, int]:
    """The script that runs ``source`` as an async function body, and the column
    offset of the body's first line (the body starts on line 1, so line numbers
    need no adjustment)."""
    spec_literal = json.dumps(json.dumps(spec, separators=(",", ":")))
    prefix = JOB_SCRIPT_PREFIX.format(spec=spec_literal)
    return prefix + source + "\n})\n//# sourceURL=job.js\n", len(prefix)


def _syntax_failure(message: str, column_offset: int, source: str) -> RawOutcome:
    """A V8 parse error as the job's own line and column. Errors on the wrapper's
    closing line (an unclosed bracket) are reported at the job's last line."""
    lines = message.splitlines()
    match = _PARSE_ERROR.match(lines[0]) if lines else None
    if not match:
        return RawOutcome({"ok": False, "code": "JOB-001", "syntax": True,
                           "message": v8.first_line(message)})
    line = int(match.group(1))
    caret = next((ln for ln in lines[2:3] if "^" in ln), "")
    column: int | None = caret.index("^") + 1 if caret else None
    if column is not None and line == 1:
        column = max(1, column - column_offset)
    last_line = source.count("\n") + 1
    if line > last_line:  # the error is at the very end of the source
        line, column = last_line, None
    meta: dict[str, Any] = {"ok": False, "code": "JOB-001", "message": match.group(2),
                            "line": line, "syntax": True}
    if column is not None:
        meta["column"] = column
    return RawOutcome(meta)


def _memory_failure(memory_mb: int) -> RawOutcome:
    return RawOutcome({"ok": False, "code": "JOB-003", "limit": "memory",
                       "message": f"The job used more than its memory limit of {memory_mb} MB"})


def _parse_outcome(text: str, column_offset: int) -> RawOutcome:
    head, _, body = text.partition("\n")
    meta = crossing.outcome_meta(crossing.parse_json(head))
    if meta.get("line") == 1 and isinstance(meta.get("column"), int):
        meta["column"] = max(1, meta["column"] - column_offset)
    return RawOutcome(meta, body if meta["ok"] else "")


async def run_in_context(prepared: PreparedContext, source: str, spec: dict[str, Any],
                         memory_mb: int, live: bool = False,
                         on_log: LogSink | None = None,
                         on_call: CallSink | None = None) -> RawOutcome:
    """Run one job in a fresh context (``Isolation: fresh``): its one slot."""
    script, offset = job_script(source, spec)
    prepared.racer.set_memory_limit(memory_mb * 1024 * 1024)
    slot = prepared.slots[0]
    slot.take(on_log, on_call)
    try:
        return await run_script(prepared, slot, JobScript(script, offset, source), memory_mb, live)
    finally:
        slot.free()


@dataclass(frozen=True)
class JobScript:
    """The script that starts a job, where the job's text begins on its first line
    (``offset`` columns in), and the job's own text; ``spec_in``: the run's spec, when
    it is handed in through the inbox before the script runs (the script says null)."""

    text: str
    offset: int
    source: str
    spec_in: bytes = b""


async def run_script(prepared: PreparedContext, slot: RunSlot, job: JobScript, memory_mb: int,
                     live: bool = False) -> RawOutcome:
    """Run one job script to its outcome. Runtime and CPU limits are the parent's job;
    the memory limit (V8's hard heap limit) is set by the caller.

    ``live``: someone watches the console as it happens, so the job's synchronous
    part runs with the asyncio loop free to forward console lines (dearer than a plain
    eval, so only for a watched run)."""
    racer = prepared.racer
    try:
        if job.spec_in and prepared.inbox is not None:
            await prepared.inbox.hand_in(slot.index, job.spec_in)
            if slot.breach is not None:  # ended while its spec crossed: it never starts
                return slot.breach
        prepared.starting += 1
        try:
            if live:
                await racer.eval_async(job.text)
            else:
                racer.eval(job.text)
        finally:
            prepared.starting -= 1
        text = _outcome(prepared, slot)
        while text == "" and slot.breach is None:
            await _wait_done(prepared, slot, memory_mb)
            text = _outcome(prepared, slot)
    except v8.OutOfMemory:
        prepared.memory_blamed = True
        return _memory_failure(memory_mb)
    except v8.ParseError as exc:
        return _syntax_failure(str(exc), job.offset, job.source)
    except v8.EvalError as exc:
        if slot.breach is not None:  # stopped by the worker, for a limit it watches
            return slot.breach
        if prepared.memory_breach():
            return _memory_failure(memory_mb)
        return RawOutcome({"ok": False, "code": "JOB-001", "message": v8.first_line(str(exc))})
    finally:
        # Notes the job sent during a synchronous eval are queued on this loop:
        # let them run before the context (and its callbacks) goes away.
        await asyncio.sleep(0)
        slot.forward_console()  # console lines not yet handed on, before the outcome
    if slot.breach is not None:
        return slot.breach
    return _parse_outcome(str(text), job.offset)


def _poll(prepared: PreparedContext, slot: RunSlot) -> str:
    if prepared.host_key:
        return str(prepared.racer.eval(f"{hidden.HOST}.poll({keyed(prepared)})"))
    return str(prepared.racer.eval(f"{hidden.HOST}.poll({slot.index})"))


def _outcome(prepared: PreparedContext, slot: RunSlot) -> str:
    """The outcome, from the slot's memory when the sandbox could leave it there;
    asked of V8 only when the run has settled with one too long for it; else '' (the
    run notes its end, run.js, and is awaited: an eval would wait behind whatever the
    job left in the microtask queue, or another run's turn)."""
    text = slot.channel.outcome()
    if text is not None:
        return text
    if not slot.channel.settled_elsewhere():
        return ""
    return _poll(prepared, slot)


async def _wait_done(prepared: PreparedContext, slot: RunSlot, memory_mb: int) -> None:
    # V8 stops a script that hits the heap limit without settling anything, so the
    # wait also watches the limit flag; in an isolate that holds several runs, the
    # worker tells which run it stopped (``breach``), so only a context of one asks.
    while not slot.done.is_set() and slot.breach is None:
        try:
            await asyncio.wait_for(slot.done.wait(), _MEMORY_POLL_S)
        except TimeoutError:
            if _was_running(prepared, slot) and prepared.memory_breach():
                raise v8.OutOfMemory() from None
    slot.done.clear()


def _was_running(prepared: PreparedContext, slot: RunSlot) -> bool:
    """Whether ``slot``'s run is the one V8 stopped at the heap limit: the run whose code
    ran last (the header's slot), in an isolate that holds several — unless it is waiting
    for a bridge call's answer (the code V8 stopped was another's, which entered since)."""
    if len(prepared.slots) == 1 or prepared.memory is None:
        return True
    return current_slot(prepared.memory) == slot.index and slot.calls_out == 0


_CHECK_PREFIX = "throw 0; (async () => {"


def check_syntax(checker: v8.Racer, source: str) -> dict[str, Any]:
    """Parse ``source`` as a job body without running any of it: V8 reports a
    syntax error before the script starts, and a valid script stops at its
    first statement, ``throw 0``, before the body could run."""
    try:
        checker.eval(_CHECK_PREFIX + source + "\n})")
    except v8.ParseError as exc:
        return _syntax_failure(str(exc), len(_CHECK_PREFIX), source).meta
    except v8.EvalError:
        pass
    # The function-body parser also refuses a body that closes the wrapper early.
    body = json.dumps(source)
    try:
        checker.eval(f"new (Object.getPrototypeOf(async function () {{}}).constructor)({body}); 0")
    except v8.EvalError as exc:
        return {"ok": False, "code": "JOB-001", "syntax": True,
                "message": v8.first_line(str(exc)) + " (the body closes its function early)"}
    return {"ok": True}


_WHOLE_BODIES: OrderedDict[bytes, None] = OrderedDict()
_WHOLE_BODIES_KEPT = 512


def body_problem(checker: v8.Racer, source: str) -> dict[str, Any] | None:
    """None when ``source`` is one whole function body; else the syntax failure.

    A warm run's script pastes the job's text into its wrapper, so a text that closed
    the wrapper early would run the rest at the script's top level, outside the names
    the wrapper shadows. Saved jobs were checked when saved; this holds for every
    text, whatever its way in. Texts found whole are remembered (by digest), so a
    job's runs after its first pay nothing."""
    key = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    if key in _WHOLE_BODIES:
        _WHOLE_BODIES.move_to_end(key)
        return None
    checked = check_syntax(checker, source)
    if not checked.get("ok"):
        return checked
    _WHOLE_BODIES[key] = None
    if len(_WHOLE_BODIES) > _WHOLE_BODIES_KEPT:
        _WHOLE_BODIES.popitem(last=False)
    return None
