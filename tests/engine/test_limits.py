"""Limits and faults: every run ends with the right code and the engine carries on."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable

import pytest

from hub.engine.engine import EngineConfig, RunRequest, RunResult
from hub.engine.pool import WorkerProcess
from shared.errors import TooManyRequests
from shared.header import Limits
from tests.engine.conftest import EngineHarness, body_json

SHORT = Limits(runtime_ms=1_500, memory_mb=64, cpu_ms=500)


def assert_limit(result: RunResult, limit: str) -> None:
    assert result.error is not None, result.body
    assert (result.error.code, result.error.limit) == ("JOB-003", limit), result.error.message
    assert limit in result.error.message or limit.upper() in result.error.message


def assert_healthy(engine: EngineHarness) -> None:
    assert body_json(engine.run("return 'still here'")) == "still here"


def test_runtime_limit_kills_a_sleeping_job(engine: EngineHarness) -> None:
    result = engine.run("await new Promise(r => setTimeout(r, 60000))", limits=SHORT)
    assert_limit(result, "runtime")
    assert 1_400 <= result.runtime_ms < 3_000
    assert_healthy(engine)


@pytest.mark.parametrize("source", ["for (;;) {}", "await null; for (;;) {}",
                                    "await new Promise(r => setTimeout(r, 5)); while (true) {}"],
                         ids=["sync", "after-await", "after-timer"])
def test_cpu_limit_catches_busy_loops(engine: EngineHarness, source: str) -> None:
    result = engine.run(source, limits=SHORT)
    assert_limit(result, "cpu")
    assert result.runtime_ms < SHORT.runtime_ms  # the CPU limit, not the runtime limit
    assert_healthy(engine)


def test_heap_limit(engine: EngineHarness) -> None:
    result = engine.run("const a = []; for (;;) a.push(new Array(1 << 16).fill(1))", limits=SHORT)
    assert_limit(result, "memory")
    assert_healthy(engine)


def test_four_gigabytes_outside_the_heap(engine: EngineHarness) -> None:
    source = """
const hoard = []
for (let i = 0; i < 64; i++) {
  const b = new Uint8Array(64 * 1024 * 1024); b.fill(1); hoard.push(b)
}
return hoard.length"""
    result = engine.run(source, limits=Limits(runtime_ms=20_000, memory_mb=64, cpu_ms=20_000))
    assert_limit(result, "memory")
    assert_healthy(engine)


def test_one_four_gigabyte_buffer_is_refused(engine: EngineHarness) -> None:
    result = engine.run("return new ArrayBuffer(4 * 1024 ** 3).byteLength", limits=SHORT)
    assert result.error is not None
    assert result.error.code in ("JOB-001", "JOB-003")
    assert_healthy(engine)


async def start_long_run(engine: EngineHarness, running: bool = False,
                         ) -> tuple[RunRequest, asyncio.Future[RunResult]]:
    """A 10 s run, once it has a place on a worker (``running``: once the worker runs it,
    which its first console line, streamed live, says)."""
    placed, going = asyncio.Event(), asyncio.Event()
    req = engine.request("console.log('going'); await new Promise(r => setTimeout(r, 10000)); "
                         "return 1", on_start=placed.set, on_log=lambda _line: going.set())
    task = asyncio.ensure_future(engine.engine.run(req))
    await (going if running else placed).wait()
    return req, task


def holding(engine: EngineHarness, job_id: str) -> list[WorkerProcess]:
    """The workers that hold a place for the run ``job_id``."""
    return [w for w in engine.engine.pool._all if job_id in w.places]


async def until(condition: Callable[[], bool], timeout_s: float = 5) -> None:
    """Wait for what no event announces (a worker's report read by the pool)."""
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.01)


def test_kill_minus_nine_mid_run(engine: EngineHarness) -> None:
    async def kill_when_running() -> RunResult:
        req, task = await start_long_run(engine, running=True)
        busy = holding(engine, req.job_id)
        assert len(busy) == 1
        os.kill(busy[0].pid, signal.SIGKILL)
        return await task

    result: RunResult = engine.call(kill_when_running())
    assert result.error is not None and result.error.code == "JOB-001"
    assert "ended unexpectedly" in result.error.message
    assert_healthy(engine)


def test_stop_ends_a_run_now(engine: EngineHarness) -> None:
    async def stop_it() -> tuple[RunResult, WorkerProcess]:
        req, task = await start_long_run(engine, running=True)
        assert [r.job_id for r in engine.engine.running()] == [req.job_id]
        [worker] = holding(engine, req.job_id)
        assert engine.engine.stop(req.job_id)
        result = await task
        # The run shared its worker: the worker ends it alone (it leaves its place)
        # and the worker process goes on.
        await until(lambda: req.job_id not in worker.places)
        return result, worker

    t0 = time.monotonic()
    result, worker = engine.call(stop_it())
    assert result.error is not None and result.error.message == "Stopped"
    assert time.monotonic() - t0 < 5
    assert engine.engine.running() == []
    assert worker.alive and not worker.has_ended()
    assert_healthy(engine)


def test_queue_timeout_refuses_with_429() -> None:
    # One worker holds runs, one run at a time: the first run takes the only place.
    harness = EngineHarness(EngineConfig(max_concurrent=1, runs_per_worker=1,
                                         queue_timeout_ms=200))
    try:
        async def crowd() -> list[object]:
            reqs = [harness.request("await new Promise(r => setTimeout(r, 600)); return 1")
                    for _ in range(3)]
            return await asyncio.gather(*(harness.engine.run(r) for r in reqs),
                                        return_exceptions=True)

        outcomes = harness.call(crowd())
        refused = [o for o in outcomes if isinstance(o, TooManyRequests)]
        done = [o for o in outcomes if isinstance(o, RunResult)]
        assert len(done) == 1 and done[0].ok
        assert len(refused) == 2 and refused[0].retry_after >= 1
        assert harness.engine.pool.counts()["queued"] == 0
        assert body_json(harness.run("return 1")) == 1
    finally:
        harness.close()


def test_cancelled_caller_leaves_the_queue() -> None:
    harness = EngineHarness(EngineConfig(max_concurrent=1, runs_per_worker=1,
                                         queue_timeout_ms=5_000))
    try:
        async def scenario() -> tuple[int, int]:
            placed = asyncio.Event()
            blocker = asyncio.ensure_future(harness.engine.run(harness.request(
                "await new Promise(r => setTimeout(r, 300)); return 1", on_start=placed.set)))
            await placed.wait()  # the only place is taken
            waiter = asyncio.ensure_future(harness.engine.run(harness.request("return 2")))
            await asyncio.sleep(0)  # one turn: it finds no place and joins the queue
            queued = harness.engine.pool.counts()["queued"]
            waiter.cancel()
            await asyncio.gather(waiter, return_exceptions=True)
            left = harness.engine.pool.counts()["queued"]
            assert (await blocker).ok
            return queued, left

        assert harness.call(scenario()) == (1, 0)  # one in the queue, then none
        assert harness.engine.pool.counts()["queued"] == 0
        assert body_json(harness.run("return 3")) == 3
    finally:
        harness.close()
