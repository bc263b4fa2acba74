"""Worker processes and the pool that keeps them ready.

Every worker is started ahead of demand and says ``ready`` once it can take the
next run at once (its warm isolate built and checked, see ``warm``); ``acquire``
hands out the worker that became ready last.
A worker that is killed or dies is replaced at once; its run is failed by the
run that owned it, never by the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import select
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from hub.engine import protocol
from hub.engine.background import background

log = logging.getLogger("webhub.engine")

_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICKS = os.sysconf("SC_CLK_TCK")
_REPO_ROOT = str(Path(__file__).resolve().parents[2])


class RunOwner(Protocol):
    """What a worker reports to the run it is executing."""

    def on_log(self, lines: list[list[Any]]) -> None: ...
    def on_call(self, call: dict[str, Any], size: int) -> None: ...
    def on_done(self, meta: dict[str, Any], body: bytes, cpu_ms: int) -> None: ...
    def on_exit(self) -> None: ...
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
    def __init__(self, proc: asyncio.subprocess.Process, on_ready: Callable[[WorkerProcess], None],
                 on_exit: Callable[[WorkerProcess], None],
                 line_limit: int = protocol.Caps().line_limit) -> None:
        self.proc = proc
        self.line_limit = line_limit  # the longest line the worker reads
        self.pid = proc.pid
        self.owner: RunOwner | None = None
        self.alive = True
        self._on_ready = on_ready
        self._on_exit = on_exit
        self._exit_watch = exit_watch(proc.pid)
        self.reader = asyncio.ensure_future(self._read())

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

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                msg = protocol.decode(line)
                body = b""
                if msg.get("t") == "done":
                    size = int(msg["len"])
                    if self.owner is not None and not self.owner.accepts_body(size):
                        self.owner.on_oversize("result")  # its bytes are never read
                        return
                    body = await stdout.readexactly(size)
                self._dispatch(msg, body, len(line))
        except ValueError as exc:  # a line over the stream's limit, or not JSON
            over = not isinstance(exc, json.JSONDecodeError | UnicodeDecodeError)
            if over and self.owner is not None:
                self.owner.on_oversize("payload")
        except (asyncio.IncompleteReadError, KeyError, TypeError, ConnectionError):
            pass  # a killed worker ends mid-message; treated as an exit below
        finally:
            self.alive = False
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            try:
                await self.proc.wait()
            finally:
                self._stop_watching_exit()
            owner, self.owner = self.owner, None
            if owner is not None:
                owner.on_exit()
            self._on_exit(self)

    def _dispatch(self, msg: dict[str, Any], body: bytes, size: int) -> None:
        kind, owner = msg.get("t"), self.owner
        if kind == "ready":
            self._on_ready(self)
        elif owner is None:
            return
        elif kind == "log":
            owner.on_log(msg["lines"])
        elif kind == "call":
            owner.on_call(msg, size)
        elif kind == "done":
            self.owner = None
            owner.on_done(msg["meta"], body, int(msg.get("cpuMs", 0)))
        elif kind == "checked":
            self.owner = None
            owner.on_done(msg, b"", 0)


class WorkerPool:
    """``size`` workers kept alive and warm; replacements start on every exit."""

    def __init__(self, size: int, line_limit: int = protocol.Caps().line_limit) -> None:
        self.size = size
        self.line_limit = line_limit
        self._idle_watchers: list[asyncio.Future[None]] = []
        self._idle: deque[WorkerProcess] = deque()
        self._waiters: deque[asyncio.Future[WorkerProcess]] = deque()
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
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                env=_worker_env(), limit=self.line_limit, start_new_session=True)
        finally:
            self._starting -= 1
        worker = WorkerProcess(proc, self._ready, self._exited, self.line_limit)
        self._all.add(worker)
        if self._closed:  # closed while it was starting
            worker.kill()

    def _ready(self, worker: WorkerProcess) -> None:
        self._first_ready.set()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        self._idle.append(worker)
        watchers, self._idle_watchers = self._idle_watchers, []
        for watcher in watchers:
            if not watcher.done():
                watcher.set_result(None)

    def _exited(self, worker: WorkerProcess) -> None:
        self._all.discard(worker)
        if self._closed:
            return
        with contextlib.suppress(ValueError):
            self._idle.remove(worker)
        log.info("worker %s exited; starting a replacement", worker.pid)
        background(self._spawn())

    def take_idle(self) -> WorkerProcess | None:
        """The worker ready last, if one is idle now (no wait, so no timeout). Last in,
        first out: a warm isolate that has just run is the one whose code, caches and
        type feedback are hot, so the fewest workers do the work when the hub is not
        busy (the others stay warm, ready for a burst)."""
        while self._idle:
            worker = self._idle.pop()
            if worker.alive and not worker.has_ended():
                return worker
        return None

    async def acquire(self) -> WorkerProcess:
        worker = self.take_idle()
        if worker is not None:
            return worker
        waiter: asyncio.Future[WorkerProcess] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._ready(waiter.result())  # hand it on: we no longer need it
            raise

    def release(self, worker: WorkerProcess) -> None:
        """Give back a worker that is still warm (it ran no job)."""
        if worker.alive:
            self._ready(worker)

    def has_idle(self) -> bool:
        return any(worker.alive for worker in self._idle)

    async def wait_idle(self, wait_s: float) -> bool:
        """Whether a live worker is idle now or becomes idle within ``wait_s``."""
        if self.has_idle():
            return True
        if self._closed:
            return False
        watcher: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle_watchers.append(watcher)
        try:
            async with asyncio.timeout(wait_s):
                await watcher
        except TimeoutError:
            return False
        finally:
            with contextlib.suppress(ValueError):
                self._idle_watchers.remove(watcher)
        return self.has_idle()

    def counts(self) -> dict[str, int]:
        return {"workers": len(self._all), "idle": len(self._idle), "starting": self._starting}

    async def close(self) -> None:
        self._closed = True
        while self._starting:  # a replacement still starting is killed as it arrives
            await asyncio.sleep(0.01)
        workers = list(self._all)
        for worker in workers:
            worker.kill()
        await asyncio.gather(*(w.reader for w in workers), return_exceptions=True)


def _worker_env() -> dict[str, str]:
    # Workers get an almost empty environment: no hub secrets, no tokens.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": _REPO_ROOT}
    for key in ("LANG", "LC_ALL"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env
