"""The engine: runs jobs in worker processes under their limits.

``Engine.run`` takes a ``RunRequest`` and returns a ``RunResult``; console lines
arrive through the request's ``on_log`` as they happen. The engine knows no HTTP
and no database: calls a job makes to the host (``db.exec``, ``http()``) go to a
``BridgeHost`` the hub supplies, which applies policy; what changes while a run is
active is its ``RunState``, made here and handed to the bridge with each call.

Places: a worker's warm isolate serves up to ``runs_per_worker`` runs at once,
interleaved at their awaits (a run that waits holds no worker); a run that must be
alone takes a whole worker (``Isolation: fresh``, a ``Memory`` above the default, a
debug run, a job in quarantine). At most ``max_concurrent`` workers hold runs.

Limits stay per run. A run alone on its worker: the runtime limit is a deadline here
(the worker is killed), CPU and resident memory are the worker's, read from /proc. A
run that shares its worker: at the deadline the worker ends that run alone; its CPU is
charged and stopped by the worker (``cpu_monitor``). The memory limit is V8's hard heap
limit in the worker (the isolate's covers every run it holds). A run the worker cannot
stop ends the worker: its neighbours fail with JOB-005, and its job runs alone for
``QUARANTINE_S``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from hub.engine.active_run import ActiveRun
from hub.engine.admission import busy
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
from shared.header import DEFAULT_LIMITS

log = logging.getLogger("webhub.engine")

# How long a job whose run broke its worker runs alone, on a worker of its own.
QUARANTINE_S = 600.0

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

    def on_exit(self, neighbour_broke: bool = False) -> None:
        if not self.result.done():
            self.result.set_result({"ok": False, "message": "The syntax check could not run"})

    def on_breach(self, limit: str) -> None: ...


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
        self.pool = WorkerPool(config.max_concurrent + config.spare_workers,
                               config.caps.line_limit, busy_limit=config.max_concurrent,
                               runs_per_worker=config.runs_per_worker)
        self._active: dict[str, ActiveRun] = {}
        self.quarantine: dict[str, float] = {}  # job name -> until (monotonic)

    async def start(self) -> None:
        await self.pool.start()

    async def close(self) -> None:
        await self.pool.close()

    def must_be_alone(self, req: RunRequest) -> bool:
        """Whether a run takes a whole worker: what cannot share an isolate safely."""
        if self.config.runs_per_worker <= 1 or req.isolation == "fresh":
            return True
        if req.limits.memory_mb > DEFAULT_LIMITS.memory_mb or req.debugger is not None:
            return True
        until = self.quarantine.get(req.job_name)
        if until is not None and until < time.monotonic():
            del self.quarantine[req.job_name]
            return False
        return until is not None

    def _quarantine(self, req: RunRequest) -> None:
        log.warning("job %s broke a limit its worker could not stop: it runs on a worker of "
                    "its own for %.0f minutes", req.job_name, QUARANTINE_S / 60)
        self.quarantine[req.job_name] = time.monotonic() + QUARANTINE_S

    async def run(self, req: RunRequest) -> RunResult:
        """Run one job to its result. Raises ``TooManyRequests`` if no place comes
        within the queue timeout; cancelling the caller cancels the run. No path keeps
        a place from the pool."""
        alone = self.must_be_alone(req)
        worker = self.pool.try_place(req.job_id, alone) or await self._wait_for_place(req, alone)
        active: ActiveRun | None = None
        try:
            if req.on_start is not None:
                req.on_start()
            active = ActiveRun(req, worker, self.bridge, self.config.caps, alone,
                               on_broke=lambda: self._quarantine(req))
            self._active[req.job_id] = active
            return await active.execute()
        finally:
            self._active.pop(req.job_id, None)
            self._settle_place(worker, req.job_id, active)
            if active is not None:
                active.state.end()

    async def _wait_for_place(self, req: RunRequest, alone: bool) -> WorkerProcess:
        timeout_ms = self.config.queue_timeout_ms
        worker = await self.pool.place(req.job_id, alone, timeout_ms / 1000)
        if worker is None:
            raise busy(timeout_ms, "Too many jobs are running")
        return worker

    def _settle_place(self, worker: WorkerProcess, run: str, active: ActiveRun | None) -> None:
        """After a run, however it ended: a place the run never used is given back; a
        run still going that nobody waits for is ended; one that reported its outcome
        has left its place already."""
        if active is None or not active.handed:
            worker.drop(run)  # the run never reached the worker
        elif not active.finished.done():
            active.stop(JobFailed("The run was abandoned by the hub"))

    async def check_syntax(self, source: str) -> dict[str, Any]:
        """``{"ok": True}`` or ``{"ok": False, "message", "line", "column"}``; runs nothing."""
        timeout_ms = self.config.queue_timeout_ms
        check_id = "check-" + new_ref()
        worker = self.pool.try_place(check_id) or await self.pool.place(
            check_id, False, timeout_ms / 1000)
        if worker is None:
            raise busy(timeout_ms, "No worker is ready")
        check = _SyntaxCheck()
        worker.places[check_id] = check
        try:
            worker.send({"op": "check", "run": check_id, "source": source})
            return await asyncio.wait_for(check.result, 10)
        except TimeoutError:  # no answer: its worker is not to be trusted
            worker.kill()
            raise
        finally:
            # A check cancelled (its caller left) only gives its place back: the worker
            # may hold other runs, and a late answer names a place nobody holds (dropped).
            worker.drop(check_id)

    async def ready(self, wait_s: float = 1.0) -> bool:
        """Whether a run could start now: a place is free, or frees within ``wait_s``."""
        return await self.pool.wait_placeable(wait_s)

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
        counts = self.pool.counts()
        return {"workersRunning": counts["busy"], "workersQueued": counts["queued"],
                "workersMax": self.config.max_concurrent, "runsInFlight": counts["runs"],
                "runsPerWorker": self.config.runs_per_worker, **counts}

    def worker_loads(self) -> dict[int, int]:
        """Runs in flight on each worker process, by pid."""
        return self.pool.loads()
