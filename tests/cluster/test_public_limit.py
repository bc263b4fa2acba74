"""A public run on a PostgreSQL cluster without Redis: its rate-limit hit is counted as
the request is admitted, before its body is read (an over-limit request is refused
whatever its body), and its row in the cluster's registry is one more statement,
carrying the deletes of ended runs' rows; a key refused is refused on the node without
a statement until its wait is over; a run given up while its row is being written
leaves no row behind."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path

import httpx
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
from tests.hub.conftest import assert_clean_log, launch_hub
from tests.servers import database_nodes, fresh_database

API = "/api/webjobs"


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


def spent(proxy: CountingProxy, before: object) -> int:
    """The hub's own statements sent since ``before``. Not a pool's upkeep (a ``SELECT 1``
    check or a ``BEGIN``/``COMMIT`` around one on a connection idle for a while): that
    comes with time, not with a run, so a slow machine would add one now and then."""
    return int(proxy.snapshot().minus(before).kinds["hub"])  # type: ignore[arg-type]


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
        assert spent(proxy, before) == 2  # the hit; the row, run-0's going with it
        assert running(db) == ["run-1"]
        before = proxy.snapshot()
        with pytest.raises(TooManyRequests):  # refused by the database: one statement
            await limits.public.admit("10.0.0.1")
        assert spent(proxy, before) == 1
        before = proxy.snapshot()
        with pytest.raises(TooManyRequests):  # known refused: no statement
            await limits.public.admit("10.0.0.1")
        assert spent(proxy, before) == 0
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
            await asyncio.sleep(0.3)
            entering.cancel()
            with pytest.raises(asyncio.CancelledError):
                await entering
            await asyncio.sleep(0.3)  # ticks meanwhile: none may delete before the INSERT
        for _ in range(50):  # released: the row lands, then goes within a tick
            await asyncio.sleep(0.1)
            if not running(db) and not runs._ended and "gone" not in runs._runs:
                break
        assert running(db) == [] and "gone" not in runs._runs and not runs._written
    finally:
        await runs.close()


@in_loop
async def test_a_failed_write_given_up_keeps_the_ended_rows_to_delete() -> None:
    class Failing:
        carries = True

        def enter(self, runs: object, ended: object) -> None:
            time.sleep(0.2)
            raise StoreUnavailable("down")

    runs = ClusterRuns.__new__(ClusterRuns)
    runs.store = Failing()  # type: ignore[assignment]
    runs.nodes = type("Nodes", (), {"reachable": True})()  # type: ignore[assignment]
    runs.shared, runs._warned = True, False
    runs._runs, runs._written, runs._ended, runs._stopping = {}, set(), ["old"], set()
    runs._landing = {}
    entering = asyncio.ensure_future(runs.enter(live("gone")))
    await asyncio.sleep(0.05)
    entering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await entering
    await asyncio.sleep(0.4)
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


# -- over the limit, whatever the body, on real nodes ----------------------------------


@pytest.mark.cluster
def test_an_over_limit_request_is_refused_before_its_body(tmp_path: Path) -> None:
    jobs = {"public_echo": "/*\nAccess: public\n*/\nreturn params"}
    with fresh_database("postgresql", tmp_path) as url:
        env = {"WEBHUB_DB": url, "WEBJOB_HISTORY_STORE": "sql", "WEBHUB_NODE_TIMEOUT_S": "2",
               "WEBJOB_PUBLIC_RATE": "1", "WEBJOB_MAX_BODY_MB": "1"}
        a = launch_hub(tmp_path / "a", {**env, "WEBHUB_NODE": "node-a"}, jobs)
        try:
            b = launch_hub(tmp_path / "b", {**env, "WEBHUB_NODE": "node-b"}, jobs)
            try:
                with httpx.Client(base_url=a.url, timeout=30) as client:
                    assert client.post(f"{API}/public_echo", json={}).status_code == 200
                with httpx.Client(base_url=b.url, timeout=30) as client:
                    bad = client.post(f"{API}/public_echo", content=b"{not json",
                                      headers={"content-type": "application/json"})
                    big = client.post(f"{API}/public_echo", content=b"x" * (2 << 20))
                assert (bad.status_code, big.status_code) == (429, 429), (bad.text, big.text)
            finally:
                with contextlib.suppress(Exception):
                    b.stop()
                assert_clean_log(b)
        finally:
            a.stop()
            assert_clean_log(a)
