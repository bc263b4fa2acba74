"""A public run on a PostgreSQL cluster without Redis: its rate-limit hit is counted as
the request is admitted, before its body is read (an over-limit request is refused
whatever its body, on every node: test_public_admission), and its row in the cluster's
registry is one more statement, carrying the deletes of ended runs' rows; a key refused
is refused on the node without a statement until its wait is over; a run given up while
its row is being written leaves no row behind."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path

import psycopg
import pytest

from bench.pg_counter import CountingProxy
from hub import limiting
from hub.cluster.nodes import NodeRegistry, NodeStore
from hub.cluster.registry import LiveRun, RunsStore
from hub.cluster.runs import ClusterRuns
from hub.history.record import Caller
from hub.limiting import Outage, SharedRequestLimit, database_limits
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.migrations import upgrade
from shared.errors import StoreUnavailable, TooManyRequests
from tests.servers import database_nodes, fresh_database, query


def in_loop(test: Callable[..., Coroutine[None, None, None]]) -> Callable[..., None]:
    """The async test run to its end in a loop of its own."""
    @functools.wraps(test)
    def run(*args: object, **kwargs: object) -> None:
        asyncio.run(test(*args, **kwargs))
    return run


def live(job_id: str, node: str = "node-a") -> LiveRun:
    return LiveRun(job_id, node, "public_ping", "http", time.time(),
                   Caller("anonymous", None, None, None), f"ref-{job_id}", None, "GET")


Counted = tuple[HubDatabase, CountingProxy, str]


@pytest.fixture
def counted(tmp_path: Path) -> Iterator[Counted]:
    """A migrated PostgreSQL database reached through a counting proxy, and its URL."""
    proxy = CountingProxy("127.0.0.1", 5432)
    with fresh_database("postgresql", tmp_path) as url:
        db = open_hub_database(url.replace(":5432/", f":{proxy.port}/"))
        try:
            upgrade(db)
            yield db, proxy, url
        finally:
            db.close()
            proxy.close()


def running(db: HubDatabase) -> list[str]:
    return [str(r[0]) for r in db.read("SELECT job_id FROM webhub_running ORDER BY job_id")]


def two_nodes(db: HubDatabase) -> ClusterRuns:
    """node-a's runs, with node-b alive beside it."""
    nodes = NodeRegistry(NodeStore(db), "node-a", 30)
    other = NodeRegistry(NodeStore(db), "node-b", 30)
    nodes.claim()
    other.claim()
    runs = ClusterRuns(RunsStore(db), nodes, stop=lambda job_id: False,
                       interrupt=lambda node, records: 0, history_shared=True)
    runs.look_around()
    assert runs.shared
    return runs


async def eventually(done: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not within the time given"
        await asyncio.sleep(0.05)


async def blocked_on_lock(url: str) -> None:
    """Until a statement waits for a lock on ``webhub_running`` another connection holds
    (by the lock asked, not the statement's text, which the view may cut short)."""
    await eventually(lambda: bool(query(
        url, "SELECT 1 FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid "
        "WHERE a.wait_event_type = 'Lock' AND NOT l.granted "
        "AND l.relation = CAST('webhub_running' AS regclass)")))


async def ticked(runs: ClusterRuns, count: int = 2) -> None:
    """Until the loop of ``runs`` has begun ``count`` more ticks."""
    begun = 0
    look = runs._missing_rows

    def counted() -> list[LiveRun]:
        nonlocal begun
        begun += 1
        return look()

    runs._missing_rows = counted  # type: ignore[method-assign]
    try:
        await eventually(lambda: begun >= count)
    finally:
        del runs._missing_rows


def spent(proxy: CountingProxy, before: object) -> int:
    """The hub's own statements sent since ``before``. Not a pool's upkeep (a ``SELECT 1``
    check or a ``BEGIN``/``COMMIT`` around one on a connection idle for a while): that
    comes with time, not with a run, so a slow machine would add one now and then."""
    return int(proxy.snapshot().minus(before).kinds["hub"])  # type: ignore[arg-type]


def sent_since(proxy: CountingProxy, before: object) -> list[str]:
    """What was sent since ``before``, by text (for a failed count to say what came)."""
    texts = proxy.snapshot().minus(before).texts  # type: ignore[arg-type]
    return [f"{n} x {text[:160]}" for text, n in texts.items() if n]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "postgresql-odbc"])
def test_ended_rows_go_with_the_next_rows_statement(kind: str, tmp_path: Path) -> None:
    with database_nodes(kind, tmp_path) as node:
        db = node()
        store = RunsStore(db)
        store.enter([live("a"), live("b"), live("c")])
        store.enter([live("d"), live("e")], ["a", "b"])
        store.enter([], ["c"])
        assert running(db) == ["d", "e"]
        assert store.carries is kind.startswith("postgresql")


@in_loop
async def test_a_public_run_costs_at_most_two_statements(counted: Counted) -> None:
    db, proxy, _ = counted
    runs = two_nodes(db)
    limits = database_limits(db, 1, 5)
    try:
        await limits.public.admit("10.0.0.9")  # the one-time schema checks, the first prune
        await runs.enter(live("run-0"))
        runs.leave("run-0")
        before = proxy.snapshot()
        await limits.public.admit("10.0.0.1")
        await runs.enter(live("run-1"))
        assert spent(proxy, before) == 2, sent_since(proxy, before)  # the hit; the row, run-0's
        assert running(db) == ["run-1"]
        before = proxy.snapshot()
        with pytest.raises(TooManyRequests):  # refused by the database: one statement
            await limits.public.admit("10.0.0.1")
        assert spent(proxy, before) == 1, sent_since(proxy, before)
        before = proxy.snapshot()
        with pytest.raises(TooManyRequests):  # known refused: no statement
            await limits.public.admit("10.0.0.1")
        assert spent(proxy, before) == 0, sent_since(proxy, before)
    finally:
        await limits.close()


@in_loop
async def test_a_run_given_up_while_its_row_is_written_leaves_no_row(
        counted: Counted, monkeypatch: pytest.MonkeyPatch) -> None:
    db, _, url = counted
    runs = two_nodes(db)
    runs.poll_s = 0.1
    await runs.start()
    try:
        with psycopg.connect(url) as holder:  # its lock holds the row's INSERT back
            holder.execute("LOCK TABLE webhub_running IN EXCLUSIVE MODE")
            entering = asyncio.ensure_future(runs.enter(live("gone")))
            await blocked_on_lock(url)
            entering.cancel()
            with pytest.raises(asyncio.CancelledError):
                await entering
            await ticked(runs)  # ticks meanwhile: none may delete before the INSERT
            assert "gone" in runs._written and "gone" not in runs._ended
        # released: the row lands, then goes within a tick
        await eventually(lambda: not running(db) and not runs._ended and "gone" not in runs._runs)
        assert running(db) == [] and "gone" not in runs._runs and not runs._written
    finally:
        await runs.close()


@in_loop
async def test_a_failed_write_given_up_keeps_the_ended_rows_to_delete() -> None:
    entered, given_up = threading.Event(), threading.Event()

    class Failing:
        carries = True

        def enter(self, runs: object, ended: object) -> None:
            entered.set()
            assert given_up.wait(5)  # fails only once its run was given up
            raise StoreUnavailable("down")

    runs = ClusterRuns.__new__(ClusterRuns)
    runs.store = Failing()  # type: ignore[assignment]
    runs.nodes = type("Nodes", (), {"reachable": True})()  # type: ignore[assignment]
    runs.shared, runs._warned = True, False
    runs._runs, runs._written, runs._ended, runs._stopping = {}, set(), ["old"], set()
    runs._landing = {}
    entering = asyncio.ensure_future(runs.enter(live("gone")))
    assert await asyncio.to_thread(entered.wait, 5)
    entering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await entering
    given_up.set()
    await eventually(lambda: runs._ended == ["old", "gone"])
    assert runs._ended == ["old", "gone"] and not runs._runs and not runs._written


# -- refusals remembered ---------------------------------------------------------------


class Refusing:
    """A shared store that refuses every hit with a 30 s wait."""

    errors = (StoreUnavailable,)

    def __init__(self) -> None:
        self.hits = 0

    async def hit(self, counter: str, per_minute: int) -> float:
        self.hits += 1
        return 30.0


@in_loop
async def test_remembered_refusals_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limiting, "REFUSALS_KEPT", 3)
    counters = Refusing()
    limit = SharedRequestLimit(counters, Outage("test"), 1, "public")  # type: ignore[arg-type]
    limit._remembers = True
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.2"):
        with pytest.raises(TooManyRequests):
            await limit.admit(address)
    assert counters.hits == 4 and len(limit._refused) == 3  # the oldest, .1, pushed out
    with pytest.raises(TooManyRequests):
        await limit.admit("10.0.0.1")  # forgotten: asked again
    assert counters.hits == 5 and len(limit._refused) == 3
    for counter in limit._refused:
        limit._refused[counter] = time.monotonic() - 1  # their waits are over
    with pytest.raises(TooManyRequests):
        await limit.admit("10.0.0.4")
    assert counters.hits == 6
