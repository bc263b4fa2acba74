"""Schedulers of several nodes on one real database, under faults, on a fake clock: a
node that stops beating with a claimed run, an outage of the database across several
occurrences, a stalled node, ``overlap: skip`` across nodes and within a late batch,
lost claims under contention, and changes pushed by NOTIFY."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from hub.schedule.scheduler import (
    DB_DOWN,
    OVERLAPPED,
    POLL_S,
    SAFETY_POLL_S,
    STALLED,
    Scheduler,
)
from hub.schedule.store import ScheduleStore
from hub.store.hubdb import open_hub_database
from tests.schedule.world import T0, FakeClock, World
from tests.servers import database_name, fresh_database, pg_admin

Body = Callable[[World, list[ScheduleStore], str], Awaitable[None]]


def cluster(tmp_path: Path, body: Body, *, nodes: int = 3, kind: str = "postgresql",
            start: float = T0) -> None:
    """``body(world, stores, url)``: one store (its own connection pool) per node."""
    async def main(url: str) -> None:
        clock = FakeClock(start)
        stores = [ScheduleStore(open_hub_database(url), clock=clock.now)
                  for _ in range(nodes)]
        world = World(stores[0], clock)
        try:
            await body(world, stores, url)
        finally:
            for node in world.nodes:
                await node.stop()
            for store in stores:
                store.db.close()

    with fresh_database(kind, tmp_path) as url:
        asyncio.run(main(url))


def start_nodes(w: World, stores: list[ScheduleStore], **options: object) -> list[Scheduler]:
    return [w.node(f"n{i}", store, own_clock=True, liveness=w.liveness, **options)
            for i, store in enumerate(stores)]


def test_a_node_that_stops_beating_leaves_one_interrupted_run_retried_once(
        tmp_path: Path) -> None:
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        sid = w.add("0 * * * *", maxRetries=1)          # at T0, then an hour later
        w.jobs.durations[sid] = 1000                     # the first run hangs
        nodes = start_nodes(w, stores)
        await asyncio.gather(*(n.start() for n in nodes))
        await w.run_until(0)
        (victim,) = w.jobs.fired_on
        w.stall(victim)                                  # it stops, mid-run
        w.liveness.dead.add(victim)                      # and its heartbeat ends
        w.jobs.durations[sid] = 1
        await w.run_until(120)
        ((gone, firing, node),) = w.jobs.interrupted
        assert (gone, firing.occurrence, firing.attempt, node) == (sid, T0, 0, victim)
        assert firing.job_id == w.jobs.job_ids[0]       # the run's own history id
        assert [(t - T0, a, r) for _, t, a, r in w.jobs.fired] == [
            (0, 0, "scheduled"), (45, 1, "retry")]      # suspected at +5, sure at +15
        assert victim not in w.jobs.fired_on[1:]
        row = w.store.get(sid)
        assert row is not None and (row.retry_at, row.retry_attempt) == (None, 0)
        assert row.last_status == "success"

    cluster(tmp_path, body, start=T0 - 5)


@pytest.mark.expected_warning
def test_an_outage_of_the_database_is_one_missed_record(tmp_path: Path) -> None:
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        sid = w.add("* * * * * *")
        nodes = start_nodes(w, stores[:2])
        await asyncio.gather(*(n.start() for n in nodes))
        await w.run_until(3)
        name = database_name(url)
        pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
        try:
            pg_admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
            await w.run_until(8)                         # 4 ... 8 cannot be claimed
        finally:
            pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true")
        await w.run_until(40)
        assert w.jobs.missed_of(sid) == [(4, 8, 5, DB_DOWN)]
        assert w.jobs.times(sid) == [1, 2, 3, *range(9, 41)]
        assert w.jobs.missed[0][1].message.startswith(
            "the hub database was unreachable (5 occurrences from 2026-11-19T00:00:04Z to "
            "2026-11-19T00:00:08Z")

    cluster(tmp_path, body, nodes=2)


@pytest.mark.expected_warning
def test_a_stalled_node_alone_reports_one_gap_and_runs_one_late_occurrence(
        tmp_path: Path) -> None:
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        sid = w.add("* * * * * *")                      # overlap: skip
        w.jobs.durations[sid] = 0.5
        (node,) = start_nodes(w, stores)
        await node.start()
        await w.run_until(3.7)
        w.stall("n0")                                    # its loop blocked for 5 minutes
        w.clock.set(T0 + 303.5)
        w.clock.thaw(w.clocks["n0"])
        await w.run_until(320)
        assert w.jobs.times(sid) == [1, 2, 3, *range(303, 321)]
        assert w.jobs.most_at_once[sid] == 1            # never side by side
        assert w.jobs.missed_of(sid) == [(4, 302, 299, STALLED)]

    cluster(tmp_path, body, nodes=1, kind="sqlite")


@pytest.mark.expected_warning
def test_a_stalled_node_beside_live_ones_costs_nothing(tmp_path: Path) -> None:
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        sid = w.add("* * * * * *")
        w.jobs.durations[sid] = 0.5
        nodes = start_nodes(w, stores[:2])
        await asyncio.gather(*(n.start() for n in nodes))
        await w.run_until(3.7)
        w.stall("n1")
        await w.run_until(303.5)
        w.clock.thaw(w.clocks["n1"])
        await w.run_until(320)
        assert w.jobs.times(sid) == list(range(1, 321))
        assert w.jobs.most_at_once[sid] == 1
        assert w.jobs.missed == []

    cluster(tmp_path, body, nodes=2)


def test_overlap_skip_holds_across_nodes(tmp_path: Path) -> None:
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        skip = w.add("*/10 * * * * *")
        allow = w.add("*/10 * * * * *", overlap="allow")
        w.jobs.durations = {skip: 25, allow: 25}
        nodes = start_nodes(w, stores)
        await asyncio.gather(*(n.start() for n in nodes))
        await w.run_until(100)
        assert w.jobs.times(skip) == [10, 40, 70, 100]
        assert w.jobs.most_at_once[skip] == 1
        assert w.jobs.missed_of(skip) == [(20, 90, 6, OVERLAPPED)]   # one record
        assert w.jobs.times(allow) == list(range(10, 101, 10))
        assert w.jobs.most_at_once[allow] == 3

    cluster(tmp_path, body)


def _backends(name: str) -> set[int]:
    return {int(pid) for (pid,) in pg_admin(
        "SELECT pid FROM pg_stat_activity WHERE datname = %s", [name])}


@pytest.mark.parametrize("kind", ["postgresql", "postgresql-odbc"])
def test_lost_claims_cost_no_error_and_no_connection(
        tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture) -> None:
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        ids = [w.add("* * * * * *", name=f"s{i}", overlap="allow") for i in range(20)]
        nodes = start_nodes(w, stores)
        await asyncio.gather(*(n.start() for n in nodes))
        await w.run_until(5)
        name = database_name(url)
        before = _backends(name)
        await w.run_until(15)
        after = _backends(name)
        assert before <= after                           # none dropped
        assert len(after) <= len(stores) * (stores[0].db.pool_size + 1)   # + a listener
        for sid in ids:
            assert w.jobs.times(sid) == list(range(1, 16))
        for node in w.nodes:
            await node.stop()
        for store in stores:
            store.db.close()     # a session's statistics are flushed as it ends
        rollbacks = pg_admin("SELECT xact_rollback FROM pg_stat_database WHERE datname = %s",
                             [name])
        assert rollbacks[0][0] == 0, "a statement failed on the server"

    caplog.set_level(logging.DEBUG, logger="webhub")
    cluster(tmp_path, body, kind=kind)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert not [r for r in caplog.records if "failed" in r.getMessage()]


def test_a_change_on_one_node_reaches_the_others_without_polling(tmp_path: Path) -> None:
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        nodes = start_nodes(w, stores[:2], refresh_s=1e9)
        await asyncio.gather(*(n.start() for n in nodes))
        await w.run_until(1)
        sid = w.add("*/5 * * * * *")                    # saved through node 0's pool

        async def seen(want: bool) -> None:
            deadline = time.monotonic() + 10
            while (any(s["id"] == sid for s in nodes[1].status())) != want:
                assert time.monotonic() < deadline, "the change never reached node 1"
                await asyncio.sleep(0.02)

        await seen(True)
        w.edit(sid, enabled=False)
        await seen(False)

    cluster(tmp_path, body, nodes=2)


@pytest.mark.expected_warning  # the listener's lost connection is logged
def test_a_node_whose_listener_is_away_polls_until_it_is_back(tmp_path: Path) -> None:
    """Pooled connections may work while the listener's is gone: changes are then
    polled for, and notifications take over again once it has reconnected."""
    async def body(w: World, stores: list[ScheduleStore], url: str) -> None:
        node = start_nodes(w, stores[:1], refresh_s=SAFETY_POLL_S)[0]
        await node.start()
        quiet = node.refresh_s
        assert quiet == SAFETY_POLL_S and node._listener is not None
        await _until(lambda: node._listener is not None and node._listener.backend_pid)
        seen: list[float] = []
        away = node._listener_away

        def noted_away() -> None:
            away()
            seen.append(node.refresh_s)
        node._listener_away = noted_away  # type: ignore[method-assign]
        pid = node._listener.backend_pid
        pg_admin("SELECT pg_terminate_backend(%s)", [pid])
        await _until(lambda: seen == [POLL_S])
        await _until(lambda: node.refresh_s == quiet)  # reconnected: listening again
        assert node._listener.backend_pid != pid

    cluster(tmp_path, body, nodes=1)


async def _until(check: Callable[[], object], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "it never happened"
        await asyncio.sleep(0.02)
