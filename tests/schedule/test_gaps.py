"""The first gap behind a watermark, for any pattern of claims (hypothesis), and the
words of a missed record and its reason."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub.schedule.model import Schedule
from hub.schedule.scheduler import Firing, Scheduler
from hub.schedule.store import ScheduleStore
from hub.schedule.timing import (
    DB_DOWN,
    HUB_DOWN,
    STALLED,
    UNCLAIMED,
    Entry,
    Missed,
    Timeline,
    cached_cron,
    occurrence_key,
    plan_missed,
)
from hub.schedule.upkeep import Upkeep
from hub.store.hubdb import open_hub_database
from tests.schedule.world import T0, FakeClock

EVERY_SECOND = cached_cron("* * * * * *", "UTC")
GRACE = 5.0


@pytest.fixture(scope="module")
def upkeep(tmp_path_factory: pytest.TempPathFactory) -> Upkeep:
    async def fire(schedule: Schedule, firing: Firing) -> str:
        return "success"

    # The store is never reached: the gap is worked out from the claims it is given.
    db = open_hub_database(f"sqlite:///{tmp_path_factory.mktemp('gaps') / 'hub.db'}")
    return Scheduler(ScheduleStore(db), fire, lambda *_: None, "n", FakeClock(T0),
                     grace_s=GRACE).upkeep


ROW = Schedule(id=1, name="s", cron="* * * * * *", job_name="job", params="{}", enabled=True,
               timezone="UTC", catch_up="skip", overlap="skip", max_retries=0, last_run=None,
               next_run=T0 + 1, last_status=None, retry_at=None, retry_attempt=0, updated=T0)


@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_the_first_gap_is_the_first_closed_run_of_unclaimed_occurrences(
        upkeep: Upkeep, claims: list[bool]) -> None:
    times = [T0 + 1 + i for i in range(len(claims))]
    now = times[-1]
    cutoff = now - GRACE
    claimed = {occurrence_key(t) for t, c in zip(times, claims, strict=True) if c}
    entry = Entry(ROW, EVERY_SECOND)
    gap = upkeep._first_gap(entry, plan_missed(EVERY_SECOND, T0 + 1, now), claimed, now)
    first = next((i for i, c in enumerate(claims) if not c), None)
    if first is None:                                  # all claimed: the watermark moves on
        assert gap is not None and gap.times == [] and gap.resume == min(now, cutoff) + 1
        return
    end = next((i for i in range(first, len(claims)) if claims[i]), len(claims))
    run = times[first:end]
    if run[-1] > cutoff:
        assert gap is None                             # may still be claimed late, or grow
        return
    assert gap is not None and gap.times == run and gap.resume == run[-1] + 1
    assert not {occurrence_key(t) for t in gap.times} & claimed


def test_what_a_missed_record_says() -> None:
    one = Missed(T0, T0, 1, DB_DOWN)
    assert one.message == DB_DOWN
    many = Missed(T0, T0 + 4, 5, STALLED, capped=True)
    assert many.message == ("this node was stalled (at least 5 occurrences from "
                            "2026-11-19T00:00:00Z to 2026-11-19T00:00:04Z, reported together)")


def test_the_reason_is_what_this_node_saw() -> None:
    seen = Timeline(T0 + 100)
    assert seen.reason(T0 + 50, T0 + 120) == HUB_DOWN          # from before it started
    assert seen.reason(T0 + 110, T0 + 120) == UNCLAIMED
    seen.store_ok(T0 + 130)
    seen.store_failed()                                        # down since the last call
    assert seen.reason(T0 + 131, T0 + 140) == DB_DOWN          # still down
    seen.store_ok(T0 + 150)
    assert seen.reason(T0 + 140, T0 + 145) == DB_DOWN
    assert seen.reason(T0 + 151, T0 + 160) == UNCLAIMED
    seen.stalled(T0 + 170, T0 + 300)
    assert seen.reason(T0 + 171, T0 + 299) == STALLED
