"""The PostgreSQL rate window (one row per counter, one statement a hit) counts as the
buckets of the other databases do: a request is let through while the buckets that
reach into its window hold fewer hits than the limit, and a refused one waits until
the oldest of them leaves. Checked against that rule written out in Python, for any
run of requests hypothesis makes up (times one after another, as one clock sees them)."""

from __future__ import annotations

import itertools
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.limits_store import LimitsStore, bucket_floor
from tests.servers import fresh_database

WINDOW = 60.0
WIDTH = 1
START = 1_800_000_000.0


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LimitsStore]:
    tmp: Path = tmp_path_factory.mktemp("limit-window")
    with fresh_database("postgresql", tmp) as url:
        db: HubDatabase = open_hub_database(url)
        try:
            yield LimitsStore(db)
        finally:
            db.close()


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
@given(gaps=st.lists(st.floats(0.0, 30.0, allow_nan=False), min_size=1, max_size=40),
       limit=st.integers(1, 6))
def test_the_window_row_counts_as_the_buckets_do(store: LimitsStore, gaps: list[float],
                                                 limit: int) -> None:
    times = [START + t for t in itertools.accumulate(gaps)]
    counter = f"public:{uuid.uuid4().hex}"
    got = [store.hit(counter, now, WINDOW, WIDTH, limit) for now in times]
    assert got == pytest.approx(expected(times, limit))

