"""The PostgreSQL rate window (one row per counter, one statement a hit) counts as the
buckets of the other databases do: a request is let through while the buckets that
reach into its window hold fewer hits than the limit, and a refused one waits until
the oldest of them leaves. Checked against that rule written out in Python, for any
run of requests hypothesis makes up, timed by the database's clock (set by the test)
whatever clocks the nodes that send them keep; and with the server's own clock, that
a node whose clock runs ahead no longer wipes out what the others counted."""

from __future__ import annotations

import itertools
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.limits_store import LimitsStore, bucket_floor
from tests.servers import fresh_database
from tests.store.set_clock import SetClock

WINDOW = 60.0
WIDTH = 1
START = 1_800_000_000.0


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubDatabase]:
    tmp: Path = tmp_path_factory.mktemp("limit-window")
    with fresh_database("postgresql", tmp) as url:
        database = open_hub_database(url)
        try:
            yield database
        finally:
            database.close()


@pytest.fixture(scope="module")
def clock(db: HubDatabase) -> SetClock:
    return SetClock(db, START)


def expected(times: list[float], limit: int) -> list[float]:
    """What each request gets under the bucket rule: 0 (let through) or the wait."""
    buckets: Counter[int] = Counter()
    answers = []
    for now in times:
        since = bucket_floor(now, WINDOW, WIDTH)
        kept = {b: n for b, n in buckets.items() if b > since}
        if sum(kept.values()) < limit:
            buckets[int(now // WIDTH) * WIDTH] += 1
            answers.append(0.0)
        else:
            answers.append(max(0.0, min(kept) + WIDTH + WINDOW - now))
    return answers


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.floats(0.0, 30.0, allow_nan=False),
                                st.floats(-300.0, 300.0, allow_nan=False)),
                      min_size=1, max_size=40),
       limit=st.integers(1, 6))
def test_the_window_row_counts_as_the_buckets_do_by_the_database_clock(
        clock: SetClock, steps: list[tuple[float, float]], limit: int) -> None:
    """Each request comes from a node whose clock is off by its own skew: the answers
    are those of the rule run on the database's times alone."""
    store = clock.store()
    times = [START + t for t in itertools.accumulate(gap for gap, _ in steps)]
    counter = f"public:{uuid.uuid4().hex}"
    got = []
    for now, (_, skew) in zip(times, steps, strict=True):
        clock.set(now)
        got.append(store.hit(counter, now + skew, WINDOW, WIDTH, limit))
    assert got == pytest.approx(expected(times, limit))


def test_a_node_whose_clock_runs_ahead_does_not_erase_the_count(clock: SetClock) -> None:
    """The review's case: node B fills the limit; 40 s later node A, whose clock is 30 s
    ahead (70 s after B's hits by its own), is refused rather than taking B's hits for
    out of the window and dropping them, and B stays refused until its window ends."""
    node_b, node_a = clock.store(), clock.store()
    counter = f"public:{uuid.uuid4().hex}"
    clock.set(START + 0.5)
    assert [node_b.hit(counter, START + 0.5, WINDOW, WIDTH, 10)
            for _ in range(10)] == [0.0] * 10
    clock.set(START + 40.5)
    assert node_a.hit(counter, START + 70.5, WINDOW, WIDTH, 10) == pytest.approx(20.5)
    assert [node_b.hit(counter, START + 40.5, WINDOW, WIDTH, 10)
            for _ in range(9)] == pytest.approx([20.5] * 9)
    clock.set(START + 61.5)
    assert node_b.hit(counter, START + 61.5, WINDOW, WIDTH, 10) == 0.0


def test_neither_a_lagging_nor_a_far_ahead_node_resets_the_window(db: HubDatabase) -> None:
    """Ten minutes either way: the node is refused like the others (ahead, it would
    have dropped every bucket it took for old)."""
    store = LimitsStore(db)
    counter = f"public:{uuid.uuid4().hex}"
    now = time.time()
    assert [store.hit(counter, now, WINDOW, WIDTH, 3) for _ in range(3)] == [0.0] * 3
    assert store.hit(counter, now - 600.0, WINDOW, WIDTH, 3) > 0.0
    assert store.hit(counter, now + 600.0, WINDOW, WIDTH, 3) > 0.0


def test_hits_at_once_from_skewed_nodes_let_exactly_the_limit_through(
        db: HubDatabase) -> None:
    counter = f"public:{uuid.uuid4().hex}"
    stores = [LimitsStore(db) for _ in range(3)]
    now = time.time()

    def hit(i: int) -> float:
        return stores[i % 3].hit(counter, now + 45.0 * (i % 3 - 1), WINDOW, WIDTH, 20)

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(hit, range(60)))
    assert answers.count(0.0) == 20, answers
