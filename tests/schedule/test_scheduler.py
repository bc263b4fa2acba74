"""The scheduler on a fake clock: when it fires, what stops it, overlap, retries,
missed occurrences, bad rows, and three nodes sharing one PostgreSQL database.
(Faults across nodes: tests/schedule/test_scheduler_faults.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest

from hub.schedule.model import Schedule
from hub.schedule.scheduler import (
    DB_DOWN,
    HUB_DOWN,
    OVERLAPPED,
    Firing,
    Missed,
    Scheduler,
    SystemClock,
)
from hub.schedule.store import SCHEDULE_TABLE, OpenRun, ScheduleStore
from hub.schedule.timing import RETRY_CAP_S, retry_delay
from hub.store.hubdb import HubDatabase, open_hub_database
from shared.errors import StoreUnavailable
from tests.schedule.world import T0, FakeClock, World, run
from tests.servers import fresh_database


def test_fires_at_the_right_times(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        every10 = w.add("*/10 * * * * *")
        minutely = w.add("* * * * *")
        node = w.node()
        await node.start()
        await w.run_until(65)
        assert w.jobs.times(every10) == [10, 20, 30, 40, 50, 60]
        assert w.jobs.times(minutely) == [60]
        assert {f[3] for f in w.jobs.fired} == {"scheduled"}
        row = w.store.get(every10)
        assert row is not None and (row.last_run, row.next_run, row.last_status) == (
            T0 + 60, T0 + 70, "success")
        status = {s["id"]: s for s in node.status()}
        assert status[every10]["next"] == T0 + 70 and not status[every10]["running"]
        assert w.store.claimed_by(every10, "2026-11-19T00:00:10Z") == "n1"

    run(tmp_path, body, start=T0 + 1)


def test_disabled_or_deleted_rows_stop_at_once(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        off, gone, kept = (w.add("* * * * * *") for _ in range(3))
        node = w.node()
        await node.start()
        await w.run_until(3)
        w.edit(off, enabled=False)
        assert w.store.delete(gone)
        await w.run_until(4)   # before any refresh: the re-read after the claim stops them
        await w.run_until(12)
        assert w.jobs.times(off) == w.jobs.times(gone) == [1, 2, 3]
        assert w.jobs.times(kept) == list(range(1, 13))
        assert [s["id"] for s in node.status()] == [kept]   # the refresh dropped them

    run(tmp_path, body)


def test_a_refresh_picks_up_what_other_nodes_changed(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        edited = w.add("*/10 * * * * *")
        await w.node().start()
        await w.run_until(12)
        w.edit(edited, cron="*/3 * * * * *")             # NextRun afresh: T0 + 15
        made = w.add("*/7 * * * * *")                    # NextRun: T0 + 14
        await w.run_until(30)
        assert w.jobs.times(edited) == [10, 15, 18, 21, 24, 27, 30]
        # Seen at the refresh at T0 + 15: 14 is within the grace, so it runs late.
        assert w.jobs.times(made) == [14, 21, 28]

    run(tmp_path, body)


def test_stop_lets_running_jobs_finish_then_cancels(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        sid = w.add("* * * * * *")
        started, release = asyncio.Event(), asyncio.Event()

        async def fire(schedule: Schedule, firing: Firing) -> str:
            started.set()
            await release.wait()
            return "success"

        patient = Scheduler(w.store, fire, w.jobs.record_missed, "a", w.clock, drain_s=30.0,
                            refresh_s=5.0)
        await patient.start()
        w.clock.set(T0 + 1)
        await started.wait()
        assert patient.status()[0]["running"]
        stopping = asyncio.create_task(patient.stop())
        release.set()
        await stopping
        row = w.store.get(sid)
        assert row is not None and (row.last_run, row.last_status) == (T0 + 1, "success")

        started.clear()
        release.clear()
        hasty = Scheduler(w.store, fire, w.jobs.record_missed, "b", w.clock, drain_s=0.0,
                          refresh_s=5.0, interrupted=w.jobs.record_interrupted)
        await hasty.start()
        w.clock.set(T0 + 2)
        await started.wait()
        await hasty.stop()                                # the job is cancelled
        row = w.store.get(sid)
        # Its outcome is not known: the run is interrupted, under the id it ran with.
        assert row is not None and (row.last_run, row.last_status) == (T0 + 2, "interrupted")
        ((gone, firing, node),) = w.jobs.interrupted
        assert (gone, firing.occurrence, node) == (sid, T0 + 2, "b") and firing.job_id
        assert not hasty.status()[0]["running"]

    run(tmp_path, body)


def test_overlap_skip_reports_missed_and_allow_runs_alongside(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        skip = w.add("*/10 * * * * *")
        allow = w.add("*/10 * * * * *", overlap="allow")
        w.jobs.durations = {skip: 25, allow: 25}
        await w.node().start()
        await w.run_until(45)
        assert w.jobs.times(skip) == [10, 40]
        # The skipped ones of an hour are one record, counted on as they come.
        assert w.jobs.missed_of(skip) == [(20, 30, 2, OVERLAPPED)]
        assert w.jobs.times(allow) == [10, 20, 30, 40]

    run(tmp_path, body)


def test_retry_delays_double_up_to_a_day() -> None:
    assert [retry_delay(n) for n in (1, 2, 3, 4)] == [30, 60, 120, 240]
    assert retry_delay(13) == retry_delay(100) == RETRY_CAP_S == 86400


def test_failed_runs_are_retried_with_backoff(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        sid = w.add("0 0 * * *", maxRetries=3)
        w.jobs.outcomes[sid] = "failed"
        await w.node().start()
        await w.run_until(1000)
        assert [(t - T0, a, r) for _, t, a, r in w.jobs.fired] == [
            (0, 0, "scheduled"), (30, 1, "retry"), (90, 2, "retry"), (210, 3, "retry")]
        row = w.store.get(sid)
        assert row is not None and (row.retry_at, row.retry_attempt) == (None, 0)
        assert row.last_status == "failed"

    run(tmp_path, body, start=T0 - 5)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_pending_retry_survives_a_restart(tmp_path: Path, kind: str) -> None:
    async def body(w: World) -> None:
        sid = w.add("0 0 * * *", maxRetries=2)
        w.jobs.outcomes[sid] = "failed"
        first = w.node("before")
        await first.start()
        await w.run_until(10)
        await first.stop()
        w.nodes.remove(first)
        row = w.store.get(sid)
        assert row is not None and (row.retry_at, row.retry_attempt) == (T0 + 30, 1)
        w.clock.set(T0 + 100)              # down past the retry time
        await w.node("after").start()
        await w.run_until(100)
        assert w.jobs.fired[-1] == (sid, T0 + 30, 1, "retry")   # promptly, at start
        row = w.store.get(sid)
        assert row is not None and (row.retry_at, row.retry_attempt) == (T0 + 160, 2)
        w.jobs.outcomes[sid] = "success"
        await w.run_until(200)
        assert w.jobs.fired[-1] == (sid, T0 + 160, 2, "retry")
        row = w.store.get(sid)
        assert row is not None and (row.retry_at, row.retry_attempt) == (None, 0)
        assert row.last_status == "success"

    run(tmp_path, body, start=T0 - 5, kind=kind)


@pytest.mark.parametrize("mode", ["skip", "one"])
def test_missed_while_the_hub_was_down(tmp_path: Path, mode: str) -> None:
    async def body(w: World) -> None:
        sid = w.add("* * * * *", catchUp=mode)          # NextRun: T0 + 60
        w.clock.set(T0 + 630)
        a, b = w.node("a"), w.node("b")                 # two nodes start together
        await asyncio.gather(a.start(), b.start())
        await w.run_until(665)
        if mode == "skip":
            # One record for the gap, by one node: 60 ... 600, ten occurrences.
            assert w.jobs.missed_of(sid) == [(60, 600, 10, HUB_DOWN)]
            assert w.jobs.times(sid) == [660]
        else:
            assert w.jobs.missed_of(sid) == [(60, 540, 9, HUB_DOWN)]
            assert [(t - T0, r) for _, t, _, r in w.jobs.fired] == [
                (600, "catch-up"), (660, "scheduled")]
        row = w.store.get(sid)
        assert row is not None and row.next_run == T0 + 720
        message = w.jobs.missed[0][1].message
        assert message.startswith(HUB_DOWN) and "occurrences from 2026-11-19T00:01:00Z" in (
            message)

    run(tmp_path, body, start=T0 + 1)


def test_a_long_downtime_is_one_record(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        sid = w.add("* * * * * *")                      # NextRun: T0 + 1
        w.clock.set(T0 + 20_310)
        await w.node().start()
        # From before its start: accounted 10 s after it (time for nodes that were up
        # and know better), up to the grace (5 s) before then.
        await w.run_until(20_330)
        (missed,) = w.jobs.missed
        assert missed == (sid, Missed(T0 + 1, T0 + 20_315, 20_315, HUB_DOWN))
        # The first 10,000 are claimed one by one, the rest counted.
        assert w.store.claimed_by(sid, "2026-11-19T00:00:01Z") == "n1"
        assert w.store.claimed_by(sid, "2026-11-19T02:46:40Z") == "n1"      # 10,000th
        assert w.store.claimed_by(sid, "2026-11-19T02:46:41Z") is None

    run(tmp_path, body)


@pytest.mark.expected_warning
def test_a_bad_row_does_not_stop_the_others(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        bad_cron, broken, good = (w.add("* * * * * *") for _ in range(3))
        w.store.db.write(f"UPDATE {SCHEDULE_TABLE} SET Cron = 'bogus' WHERE ID = ?",
                         (bad_cron,))
        w.jobs.broken.add(broken)
        node = w.node()
        assert await node.reload() == 2
        await node.start()
        await w.run_until(3)
        assert w.jobs.times(good) == [1, 2, 3]
        assert w.jobs.times(bad_cron) == []

    run(tmp_path, body)


class FlakyStore(ScheduleStore):
    """A database that cannot be reached while the clock is in ``down``."""

    def __init__(self, inner: ScheduleStore, down: tuple[float, float]) -> None:
        super().__init__(inner.db, clock=inner.clock)
        self.down = down

    def claim_many(self, items: Sequence[tuple[int, str]], node: str) -> set[tuple[int, str]]:
        if self.down[0] <= self.clock() <= self.down[1]:
            raise StoreUnavailable("The hub database is unavailable: gone")
        return super().claim_many(items, node)


@pytest.mark.expected_warning
def test_an_unreachable_claim_does_not_fire(tmp_path: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    async def body(w: World) -> None:
        one, two = w.add("* * * * * *"), w.add("* * * * * *")
        await w.node(store=FlakyStore(w.store, (T0 + 2, T0 + 3))).start()
        await w.run_until(12)
        assert w.jobs.times(one) == w.jobs.times(two) == [1, 4, *range(5, 13)]
        # Once the grace has passed, the two are one missed record each.
        assert w.jobs.missed_of(one) == w.jobs.missed_of(two) == [(2, 3, 2, DB_DOWN)]

    run(tmp_path, body)
    warned = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "claim" in warned[0].getMessage()   # said once


def test_reload_counts_enabled_schedules(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        for _ in range(3):
            w.add("0 * * * *")
        w.add("0 * * * *", enabled=False)
        node = w.node()
        assert await node.reload() == 3
        w.add("*/5 * * * *")
        assert await node.reload() == 4

    run(tmp_path, body)


@pytest.mark.slow
def test_ten_thousand_schedules_load(tmp_path: Path) -> None:
    """All of them, each once. How fast is measured in the bench (bench/schedule_bench.py),
    not asserted here: a busy machine made a time bound fail."""
    async def body(w: World) -> None:
        crons = ("0 0 1 1 *", "*/5 * * * *", "0 3 * * 1-5", "15 */2 * * *")
        zones = ("UTC", "Europe/London", "America/New_York")
        w.store.ensure_schema()
        with w.store.db.transaction() as tx:
            for i in range(10_000):
                tx.write(f"INSERT INTO {SCHEDULE_TABLE} (Name, Cron, JobName, Params, Enabled, "
                         "Timezone, CatchUp, Overlap, MaxRetries, RetryAttempt, UpdatedAt) "
                         "VALUES (?, ?, 'job', '{}', 1, ?, 'skip', 'skip', 0, 0, 0)",
                         (f"s{i}", crons[i % 4], zones[i % 3]))
        assert await w.node().reload() == 10_000

    run(tmp_path, body)


def test_the_system_clock_does_not_wait_for_the_past() -> None:
    clock = SystemClock()
    asyncio.run(clock.sleep_until(clock.now() - 1))


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    with fresh_database("postgresql", tmp_path) as url:
        yield url


def test_three_nodes_fire_each_occurrence_once(pg_url: str) -> None:
    async def main() -> None:
        clock = FakeClock(T0)
        databases: list[HubDatabase] = [open_hub_database(pg_url) for _ in range(3)]
        stores = [ScheduleStore(db, clock=clock.now) for db in databases]
        world = World(stores[0], clock)
        sid, other = world.add("* * * * * *"), world.add("*/2 * * * * *")
        nodes = [world.node(f"node{i}", store=s) for i, s in enumerate(stores)]
        try:
            await asyncio.gather(*(n.start() for n in nodes))
            await world.run_until(20)
        finally:
            for node in nodes:
                await node.stop()
            for db in databases:
                db.close()
        assert world.jobs.times(sid) == [float(k) for k in range(1, 21)]
        assert world.jobs.times(other) == [float(k) for k in range(2, 21, 2)]

    asyncio.run(main())


class LateStore(ScheduleStore):
    """A database that cannot say which runs are open until the clock reaches ``up``."""

    def __init__(self, inner: ScheduleStore, up: float) -> None:
        super().__init__(inner.db, clock=inner.clock)
        self.up = up

    def open_runs(self, nodes: Iterable[str] | None = None) -> list[OpenRun]:
        if self.clock() < self.up:
            raise StoreUnavailable("The hub database is unavailable: gone")
        return super().open_runs(nodes)


@pytest.mark.expected_warning
def test_runs_a_last_life_left_are_reported_once_the_store_answers(tmp_path: Path) -> None:
    async def body(w: World) -> None:
        sid = w.add("0 0 * * *")
        left = OpenRun(sid, "2026-11-18T00:00:00Z", "n1", T0 - 86400, 0, "scheduled", "job_x")
        w.store.begin_runs([left])
        node = w.node("n1", store=LateStore(w.store, T0 + 3))
        await node.start()                               # the store cannot tell yet
        await w.run_until(12)
        ((gone, firing, name),) = w.jobs.interrupted
        assert (gone, firing.job_id, firing.occurrence, name) == (sid, "job_x", T0 - 86400,
                                                                  "n1")
        assert w.store.open_runs({"n1"}) == []

    run(tmp_path, body)
