"""No failure keeps a place from the pool: a failure is injected at each step from
placing a run on a worker to giving its place back, and the places are counted
afterwards (a worker's warm isolate holds up to ``runs_per_worker`` runs at once; a run
that must be alone holds a whole worker)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine import protocol
from hub.engine.active_run import ActiveRun
from hub.engine.engine import EngineConfig, RunRequest, RunResult
from hub.engine.pool import WorkerPool, WorkerProcess
from shared.errors import TooManyRequests
from tests.engine.conftest import EngineHarness, body_json


class Injected(Exception):
    """The failure a test plants."""


@pytest.fixture()
def small(request: pytest.FixtureRequest) -> Iterator[EngineHarness]:
    """One worker holds runs (plus a spare), up to 16 at once by default; a test that
    needs every run alone on its worker asks for ``runs_per_worker`` 1 (indirect)."""
    runs_per_worker = getattr(request, "param", 16)
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=1,
                                         runs_per_worker=runs_per_worker,
                                         queue_timeout_ms=1_000))
    yield harness
    harness.close()


alone = pytest.mark.parametrize("small", [1], indirect=True, ids=["alone"])


def assert_pool_full(harness: EngineHarness) -> None:
    """No run keeps a place, every worker is back and ready, every place can be taken
    at once (a place kept by a run that is over would be missing), and runs work."""
    pool = harness.engine.pool

    async def back() -> None:
        async with asyncio.timeout(5):  # a worker is ready well within this
            while not (pool.counts()["runs"] == 0 and pool.counts()["idle"] == pool.size
                       and pool.can_place()):
                await asyncio.sleep(0.01)  # a worker's report, read by the pool, says so

    async def free_places() -> int:
        taken: list[tuple[WorkerProcess, str]] = []
        try:
            while True:
                run = f"probe-{len(taken)}"
                worker = pool.try_place(run)
                if worker is None:
                    return len(taken)
                taken.append((worker, run))
        finally:
            for worker, run in taken:
                worker.drop(run)
    harness.call(back(), timeout=15)
    assert harness.call(free_places()) == pool.busy_limit * pool.runs_per_worker
    assert pool.counts()["runs"] == 0
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
def test_a_failure_on_the_way_keeps_no_place(small: EngineHarness, monkeypatch: pytest.MonkeyPatch,
                                             owner: Any, name: str) -> None:
    calls = fail_once(monkeypatch, owner, name)
    with pytest.raises(Injected):
        small.run("return 1")
    assert calls
    assert_pool_full(small)


def test_a_failing_on_start_keeps_no_place(small: EngineHarness) -> None:
    def on_start() -> None:
        raise Injected("on_start")
    pool = small.engine.pool
    for _ in range(pool.busy_limit * pool.runs_per_worker + 1):  # more than there are places
        with pytest.raises(Injected):
            small.run("return 1", on_start=on_start)
    assert_pool_full(small)


@alone  # the hub watches the limits of a run alone on its worker (else the worker does)
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


def test_a_caller_cancelled_while_waiting_for_a_place(small: EngineHarness) -> None:
    async def cancel_while_waiting() -> None:
        pool = small.engine.pool
        while pool._starting:  # a process still starting could not be killed below
            await asyncio.sleep(0.005)
        for worker in list(pool._all):
            worker.kill()  # every worker is now starting again
        task = asyncio.ensure_future(small.engine.run(small.request("return 1")))
        for _ in range(2000):  # bounded: the run waits within a few loop turns
            if pool.counts()["queued"] or task.done():
                break
            await asyncio.sleep(0.001)
        assert pool.counts()["queued"] == 1 and not task.done(), "the run never waited"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pool.counts()["queued"] == 0
    small.call(cancel_while_waiting())
    assert_pool_full(small)


@pytest.mark.parametrize("small", [1, 16], indirect=True, ids=["alone", "shared"])
def test_a_caller_cancelled_mid_run(small: EngineHarness) -> None:
    """Alone, the run's worker is killed; sharing it, the worker ends the run alone:
    either way its place comes back."""
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


def test_a_cancelled_syntax_check_keeps_no_place(small: EngineHarness) -> None:
    """A syntax check holds a place beside runs: cancelled, it gives the place back and
    harms none of the runs on its worker."""
    async def cancel_check() -> None:
        task = asyncio.ensure_future(small.engine.check_syntax("return 1"))
        await asyncio.sleep(0)  # one turn: it has its place and has sent the check
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    async def beside_a_run() -> RunResult:
        started = asyncio.Event()
        neighbour = asyncio.ensure_future(small.engine.run(small.request(
            "await new Promise(r => setTimeout(r, 300)); return 'unharmed'",
            on_start=started.set)))
        await started.wait()
        for _ in range(3):
            await cancel_check()
        return await neighbour

    assert body_json(small.call(beside_a_run())) == "unharmed"
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
    assert small.engine.pool.counts()["queued"] == 0
    monkeypatch.undo()

    async def respawn() -> None:
        pool = small.engine.pool
        await asyncio.gather(*(pool._spawn() for _ in range(pool.size)))
    small.call(respawn())
    assert small.call(small.engine.ready(5)) is True
    assert_pool_full(small)


@pytest.mark.parametrize("small", [1, 16], indirect=True, ids=["alone", "shared"])
def test_ready_says_no_while_every_place_is_taken(small: EngineHarness) -> None:
    """Ready while a place is left; not once every place is taken, nor while a run
    waits for one; ready again once the runs are over."""
    engine, pool = small.engine, small.engine.pool
    places = pool.busy_limit * pool.runs_per_worker

    async def saturate() -> tuple[bool, bool, bool]:
        longs: list[RunRequest] = []
        running: list[asyncio.Future[RunResult]] = []

        async def start() -> None:
            started = asyncio.Event()
            longs.append(small.request("await new Promise(r => setTimeout(r, 10000)); return 1",
                                       on_start=started.set))
            running.append(asyncio.ensure_future(engine.run(longs[-1])))
            await started.wait()
        for _ in range(places - 1):
            await start()
        one_left = await engine.ready(1)  # every place but the last is taken
        await start()
        all_taken = await engine.ready(0.1)
        queued = asyncio.ensure_future(engine.run(small.request("return 2")))
        async with asyncio.timeout(5):  # it finds no place within a loop turn or two
            while pool.counts()["queued"] == 0:
                await asyncio.sleep(0)
        while_queued = await engine.ready(0.1)
        for long in longs:
            engine.stop(long.job_id)
        results: list[RunResult] = [*await asyncio.gather(*running), await queued]
        assert all(r.error is not None and r.error.message == "Stopped" for r in results[:-1])
        assert body_json(results[-1]) == 2
        return one_left, all_taken, while_queued
    assert small.call(saturate()) == (True, False, False)
    assert small.call(engine.ready(5)) is True


def test_a_worker_killed_from_outside_is_never_handed_a_run(small: EngineHarness) -> None:
    """SIGKILL of every (idle) worker, then a run at once, before the hub's loop has read
    the pipes close: the run goes to a replacement, not to a dead worker."""
    import os
    import signal

    assert_pool_full(small)  # every worker is ready, none holds a run
    pool = small.engine.pool

    async def kill_idle_then_place() -> tuple[list[int], WorkerProcess | None]:
        killed = [worker.pid for worker in pool._all if worker.alive]
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
            # Waits for the death without reaping, so the pool's reader has not seen it.
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        placed = pool.try_place("probe")
        if placed is not None:
            placed.drop("probe")
        return killed, placed

    killed, placed = small.call(kill_idle_then_place())
    assert len(killed) == pool.size and placed is None
    assert body_json(small.run("return 'ran on a replacement'")) == "ran on a replacement"
