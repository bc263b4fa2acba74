"""No failure keeps a worker from the pool: a failure is injected at each step from
acquiring a worker to releasing it, and the workers are counted afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine import protocol
from hub.engine.active_run import ActiveRun
from hub.engine.engine import EngineConfig, RunResult
from hub.engine.pool import WorkerPool, WorkerProcess
from shared.errors import TooManyRequests
from tests.engine.conftest import EngineHarness, body_json


class Injected(Exception):
    """The failure a test plants."""


@pytest.fixture()
def small() -> Iterator[EngineHarness]:
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=1,
                                         queue_timeout_ms=1_000))
    yield harness
    harness.close()


def assert_pool_full(harness: EngineHarness) -> None:
    """Every worker is back, idle or warming, and runs work (as many as there are
    workers, at once: a leaked worker would hold one of them)."""
    pool = harness.engine.pool

    async def idle_workers() -> int:
        async with asyncio.timeout(5):  # a worker is ready well within this
            while len(pool._idle) < pool.size:
                became_idle = asyncio.get_running_loop().create_future()
                pool._idle_watchers.append(became_idle)
                await became_idle
        return len([w for w in pool._idle if w.alive])
    assert harness.call(idle_workers(), timeout=15) == pool.size
    for _ in range(pool.size + 1):
        assert body_json(harness.run("return 'still here'")) == "still here"


def fail_once(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """``owner.name`` raises ``Injected`` the first time it is called."""
    original, calls = getattr(owner, name), []

    def failing(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise Injected(name)
        return original(*args, **kw)
    monkeypatch.setattr(owner, name, failing)
    return calls


@pytest.mark.parametrize("owner, name", [
    (WorkerProcess, "write"),                 # the run message cannot be sent
    (protocol, "encode"),                    # ... or not even encoded
    (ActiveRun, "__init__"),  # the run cannot be set up
    (ActiveRun, "_completed"),  # its outcome cannot be read
], ids=["send", "encode", "setup", "outcome"])
def test_a_failure_on_the_way_keeps_no_worker(small: EngineHarness, monkeypatch: pytest.MonkeyPatch,
                                              owner: Any, name: str) -> None:
    calls = fail_once(monkeypatch, owner, name)
    with pytest.raises(Injected):
        small.run("return 1")
    assert calls
    assert_pool_full(small)


def test_a_failing_on_start_keeps_no_worker(small: EngineHarness) -> None:
    def on_start() -> None:
        raise Injected("on_start")
    for _ in range(3):  # more than the pool has workers
        with pytest.raises(Injected):
            small.run("return 1", on_start=on_start)
    assert_pool_full(small)


@pytest.mark.expected_warning
def test_a_failing_watchdog_stops_its_run(small: EngineHarness,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    async def supervise(self: Any) -> None:
        raise Injected("supervise")
    monkeypatch.setattr(ActiveRun, "supervise", supervise)
    result = small.run("await new Promise(r => setTimeout(r, 3000)); return 1")
    assert result.error is not None and "could not watch" in result.error.message
    monkeypatch.undo()
    assert_pool_full(small)


def test_a_caller_cancelled_while_waiting_for_a_worker(small: EngineHarness) -> None:
    async def cancel_while_waiting() -> None:
        pool = small.engine.pool
        while pool._starting:  # a process still starting could not be killed below
            await asyncio.sleep(0.005)
        for worker in list(pool._all):
            worker.kill()  # every worker is now starting again
        task = asyncio.ensure_future(small.engine.run(small.request("return 1")))
        for _ in range(2000):  # bounded: the run waits within a few loop turns
            if pool._waiters or task.done():
                break
            await asyncio.sleep(0.001)
        assert pool._waiters and not task.done(), "the run never waited for a worker"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    small.call(cancel_while_waiting())
    assert_pool_full(small)


def test_a_caller_cancelled_mid_run(small: EngineHarness) -> None:
    async def cancel_mid_run() -> None:
        started = asyncio.Event()
        req = small.request("await new Promise(r => setTimeout(r, 10000)); return 1",
                            on_start=started.set)
        task = asyncio.ensure_future(small.engine.run(req))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    small.call(cancel_mid_run())
    assert_pool_full(small)


def test_a_cancelled_syntax_check_keeps_no_worker(small: EngineHarness) -> None:
    async def cancel_check() -> None:
        task = asyncio.ensure_future(small.engine.check_syntax("return 1"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    for _ in range(3):
        small.call(cancel_check())
    assert_pool_full(small)
    assert small.call(small.engine.check_syntax("return 1"))["ok"] is True


def test_no_worker_at_all_is_too_many_requests(small: EngineHarness,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker dead and none able to start: a run waits at most the queue
    timeout (SYS-429, not a hang) and the engine says it is not ready."""
    async def no_spawn(self: WorkerPool) -> None:
        return None
    monkeypatch.setattr(WorkerPool, "_spawn", no_spawn)

    async def kill_all() -> None:
        pool = small.engine.pool
        workers = list(pool._all)
        for worker in workers:
            worker.kill()
        await asyncio.gather(*(w.reader for w in workers))
    small.call(kill_all())
    assert small.call(small.engine.ready(0.2)) is False
    with pytest.raises(TooManyRequests):
        small.call(small.engine.run(small.request("return 1")), timeout=10)
    with pytest.raises(TooManyRequests):
        small.call(small.engine.check_syntax("return 1"), timeout=10)
    monkeypatch.undo()

    async def respawn() -> None:
        pool = small.engine.pool
        await asyncio.gather(*(pool._spawn() for _ in range(pool.size)))
    small.call(respawn())
    assert small.call(small.engine.ready(5)) is True
    assert_pool_full(small)


def test_ready_says_no_while_the_gate_is_saturated(small: EngineHarness) -> None:
    async def saturate() -> tuple[bool, bool]:
        started = asyncio.Event()
        long = small.request("await new Promise(r => setTimeout(r, 10000)); return 1",
                             on_start=started.set)
        running = asyncio.ensure_future(small.engine.run(long))
        await started.wait()
        idle_ready = await small.engine.ready(1)  # one slot taken, nobody queued
        queued = asyncio.ensure_future(small.engine.run(small.request("return 2")))
        while small.engine.gate.queued == 0:
            await asyncio.sleep(0)
        saturated_ready = await small.engine.ready(0.1)
        small.engine.stop(long.job_id)
        results: list[RunResult] = [await running, await queued]
        assert body_json(results[1]) == 2
        return idle_ready, saturated_ready
    assert small.call(saturate()) == (True, False)
    assert small.call(small.engine.ready(5)) is True


def test_a_worker_killed_from_outside_is_never_handed_a_run(small: EngineHarness) -> None:
    """SIGKILL of idle workers, then a run at once, before the hub's loop has read the
    pipes close: the run goes to a replacement, not to a dead worker."""
    import os
    import signal

    assert_pool_full(small)
    pool = small.engine.pool

    async def kill_idle_then_take() -> tuple[list[int], WorkerProcess | None]:
        assert await pool.wait_idle(10)  # a worker that just ran gets ready again first
        killed = [worker.pid for worker in pool._idle]
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
            # Waits for the death without reaping, so the pool's reader has not seen it.
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        return killed, pool.take_idle()

    killed, taken = small.call(kill_idle_then_take())
    assert killed and taken is None
    assert body_json(small.run("return 'ran on a replacement'")) == "ran on a replacement"
