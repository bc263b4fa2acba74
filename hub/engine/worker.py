"""A worker process: runs jobs in its warm isolate (see ``warm``), up to
``--runs`` at once interleaved at their awaits, or one in a fresh V8 context for a
job with ``Isolation: fresh``.

Started by the pool as ``python -m hub.engine.worker``; speaks JSON lines on
stdin/stdout (see ``protocol``). Whenever it holds no run it checks its isolate (and
builds a fresh context when recent jobs wanted one) before saying ``ready``, so a
request never waits for set-up. Limits stay per run: the hub ends a run whose runtime
is up (``end``); the CPU monitor charges each run the isolate's CPU it spent and stops
one over its limit (``cpu_monitor``). An isolate a run broke is not repaired: it
takes no new run (``closed``) and is replaced once its runs are over; one that cannot
be stopped ends the worker (``breach``), and the pool starts another. It dies with its
parent.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from hub.engine import hidden, protocol, replies, sandbox, v8, warm
from hub.engine.background import background
from hub.engine.cpu_monitor import HOPELESS_S, CpuMonitor
from hub.engine.outcomes import TRIM_AFTER, answer_of, give_back_memory, limit_failure
from hub.engine.warm import WarmIsolate

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # A worker spinning in JavaScript never reads its stdin, so EOF alone would
    # not stop it if the hub died: ask the kernel to kill it instead.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_SENDING = threading.Lock()  # the CPU monitor's thread may send too


def _send(obj: dict[str, Any], payload: bytes = b"") -> None:
    data = protocol.encode(obj) + payload
    view = memoryview(data)
    with _SENDING:
        while view:
            written = os.write(1, view)
            view = view[written:]


class Worker:
    """Up to ``capacity`` runs at once in the warm isolate (each in its own slot and
    compartment, interleaved at their awaits), or one run in a fresh context. The hub
    places runs (it knows which must be alone); the worker keeps the isolate fit."""

    def __init__(self, capacity: int = 1) -> None:
        self.capacity = max(1, capacity)
        self.isolate: warm.WarmIsolate | None = None          # the warm isolate
        self.monitor: CpuMonitor | None = None                 # the isolate's CPU per run
        self.fresh: sandbox.PreparedContext | None = None     # a fresh context, when wanted
        self.runs: dict[str, WorkerRun] = {}                   # the runs it holds, by id
        self.tasks: set[asyncio.Task[None]] = set()
        self.recent_modules: deque[list[dict[str, str]]] = deque(maxlen=20)
        self.recent_fresh: deque[bool] = deque(maxlen=20)
        self.getting_ready: asyncio.Future[None] | None = None  # settling or building
        self.renewed: asyncio.Event | None = None  # set once a broken isolate is replaced
        self.slot_turn = 0  # slots are given out in turn: an ended run's slot rests longest
        # A bare context that only ever parses. It is kept for the worker's life for
        # a second reason: V8 tears down its process-wide state (the read-only heap
        # built from the snapshot) whenever the last isolate goes, and a fresh
        # context, closed before the next is made, then had to rebuild it.
        self.checker = v8.Racer()

    async def warm(self) -> None:
        """Get ready for the next run, off the request path."""
        if self.isolate is None:
            self.isolate = warm.build(self.checker, self.capacity)
            isolate, memory = self.isolate, self.isolate.memory
            assert memory is not None  # every warm isolate has its channel
            self.monitor = CpuMonitor(isolate.racer, memory, self._on_stop_from_thread,
                                      _hopeless, starting=lambda: isolate.starting > 0,
                                      on_over=self._on_over_from_thread)
        wanted = self.wanted_modules()  # what recent jobs needed, loaded while idle
        for build in wanted:
            warm.load_module(self.isolate, build)
        if self.fresh is None and any(self.recent_fresh):
            self.fresh = await sandbox.prepare_context()
            for build in wanted:
                sandbox.load_module(self.fresh, build)
        _send({"t": "ready", "pid": os.getpid()})

    def wanted_modules(self) -> list[dict[str, str]]:
        seen: dict[str, dict[str, str]] = {}
        for builds in self.recent_modules:
            for build in builds:
                seen.setdefault(build["name"], build)
        return list(seen.values())

    def start(self, msg: dict[str, Any]) -> None:
        entry = WorkerRun(str(msg.get("run")))
        self.runs[entry.run_id] = entry  # known at once: an ``end`` read next finds it
        task = asyncio.ensure_future(self.run(msg, entry))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def run(self, msg: dict[str, Any], entry: WorkerRun) -> None:
        run_id = entry.run_id
        fresh = msg.get("isolation") == "fresh"
        wanted = [m for m in msg.get("modules", []) if isinstance(m, dict)]
        self.recent_modules.append(wanted)
        self.recent_fresh.append(fresh)
        caps = protocol.Caps.from_message(msg["spec"].get("caps"))
        given = msg["spec"].get("limits")
        entry.limits = {"cpuMs": msg.get("cpuMs"), "memoryMb": msg.get("memoryMb"),
                        **(given if isinstance(given, dict) else {})}
        cpu0 = time.process_time()
        try:
            await self._isolate_fit(fresh)
            if entry.ended is not None:  # the hub ended it before it could start
                outcome = limit_failure(entry.ended, entry.limits)
            else:
                outcome = await self._run_job(msg, entry, fresh, wanted)
        except Exception as exc:  # the hub must hear of every run's end
            outcome = sandbox.RawOutcome({"ok": False, "code": "JOB-001", "logs": [],
                                          "message": f"The worker could not run the job: {exc}"})
        finally:
            self.runs.pop(run_id, None)
        cpu_ms = entry.cpu_ms if entry.watched else int((time.process_time() - cpu0) * 1000)
        meta, body = answer_of(outcome, caps)
        # A run stopped at the isolate's memory while others run in it: not surgical. What
        # it allocated stays until the isolate drops it, and V8 then stops whatever code
        # runs at the next collection, a neighbour's too; so the worker ends: the run
        # fails with its limit, its neighbours with JOB-005, and its job runs alone a while.
        ends_worker = (not fresh and meta.get("code") == "JOB-003"
                       and meta.get("limit") == "memory" and self._running())
        if ends_worker:
            _send({"t": "breach", "run": run_id, "limit": "memory"})
        done = {"t": "done", "run": run_id, "meta": meta, "len": len(body), "cpuMs": cpu_ms}
        # One message, not a ready line after it, when the isolate is fit at once. Not
        # "ready soon": the hub would give the next run to a worker still checking its
        # isolate (the most recently ready), where it would wait.
        ready = not fresh and len(body) < TRIM_AFTER and self._fit_at_once()
        _send({**done, "ready": True} if ready else done, body)
        if ends_worker:
            os._exit(70)
        if len(body) >= TRIM_AFTER:
            give_back_memory()
        if not ready:
            await self._after_run(fresh)

    def _fit_at_once(self) -> bool:
        """Ready for the next run with nothing to do first: no run in the isolate, no
        fresh context to prepare, and the isolate settled without a question to it."""
        isolate = self.isolate
        return (isolate is not None and self.getting_ready is None and not self._running()
                and not (self.fresh is None and any(self.recent_fresh))
                and warm.settled_at_once(isolate))

    async def _run_job(self, msg: dict[str, Any], entry: WorkerRun, fresh: bool,
                       wanted: list[dict[str, str]]) -> sandbox.RawOutcome:
        source, spec, memory_mb = msg["source"], msg["spec"], int(msg["memoryMb"])
        live, run_id = bool(msg.get("live")), entry.run_id
        if fresh:
            context = self.fresh or await sandbox.prepare_context()
            self.fresh = None
            entry.fresh = context
            try:
                for build in wanted:
                    sandbox.load_module(context, build)
                return await sandbox.run_in_context(
                    context, source, spec, memory_mb, live, self._logs(run_id), self._calls(run_id))
            finally:
                entry.fresh = None
                context.close()  # after the answer's outcome: closing is not free
        isolate = self.isolate
        assert isolate is not None and self.monitor is not None
        # Not charged to nobody: the eval may wait behind a neighbour's turn, whose CPU
        # must stay its own (a module's first load is charged to the run entered last).
        for build in wanted:
            warm.load_module(isolate, build)
        slot = self._free_slot(isolate)
        slot.take(self._logs(run_id), self._calls(run_id))
        entry.slot, entry.isolate = slot, isolate
        cpu_limit = msg.get("cpuMs")
        entry.watched = isinstance(cpu_limit, int)
        if entry.watched:
            self.monitor.hold(slot.index, run_id, int(str(cpu_limit)), memory_mb)
        try:
            return await warm.run(isolate, source, spec, memory_mb, live, slot)
        finally:
            entry.cpu_ms = self.monitor.release(slot.index)
            slot.free()

    def _free_slot(self, isolate: WarmIsolate) -> sandbox.RunSlot:
        # Not a slot whose ended run may still be running its turn, while there is
        # another: what it still spends would be charged to the run given the slot.
        count = len(isolate.slots)
        for ending_too in (False, True):
            for step in range(count):
                slot: sandbox.RunSlot = isolate.slots[(self.slot_turn + step) % count]
                if not slot.held and (ending_too or not slot.ending):
                    self.slot_turn = slot.index + 1
                    return slot
        raise RuntimeError("every slot of the isolate is held: the hub placed one run too many")

    def _logs(self, run_id: str) -> sandbox.LogSink:
        return lambda lines: _send({"t": "log", "run": run_id, "lines": lines})

    def _calls(self, run_id: str) -> sandbox.CallSink:
        return lambda call: _send({"t": "call", "run": run_id, **call})

    async def _after_run(self, fresh: bool) -> None:
        """An isolate a run broke takes no new run (``closed``) and is replaced once its
        runs are over; else, once it holds none, it is checked (``warm.settle``): a run
        that left it spinning or too full ends the worker or replaces the isolate."""
        isolate = self.isolate
        if isolate is None or self.getting_ready is not None:
            return
        if isolate.lost and not isolate.retiring:
            isolate.retiring = True
            _send({"t": "closed"})
        if self._running():
            return
        self.getting_ready = asyncio.get_running_loop().create_future()
        try:
            fitness = warm.Fitness.REPLACE if isolate.lost else (
                warm.Fitness.KEEP if fresh else await warm.settle(isolate))
            if fitness is warm.Fitness.EXIT:
                fitness = await _stop_leftovers(isolate)
            if fitness is warm.Fitness.REPLACE:
                self._drop_isolate()
            await self.warm()
        finally:
            ready, self.getting_ready = self.getting_ready, None
            ready.set_result(None)
            renewed, self.renewed = self.renewed, None
            if renewed is not None:
                renewed.set()

    def _running(self) -> bool:
        """Whether a run is in the isolate or a fresh context now (not just waiting)."""
        return any(e.slot is not None or e.fresh is not None for e in self.runs.values())

    async def _isolate_fit(self, fresh: bool) -> None:
        """Wait until a run can start: not while the isolate is being checked or built,
        nor in an isolate a run broke (the run starts in its replacement: a stopped
        run may leave broken state, and what still spins there is not to be charged to
        a new run)."""
        while True:
            if self.getting_ready is not None:
                await asyncio.shield(self.getting_ready)
                continue
            isolate = self.isolate
            if fresh or isolate is None or not isolate.lost:
                return
            if not self._running():
                await self._after_run(False)  # nothing left in it: replaced now
                continue
            if self.renewed is None:
                self.renewed = asyncio.Event()
            await self.renewed.wait()

    def _drop_isolate(self) -> None:
        isolate, monitor = self.isolate, self.monitor
        self.isolate = self.monitor = None
        if monitor is not None:
            monitor.close()
        if isolate is not None:
            isolate.close()  # after the answer; the next isolate is built while idle

    def _on_stop_from_thread(self, slot: int, run_id: str, limit: str) -> None:
        # On the monitor's thread: the run's code is being unwound by V8. Its slot learns
        # why at once (an eval the worker's loop is blocked in returns next).
        isolate = self.isolate
        if isolate is None:
            return
        isolate.lost = True  # retire, never reuse: a limit kill may leave broken state
        entry = self.runs.get(run_id) if run_id else None
        if entry is not None and entry.slot is not None and limit != "leftover":
            entry.slot.breach = limit_failure(limit, entry.limits)
            self._loop.call_soon_threadsafe(self._end_in_isolate, entry)

    def _on_over_from_thread(self, slot: int, run_id: str, limit: str) -> None:
        # On the monitor's thread: the run is over a limit; it fails with it and is ended
        # in the isolate at its next await (no stop: the isolate stays fit).
        del slot
        entry = self.runs.get(run_id)
        if entry is not None and entry.slot is not None and entry.slot.breach is None:
            entry.slot.breach = limit_failure(limit, entry.limits)
            self._loop.call_soon_threadsafe(self._end_in_isolate, entry)

    def _end_in_isolate(self, entry: WorkerRun) -> None:
        """The run is over for the hub: its coroutine answers with its ``breach`` now, and
        the isolate drops it (its timers, waits, calls) once it gets a turn. The end names
        the run's number, so it never reaches a later run given the same slot. A run that
        still spins once it has left its slot is stopped as a leftover (``cpu_monitor``)."""
        slot, isolate = entry.slot, entry.isolate
        if slot is None or isolate is None or not slot.held:
            return
        slot.done.set()
        end = f"{hidden.HOST}.end({slot.index}, {slot.seq})"
        background(_ending(slot, isolate.racer.eval_async(end)))

    def end(self, msg: dict[str, Any]) -> None:
        """The hub has ended a run (its runtime is up, its caller left): a run that
        waits is ended in the isolate alone; one whose code runs now is stopped."""
        entry = self.runs.get(str(msg.get("run")))
        limit = "runtime" if msg.get("limit") == "runtime" else "ended"
        if entry is not None and entry.slot is None:
            entry.ended = limit  # not started yet (it waits for the isolate): it never will
            return
        if entry is None or entry.slot is None or self.monitor is None:
            return
        if entry.slot.breach is None:
            entry.slot.breach = limit_failure(limit, entry.limits)
        if not self.monitor.stop(entry.slot.index, limit):
            self._end_in_isolate(entry)

    def check(self, msg: dict[str, Any]) -> None:
        _send({"t": "checked", "run": msg.get("run"),
               **sandbox.check_syntax(self.checker, str(msg["source"]))})

    async def reply(self, msg: dict[str, Any]) -> None:
        # Only the run that asked gets the answer: call ids restart in every run.
        entry = self.runs.get(str(msg.get("run")))
        if entry is None or type(msg.get("id")) is not int:
            return
        ok, value = bool(msg.get("ok")), msg.get("value")
        # What the reply's continuation does can be stopped (a limit): the run hears of
        # that through its slot; the worker goes on reading.
        with contextlib.suppress(v8.EvalError):
            if entry.fresh is not None:
                await replies.reply_to_call(entry.fresh, entry.fresh.slots[0], msg["id"], ok,
                                            value)
            elif entry.slot is not None and entry.isolate is not None and entry.slot.held:
                await replies.reply_in_shared(entry.isolate, entry.slot, msg["id"], ok, value)

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        return _LOOP[0]


@dataclass
class WorkerRun:
    """A run the worker holds: where it runs, and the CPU its isolate spent on it."""

    run_id: str
    slot: sandbox.RunSlot | None = None
    isolate: warm.WarmIsolate | None = None
    fresh: sandbox.PreparedContext | None = None
    watched: bool = False  # its CPU is charged by the monitor (else the process's counts)
    cpu_ms: int = 0
    limits: dict[str, Any] = field(default_factory=dict)  # as the job sees them (limits)
    ended: str | None = None  # the hub ended it before it had a slot: why (never runs)


_LOOP: list[asyncio.AbstractEventLoop] = []


def _hopeless(run_id: str, limit: str) -> None:
    # On the monitor's thread: the isolate still runs what was stopped. The hub hears
    # whose run it was (that run fails with the limit; the others on this worker with
    # JOB-005), and the worker ends: nothing in it can stop the isolate.
    _send({"t": "breach", "run": run_id, "limit": limit})
    os._exit(70)


async def _stop_leftovers(isolate: warm.WarmIsolate) -> warm.Fitness:
    """The isolate still spins with what an ended run left (its idle probe got no turn):
    V8 stops it, and the isolate is replaced; if even that does not free it, nothing in
    this process can, and the worker ends (the pool starts another)."""
    isolate.racer.terminate()
    try:
        await asyncio.wait_for(isolate.racer.eval_async("0"), HOPELESS_S)
    except v8.EvalError:
        pass  # the stop reached this eval instead: the isolate is free all the same
    except TimeoutError:
        os._exit(0)
    isolate.racer.cancel_terminate()
    return warm.Fitness.REPLACE


async def _ending(slot: sandbox.RunSlot, end: Any) -> None:
    # The end gets its turn once the run's code has yielded: the slot is clean after it.
    slot.ending += 1
    try:
        await _quietly(end)
    finally:
        slot.ending -= 1


async def _quietly(work: Any) -> None:
    # An end in the background: the isolate may have stopped it or been closed since.
    with contextlib.suppress(Exception):
        await work


def _option(name: str, default: int) -> int:
    # The pool passes the line limit its caps allow and the runs a worker holds at once
    # (``--line-limit N --runs N``).
    args = sys.argv[1:]
    for at in range(len(args) - 1):
        if args[at] == name and args[at + 1].isdigit():
            return int(args[at + 1])
    return default


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    _LOOP.append(loop)
    reader = asyncio.StreamReader(limit=_option("--line-limit", protocol.Caps().line_limit))
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    worker = Worker(_option("--runs", 1))
    await worker.warm()
    while await _serve_one(worker, await reader.readline()):
        pass


async def _serve_one(worker: Worker, line: bytes) -> bool:
    """One message from the hub handled; False when the worker is to end. In a
    frame of its own so that a message (a run's spec, a large reply) is not kept
    alive while the next one is awaited."""
    if not line:
        return False
    msg = protocol.decode(line)
    op = str(msg.get("op"))
    if op == "run":
        worker.start(msg)
    elif op == "check":
        worker.check(msg)
    elif op == "reply":
        await worker.reply(msg)
    elif op == "end":
        worker.end(msg)
    return op != "exit"


def main() -> None:
    _die_with_parent()
    asyncio.run(_serve())


if __name__ == "__main__":
    main()
