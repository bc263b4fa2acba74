"""The engine: runs jobs in worker processes under their limits.

``Engine.run`` takes a ``RunRequest`` and returns a ``RunResult``; console lines
arrive through the request's ``on_log`` as they happen. The engine knows no HTTP
and no database: calls a job makes to the host (``db.exec``, ``http()``) go to a
``BridgeHost`` the hub supplies, which applies policy; what changes while a run is
active is its ``RunState``, made here and handed to the bridge with each call.

Limits: the runtime limit is a deadline here (the worker is killed); the CPU
limit is the worker's own CPU time read from /proc, so a synchronous busy loop
is caught by it; the memory limit is V8's hard heap limit inside the worker
plus a resident-memory watchdog here for memory outside the heap.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from hub.engine.active_run import ActiveRun
from hub.engine.admission import ConcurrencyGate, acquire_worker
from hub.engine.model import (
    BridgeHost,
    DebugHost,
    EngineConfig,
    RunRequest,
    RunResult,
    RunState,
    new_ref,
)
from hub.engine.pool import WorkerPool, WorkerProcess
from shared.errors import JobFailed

__all__ = ["BridgeHost", "DebugHost", "Engine", "EngineConfig", "RunRequest", "RunResult",
           "RunState", "RunningInfo", "new_ref"]


class _SyntaxCheck:
    def __init__(self) -> None:
        self.result: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def on_log(self, lines: list[list[Any]]) -> None: ...
    def on_call(self, call: dict[str, Any], size: int) -> None: ...
    def on_oversize(self, limit: str) -> None: ...

    def accepts_body(self, size: int) -> bool:
        return size == 0

    def on_done(self, meta: dict[str, Any], body: bytes, cpu_ms: int) -> None:
        if not self.result.done():
            self.result.set_result(meta)

    def on_exit(self) -> None:
        if not self.result.done():
            self.result.set_result({"ok": False, "message": "The syntax check could not run"})


@dataclass
class RunningInfo:
    job_id: str
    job_name: str
    origin: str
    started: float


class Engine:
    def __init__(self, config: EngineConfig, bridge: BridgeHost | None = None) -> None:
        self.config = config
        self.bridge = bridge
        self.gate = ConcurrencyGate(config.max_concurrent, config.queue_timeout_ms)
        self.pool = WorkerPool(config.max_concurrent + config.spare_workers,
                               config.caps.line_limit)
        self._active: dict[str, ActiveRun] = {}

    async def start(self) -> None:
        await self.pool.start()

    async def close(self) -> None:
        await self.pool.close()

    async def run(self, req: RunRequest) -> RunResult:
        """Run one job to its result. Raises ``TooManyRequests`` if the queue wait
        runs out (for a slot, then for a worker); cancelling the caller cancels
        the run (the worker is killed). No path keeps a worker from the pool."""
        loop = asyncio.get_running_loop()
        queued = loop.time()
        async with self.gate.slot():
            wait_s = self.config.queue_timeout_ms / 1000 - (loop.time() - queued)
            # An idle worker is the usual case: taken at once, without a timeout's timer.
            worker = self.pool.take_idle() or await acquire_worker(
                self.pool, wait_s, self.config.queue_timeout_ms)
            active: ActiveRun | None = None
            try:
                if req.on_start is not None:
                    req.on_start()
                active = ActiveRun(req, worker, self.bridge, self.config.caps)
                self._active[req.job_id] = active
                return await active.execute()
            finally:
                self._active.pop(req.job_id, None)
                self._settle_worker(worker, active)
                if active is not None:
                    active.state.end()

    def _settle_worker(self, worker: WorkerProcess, active: ActiveRun | None) -> None:
        """After a run, however it ended: a worker that never got the run is given
        back warm; one still running a run nobody waits for is killed (it is
        replaced); one that reported its outcome gets ready again by itself."""
        if active is None or not active.handed:
            worker.owner = None  # it was this run's, or nobody's: the run never reached it
            self.pool.release(worker)
        elif not active.finished.done():
            active.stop(JobFailed("The run was abandoned by the hub"))

    async def check_syntax(self, source: str) -> dict[str, Any]:
        """``{"ok": True}`` or ``{"ok": False, "message", "line", "column"}``; runs nothing."""
        timeout_ms = self.config.queue_timeout_ms
        worker = await acquire_worker(self.pool, timeout_ms / 1000, timeout_ms)
        check = _SyntaxCheck()
        worker.owner = check
        sent = answered = False
        try:
            worker.send({"op": "check", "source": source})
            sent = True
            result = await asyncio.wait_for(check.result, 10)
            answered = True
            return result
        finally:
            if worker.owner is check:
                worker.owner = None
            if answered or not sent:
                self.pool.release(worker)
            else:  # its answer is still to come, and would reach the next owner
                worker.kill()

    async def ready(self, wait_s: float = 1.0) -> bool:
        """Whether a run could start now: the gate is not saturated with runs
        already queued, and a live worker is idle or turns idle within ``wait_s``."""
        if self.gate.saturated:
            return False
        return await self.pool.wait_idle(wait_s)

    def running(self) -> list[RunningInfo]:
        return [RunningInfo(a.req.job_id, a.req.job_name, a.req.origin, a.started)
                for a in self._active.values()]

    def stop(self, job_id: str, message: str = "Stopped") -> bool:
        active = self._active.get(job_id)
        if active is None:
            return False
        active.stop(JobFailed(message))
        return True

    def metrics(self) -> dict[str, int]:
        return {"workersRunning": self.gate.running, "workersQueued": self.gate.queued,
                "workersMax": self.config.max_concurrent, **self.pool.counts()}
