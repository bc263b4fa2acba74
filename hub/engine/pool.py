"""Worker processes, the pool that keeps them ready, and the places on them.

Every worker is started ahead of demand and says ``ready`` once it can take runs
(its warm isolate built and checked, see ``warm``). A worker holds up to
``runs_per_worker`` runs at once, interleaved in its isolate at their awaits; a run
that must be alone (``Isolation: fresh``, a large ``Memory``, a debug run, a job in
quarantine) takes a whole worker. ``place`` gives a run the worker with the fewest
runs; at most ``busy_limit`` workers hold runs at once (WEBJOB_MAX_CONCURRENT).
A worker that is killed or dies is replaced at once; its runs are failed by the
runs that owned them, never by the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import select
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hub.engine import protocol
from hub.engine.background import background

log = logging.getLogger("webhub.engine")

_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")
_REPO_ROOT = str(Path(__file__).resolve().parents[2])


class RunOwner(Protocol):
    """What a worker reports to a run it holds (a syntax check holds a place too)."""

    def on_log(self, lines: list[list[Any]]) -> None: ...
    def on_call(self, call: dict[str, Any], size: int) -> None: ...
    def on_done(self, meta: dict[str, Any], body: bytes, cpu_ms: int) -> None: ...
    def on_exit(self, neighbour_broke: bool) -> None:
        """The worker ended while the run was on it; ``neighbour_broke``: because
        another run on it broke a limit nothing in the worker could stop."""
    def on_breach(self, limit: str) -> None:
        """The worker could not stop this run at its limit and ends."""
    def accepts_body(self, size: int) -> bool: ...
    def on_oversize(self, limit: str) -> None:
        """The worker sent more than the caps allow: the run fails with ``limit``
        and the worker is killed (it may be lying)."""


def read_cpu_ms(pid: int) -> int | None:
    """User + system CPU of a process, from /proc (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 // _TICKS


def has_ended(pid: int) -> bool:
    """Whether the process is dead or a zombie, from /proc: a worker killed from outside
    stays ``alive`` until its reader sees the pipe close, a moment later (longer on a
    busy loop), and must not be handed a run in between."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in (b"Z", b"X")


def exit_watch(pid: int) -> tuple[int, select.poll] | None:
    """A pidfd of the process and a poll on it: readable once the process has ended (a
    zombie too), which one system call tells, where :func:`has_ended` opens and reads
    a file. None where the kernel has no pidfds (or the process is gone)."""
    try:
        fd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return fd, poll


def read_rss_mb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE // (1024 * 1024)
    except (OSError, IndexError, ValueError):
        return None


class WorkerProcess:
    """One worker process and the runs the hub has placed on it (``places``: run id ->
    its owner; None while the run is being handed over)."""

    def __init__(self, proc: asyncio.subprocess.Process, pool: WorkerPool,
                 line_limit: int = protocol.Caps().line_limit) -> None:
        self.proc = proc
        self.line_limit = line_limit  # the longest line the worker reads
        self.pid = proc.pid
        self.places: dict[str, RunOwner | None] = {}
        self.exclusive = False   # its one run keeps it to itself
        self.open = False        # said ready, and has not closed since
        self.settling = True     # since its last run ended, until it says ready again
        self.readied = 0.0       # when it last said ready (the most recent is the warmest)
        self.alive = True
        self.broken_by: str | None = None  # the run whose limit breach ends it
        self._pool = pool
        self._exit_watch = exit_watch(proc.pid)
        self.reader = asyncio.ensure_future(self._read())

    @property
    def load(self) -> int:
        return len(self.places)

    def has_ended(self) -> bool:
        """Whether the process is dead or a zombie (see :func:`has_ended`)."""
        watch = self._exit_watch
        if watch is None:
            return has_ended(self.pid)
        return bool(watch[1].poll(0))

    def _stop_watching_exit(self) -> None:
        watch, self._exit_watch = self._exit_watch, None
        if watch is not None:
            os.close(watch[0])

    def send(self, obj: dict[str, Any]) -> None:
        self.write(protocol.encode(obj))

    def write(self, message: bytes) -> None:
        """One encoded message (``protocol.encode``)."""
        if self.alive and self.proc.stdin is not None:
            self.proc.stdin.write(message)

    def kill(self, broken_by: str | None = None) -> None:
        """End the process; ``broken_by``: the run whose limit it is ended for (the
        others on it fail with JOB-005)."""
        if broken_by is not None and self.broken_by is None:
            self.broken_by = broken_by
        if self.alive:
            self.alive = False
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    def drop(self, run: str) -> None:
        """The run is no longer on this worker (it never reached it, or it is over)."""
        if self.places.pop(run, _ABSENT) is not _ABSENT:
            if not self.places:
                self.exclusive = False
            self._pool.place_freed()

    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while await self._read_one(stdout):
                pass
        except ValueError as exc:  # a line over the stream's limit, or not JSON
            over = not isinstance(exc, json.JSONDecodeError | UnicodeDecodeError)
            if over:
                for owner in list(self.places.values()):
                    if owner is not None:
                        owner.on_oversize("payload")
        except (asyncio.IncompleteReadError, KeyError, TypeError, ConnectionError):
            pass  # a killed worker ends mid-message; treated as an exit below
        finally:
            await self._ended()

    async def _read_one(self, stdout: asyncio.StreamReader) -> bool:
        """One message read and dispatched; False at the end of the stream. Its own
        frame so that nothing of a message (a result's body, its run) stays alive in
        ``_read``'s locals while the next one is awaited: that kept the last result
        of every worker in the hub's memory."""
        line = await stdout.readline()
        if not line:
            return False
        msg = protocol.decode(line)
        body = b""
        if msg.get("t") == "done":
            size = int(msg["len"])
            owner = self.places.get(str(msg.get("run")))
            if owner is not None and not owner.accepts_body(size):
                owner.on_oversize("result")  # its bytes are never read
                return False
            body = await stdout.readexactly(size)
        self._dispatch(msg, body, len(line))
        return True

    async def _ended(self) -> None:
        self.alive = self.open = False
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        try:
            await self.proc.wait()
        finally:
            self._stop_watching_exit()
        places, self.places = self.places, {}
        for run, owner in places.items():
            if owner is not None:
                owner.on_exit(self.broken_by is not None and self.broken_by != run)
        self._pool.exited(self)

    def _dispatch(self, msg: dict[str, Any], body: bytes, size: int) -> None:
        kind = msg.get("t")
        if kind == "ready":
            self.open, self.settling, self.readied = True, False, time.monotonic()
            self._pool.worker_ready()
            return
        if kind == "closed":  # its isolate was broken by a run: no new runs
            self.open = False
            return
        run = str(msg.get("run"))
        owner = self.places.get(run)
        if kind == "breach":
            self.broken_by = run
            if owner is not None:
                owner.on_breach(str(msg.get("limit")))
        elif owner is None:
            return
        elif kind == "log":
            owner.on_log(msg["lines"])
        elif kind == "call":
            owner.on_call(msg, size)
        elif kind in ("done", "checked"):
            if kind == "done" and len(self.places) == 1:
                # it checks its isolate, then says ready; or it says so in the answer
                self.settling = not msg.get("ready")
                if not self.settling:
                    self.readied = time.monotonic()
            self.drop(run)
            owner.on_done(msg["meta"] if kind == "done" else msg, body, int(msg.get("cpuMs", 0)))


_ABSENT: Any = object()


class WorkerPool:
    """``size`` workers kept alive and warm (replacements start on every exit), and
    the places on them: at most ``busy_limit`` workers hold runs at once, each up to
    ``runs_per_worker`` (one when a run must be alone). A run that finds no place
    waits in turn; ``place`` gives up after its ``wait_s``."""

    def __init__(self, size: int, line_limit: int = protocol.Caps().line_limit,
                 busy_limit: int | None = None, runs_per_worker: int = 1) -> None:
        self.size = size
        self.line_limit = line_limit
        self.busy_limit = busy_limit if busy_limit is not None else size
        self.runs_per_worker = max(1, runs_per_worker)
        self._waiters: deque[_Waiter] = deque()
        self._watchers: list[asyncio.Future[None]] = []  # wait_placeable's
        self._all: set[WorkerProcess] = set()
        self._starting = 0
        self._closed = False
        self._first_ready = asyncio.Event()

    async def start(self) -> None:
        await asyncio.gather(*(self._spawn() for _ in range(self.size)))
        await self._first_ready.wait()

    async def _spawn(self) -> None:
        if self._closed:
            return
        self._starting += 1
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hub.engine.worker", "--line-limit", str(self.line_limit),
                "--runs", str(self.runs_per_worker),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                env=_worker_env(), limit=self.line_limit, start_new_session=True)
        finally:
            self._starting -= 1
        worker = WorkerProcess(proc, self, self.line_limit)
        self._all.add(worker)
        if self._closed:  # closed while it was starting
            worker.kill()

    def exited(self, worker: WorkerProcess) -> None:
        self._all.discard(worker)
        if self._closed:
            return
        log.info("worker %s exited; starting a replacement", worker.pid)
        background(self._spawn())
        self.place_freed()

    def worker_ready(self) -> None:
        self._first_ready.set()
        self.place_freed()

    # -- places ---------------------------------------------------------------------
    def _usable(self, worker: WorkerProcess) -> bool:
        return worker.alive and worker.open and not worker.exclusive and not worker.has_ended()

    def _choose(self, alone: bool) -> WorkerProcess | None:
        """The worker with the fewest runs that can take one more (one with none, for a
        run that must be alone); among equals, one not settling, then the warmest."""
        busy = sum(1 for w in self._all if w.places)
        best: WorkerProcess | None = None
        for worker in self._all:
            if not self._usable(worker):
                continue
            if worker.load == 0 and busy >= self.busy_limit:
                continue
            if (worker.load > 0 and alone) or worker.load >= self.runs_per_worker:
                continue
            if best is None or _rank(worker) < _rank(best):
                best = worker
        return best

    def try_place(self, run: str, alone: bool = False) -> WorkerProcess | None:
        """A place now, if one is free and nobody waits ahead."""
        if self._waiters:
            return None
        return self._take(run, alone)

    def _take(self, run: str, alone: bool) -> WorkerProcess | None:
        worker = self._choose(alone)
        if worker is not None:
            worker.places[run] = None
            worker.exclusive = alone
        return worker

    async def place(self, run: str, alone: bool, wait_s: float) -> WorkerProcess | None:
        """A worker holding a place for ``run`` (``alone``: a whole worker), or None
        when none came within ``wait_s``."""
        worker = self.try_place(run, alone)
        if worker is not None:
            return worker
        waiter = _Waiter(asyncio.get_running_loop().create_future(), run, alone)
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(max(0.0, wait_s)):
                return await waiter.future
        except TimeoutError:
            self._leave(waiter)
            return None
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                waiter.future.result().drop(run)  # hand it on: we no longer need it
            self._leave(waiter)
            raise

    def _leave(self, waiter: _Waiter) -> None:
        """A waiter gives up: those behind it may be placed now (a served one has left
        the queue already)."""
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)
        self.place_freed()

    def place_freed(self) -> None:
        """A place may be free: give it to those waiting, in turn (one that cannot be
        placed yet keeps the ones behind it waiting, so nobody waits forever), then
        wake those asking whether one is free (``wait_placeable``)."""
        self._serve_waiters()
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            if not watcher.done():
                watcher.set_result(None)

    def _serve_waiters(self) -> None:
        while self._waiters:
            waiter = self._waiters[0]
            if waiter.future.done():
                self._waiters.popleft()
                continue
            worker = self._take(waiter.run, waiter.alone)
            if worker is None:
                return
            self._waiters.popleft()
            waiter.future.set_result(worker)

    def can_place(self) -> bool:
        return not self._waiters and self._choose(False) is not None

    async def wait_placeable(self, wait_s: float) -> bool:
        """Whether a run could be placed now or within ``wait_s`` (for /health): looked
        at again whenever a place may have freed or a worker got ready."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while not self.can_place():
            if self._closed:
                return False
            change: asyncio.Future[None] = loop.create_future()
            self._watchers.append(change)
            try:
                async with asyncio.timeout_at(deadline):
                    await change
            except TimeoutError:
                return self.can_place()
            finally:
                with contextlib.suppress(ValueError):
                    self._watchers.remove(change)
        return True

    def counts(self) -> dict[str, int]:
        idle = sum(1 for w in self._all if w.open and not w.places)
        return {"workers": len(self._all), "idle": idle,
                "starting": self._starting, "queued": len(self._waiters),
                "busy": sum(1 for w in self._all if w.places),
                "runs": sum(w.load for w in self._all)}

    def loads(self) -> dict[int, int]:
        """Runs on each worker, by pid."""
        return {w.pid: w.load for w in self._all}

    async def close(self) -> None:
        self._closed = True
        while self._starting:  # a replacement still starting is killed as it arrives
            await asyncio.sleep(0.01)
        workers = list(self._all)
        for worker in workers:
            worker.kill()
        await asyncio.gather(*(w.reader for w in workers), return_exceptions=True)


@dataclass
class _Waiter:
    future: asyncio.Future[WorkerProcess]
    run: str
    alone: bool


def _rank(worker: WorkerProcess) -> tuple[int, bool, float]:
    return worker.load, worker.settling, -worker.readied


def _worker_env() -> dict[str, str]:
    # Workers get an almost empty environment: no hub secrets, no tokens.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": _REPO_ROOT}
    for key in ("LANG", "LC_ALL"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env
