"""What an anonymous run costs the hub database on PostgreSQL, counted statement by
statement by :class:`bench.pg_counter.CountingProxy` in front of the server (the
bench's counter; every ``Execute`` and simple query the client sends). Counts, not
times: each store call is synchronous, so its statements have passed the proxy when
it returns.

On a run's path: the public rate limit counted in the database (no Redis) is one
statement, admitted or refused, a new counter or a known one; while other nodes are
alive that statement also writes the run's row in the cluster's registry (only when
the hit is counted) and deletes the ended runs' rows: one in all. History is written
off the path: a batch of new runs, with their rollups, is one statement."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.pg_counter import CountingProxy, Tally
from hub.cluster.registry import LiveRun, RunsStore
from hub.history.record import Caller, RunRecord
from hub.history.sqlstore import SqlHistoryStore
from hub.history.sqlwrite import INSERT_ROWS
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.migrations import upgrade
from tests.servers import fresh_database
from tests.store.set_clock import SetClock

PG_PORT = ":5432/"


@pytest.fixture
def counted(tmp_path: Path) -> Iterator[tuple[HubDatabase, CountingProxy]]:
    """A fresh migrated PostgreSQL database, reached through a counting proxy."""
    proxy = CountingProxy("127.0.0.1", 5432)
    with fresh_database("postgresql", tmp_path) as url:
        db = open_hub_database(url.replace(PG_PORT, f":{proxy.port}/"))
        try:
            upgrade(db)
            yield db, proxy
        finally:
            db.close()
            proxy.close()


def statements(proxy: CountingProxy, step: Callable[[], object]) -> Tally:
    before = proxy.snapshot()
    step()
    return proxy.snapshot().minus(before)


def total(tally: Tally) -> int:
    return sum(tally.kinds.values())


def test_a_public_rate_hit_is_one_statement(
        counted: tuple[HubDatabase, CountingProxy]) -> None:
    db, proxy = counted
    now = time.time()
    clock = SetClock(db, now)  # the rate window's database clock, walked by the test
    store = clock.store()
    store.hit("public:warm", now, 60.0, 1, 2)  # the store's one-time schema check
    counts, waits = [], []
    for offset in (0.0, 0.1, 1.2, 1.3, 61.5):  # new, known, next bucket, refused, freed
        waits.append(0.0)
        clock.set(now + offset)

        def hit(offset: float = offset) -> None:
            waits[-1] = store.hit("public:a", now + offset, 60.0, 1, 2)

        counts.append(total(statements(proxy, hit)))
    assert counts == [1, 1, 1, 1, 1]
    assert waits[:2] == [0.0, 0.0] and waits[2] > 0 and waits[3] > 0 and waits[4] == 0.0


def test_a_runs_registry_row_is_one_statement(
        counted: tuple[HubDatabase, CountingProxy]) -> None:
    db, proxy = counted
    store = RunsStore(db)
    store.ready()
    run = LiveRun("run-1", "node-a", "public_ping", "http", time.time(),
                  Caller("anonymous", None, None, None), "ref-1")
    assert total(statements(proxy, lambda: store.enter([run]))) == 1


def test_a_public_hit_carrying_its_runs_row_is_one_statement(
        counted: tuple[HubDatabase, CountingProxy]) -> None:
    db, proxy = counted
    now = time.time()
    store, runs = SetClock(db, now).store(), RunsStore(db)
    store.hit("public:warm", now, 60.0, 1, 2)  # the store's one-time schema check
    runs.enter([live("ended")])
    outcomes = []
    for job_id, ended in (("run-1", ["ended"]), ("run-2", []), ("run-3", ["run-1"])):
        def hit(job_id: str = job_id, ended: list[str] = ended) -> None:
            outcomes.append(store.hit_with("public:a", 1, 60.0, 2,
                                           runs.entry_steps(live(job_id), ended)))

        assert total(statements(proxy, hit)) == 1
    assert [counted for counted, _ in outcomes] == [True, True, False]
    assert outcomes[2][1] > 0  # refused: its wait, no row; the ended row went anyway
    assert [str(r[0]) for r in db.read("SELECT job_id FROM webhub_running")] == ["run-2"]


def live(job_id: str) -> LiveRun:
    return LiveRun(job_id, "node-a", "public_ping", "http", time.time(),
                   Caller("anonymous", None, None, None), f"ref-{job_id}")


def finished(job_id: str) -> RunRecord:
    started = time.time()
    return RunRecord(job_id=job_id, job_name="public_ping", source="http",
                     caller=Caller("anonymous", None, None, None), started=started,
                     node="node-a", ref=job_id).finished(
        outcome="success", ended=started + 0.002, runtime_ms=2, http_status=200)


def test_a_batch_of_new_runs_is_one_history_statement(
        counted: tuple[HubDatabase, CountingProxy]) -> None:
    db, proxy = counted
    store = SqlHistoryStore(db)
    store.put([finished("warm")])  # the store's one-time schema check
    one = statements(proxy, lambda: store.put([finished("one")]))
    many = statements(proxy, lambda: store.put([finished(f"b{i}") for i in range(INSERT_ROWS)]))
    more = statements(proxy, lambda: store.put([finished(f"c{i}")
                                                for i in range(2 * INSERT_ROWS + 1)]))
    assert (total(one), total(many), total(more)) == (1, 1, 3), more.texts
    assert len(db.read("SELECT job_id FROM webjob_runs")) == 2 + 3 * INSERT_ROWS + 1
    assert db.read("SELECT runs, rt_count, rt_sum, rt_max FROM webjob_run_jobs") == [
        (2 + 3 * INSERT_ROWS + 1, 2 + 3 * INSERT_ROWS + 1, 2 * (2 + 3 * INSERT_ROWS + 1), 2)]


def test_a_run_whose_running_record_came_first_is_replaced_once(
        counted: tuple[HubDatabase, CountingProxy]) -> None:
    db, _ = counted
    store = SqlHistoryStore(db)
    done = finished("long")
    running = RunRecord(job_id="long", job_name="public_ping", source="http",
                        caller=done.caller, started=done.started, node="node-a", ref="long")
    store.put([running])
    store.put([done, finished("short")])
    store.put([done])  # a replay changes nothing
    assert db.read("SELECT job_id, outcome FROM webjob_runs ORDER BY job_id") == [
        ("long", "success"), ("short", "success")]
    assert db.read("SELECT runs FROM webjob_run_jobs") == [(2,)]
