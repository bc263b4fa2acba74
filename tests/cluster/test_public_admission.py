"""A public run's admission on a PostgreSQL cluster without Redis writes its row: one
statement counts the rate-limit hit and, only when it is counted, inserts the run's row
in the cluster's registry (the ended rows' deletes carried too), before the request's
body is read. A refused request leaves no row; a request whose run never comes (a body
refused, too big) has its row deleted within a tick; a request given up while that
statement is in flight, or one whose statement outlasts the limit's wait, has its row
deleted only once the statement is over, so none is left behind."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

from hub.auth import Caller
from hub.cluster.runs import ClusterRuns
from hub.limiting import CarryingHit, Limits, carried_hit, database_limits
from hub.services.runs import JobRunner
from hub.telemetry.hooks import RunTelemetry
from shared.errors import TooManyRequests
from tests.cluster.test_public_limit import (
    Counted,
    blocked_on_lock,
    counted,
    eventually,
    in_loop,
    live,
    running,
    sent_since,
    spent,
    ticked,
    two_nodes,
)
from tests.hub.conftest import HubProcess, assert_clean_log, launch_hub
from tests.hub.test_faults import wait_until
from tests.servers import fresh_database, query

__all__ = ["counted"]  # the fixture, shared with test_public_limit

API = "/api/webjobs"


def settled(runs: ClusterRuns, job_id: str) -> bool:
    """``job_id`` is nowhere in ``runs``' books: no run, no row, nothing to delete."""
    return not (job_id in runs._runs or job_id in runs._written or job_id in runs._ended
                or job_id in runs._landing)


@contextlib.contextmanager
def held_back(url: str, limits: Limits) -> Iterator[CarryingHit]:
    """A carried hit for 10.0.0.1, while another connection's lock holds the row's INSERT
    back (released after the block)."""
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE webhub_running IN EXCLUSIVE MODE")
        hit = carried_hit(limits.public, "10.0.0.1")
        assert hit is not None
        yield hit


@contextlib.asynccontextmanager
async def warmed_pair(counted: Counted) -> AsyncIterator[tuple[ClusterRuns, Limits, str]]:
    """node-a's runs, ticking every 0.1 s beside node-b, and a limit of 10 public requests
    in 5 s counted in the database, warmed by one admitted run (the schema checks, the
    first prune); closed after the block. Also the database's URL."""
    db, _, url = counted
    runs = two_nodes(db)
    runs.poll_s = 0.1
    limits = database_limits(db, 10, 5)
    await runs.start()
    try:
        warm = carried_hit(limits.public, "10.0.0.9")
        assert warm is not None and await runs.admit(live("warm"), warm)
        runs.leave("warm")
        yield runs, limits, url
    finally:
        await runs.close()
        await limits.close()


@in_loop
async def test_admission_is_one_statement_with_the_row(counted: Counted) -> None:
    db, proxy, _ = counted
    runs = two_nodes(db)
    limits = database_limits(db, 2, 5)
    try:
        warm = carried_hit(limits.public, "10.0.0.9")  # the schema checks, the first prune
        assert warm is not None and await runs.admit(live("warm"), warm)
        runs.leave("warm")
        for job_id in ("run-1", "run-2"):
            before = proxy.snapshot()
            hit = carried_hit(limits.public, "10.0.0.1")
            assert hit is not None and runs.carries_rows
            assert await runs.admit(live(job_id), hit)
            # the hit, the row, the ended row's delete
            assert spent(proxy, before) == 1, sent_since(proxy, before)
            assert running(db) == [job_id]
            runs.leave(job_id)
        before = proxy.snapshot()
        hit = carried_hit(limits.public, "10.0.0.1")
        assert hit is not None
        with pytest.raises(TooManyRequests):  # refused by the database: no row
            await runs.admit(live("run-3"), hit)
        assert spent(proxy, before) == 1, sent_since(proxy, before)
        assert running(db) == [] and settled(runs, "run-3")  # run-2's row went with it
        before = proxy.snapshot()
        with pytest.raises(TooManyRequests):  # known refused: no statement, no row
            carried_hit(limits.public, "10.0.0.1")
        assert spent(proxy, before) == 0, sent_since(proxy, before)
    finally:
        await limits.close()


@in_loop
async def test_a_request_given_up_during_its_statement_leaves_no_row(
        counted: Counted) -> None:
    db = counted[0]
    async with warmed_pair(counted) as (runs, limits, url):
        with held_back(url, limits) as hit:
            admitting = asyncio.ensure_future(runs.admit(live("gone"), hit))
            await blocked_on_lock(url)
            admitting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await admitting
            await ticked(runs)  # ticks meanwhile: none may delete before the INSERT
            assert "gone" in runs._landing and "gone" not in runs._ended
        await eventually(lambda: not running(db) and settled(runs, "gone"))


@pytest.mark.expected_warning  # the database's outage, as the limit saw it
@in_loop
async def test_a_statement_outlasting_its_wait_has_its_row_deleted_once_over(
        counted: Counted) -> None:
    db = counted[0]
    async with warmed_pair(counted) as (runs, limits, url):
        assert limits.counters is not None
        limits.counters.wait_s = 0.2  # type: ignore[attr-defined]
        with held_back(url, limits) as hit:
            # Counted on this node alone; the row may still land: the run must not
            # write it again, and its end deletes it only once the statement is over.
            assert await runs.admit(live("slow"), hit)
            runs.leave("slow")
            await blocked_on_lock(url)
            await ticked(runs)  # ticks meanwhile: none may delete before the INSERT
            assert "slow" in runs._landing and "slow" not in runs._ended
        await eventually(lambda: not running(db) and settled(runs, "slow"))


class Refusals(RunTelemetry):
    """Telemetry that keeps the refusals it is told of."""

    def __init__(self) -> None:
        super().__init__(None, None)
        self.told: list[str] = []

    def refused(self, limit: str) -> None:
        self.told.append(limit)


@in_loop
async def test_the_runner_admits_with_a_ticket_and_counts_refusals(counted: Counted) -> None:
    db, _, _ = counted
    telemetry = Refusals()
    runner = JobRunner.__new__(JobRunner)
    runner.cluster, runner.telemetry = two_nodes(db), telemetry
    limits = database_limits(db, 1, 5)
    limit = telemetry.request_limit(limits.public, "public")  # as the hub wraps it
    job = SimpleNamespace(name="public_echo", version=None)
    anonymous = Caller("anonymous")
    try:
        ticket = await runner.admit_public(job, anonymous, "10.0.0.1", "POST",  # type: ignore[arg-type]
                                           limit)
        assert ticket.in_registry and running(db) == [ticket.job_id]
        with ticket:  # no run took it: released on the way out
            pass
        assert runner.cluster is not None and runner.cluster._ended == [ticket.job_id]
        for _ in range(2):  # refused by the database, then known refused on the node
            with pytest.raises(TooManyRequests):
                await runner.admit_public(job, anonymous, "10.0.0.1", "POST",  # type: ignore[arg-type]
                                          limit)
        assert telemetry.told == ["public", "public"]
        assert running(db) == [] and not runner.cluster._ended  # went with the refused hit
    finally:
        await limits.close()


# -- on real nodes ---------------------------------------------------------------------


JOBS = {"public_echo": "/*\nAccess: public\n*/\nreturn params"}


@contextlib.contextmanager
def two_hubs(tmp_path: Path, rate: int) -> Iterator[tuple[HubProcess, HubProcess, str]]:
    """Nodes a and b, live side by side on a fresh PostgreSQL database, no Redis."""
    with fresh_database("postgresql", tmp_path) as url:
        env = {"WEBHUB_DB": url, "WEBJOB_HISTORY_STORE": "sql", "WEBHUB_NODE_TIMEOUT_S": "2",
               "WEBJOB_PUBLIC_RATE": str(rate), "WEBJOB_MAX_BODY_MB": "1"}
        b = launch_hub(tmp_path / "b", {**env, "WEBHUB_NODE": "node-b"}, JOBS)
        try:
            a = launch_hub(tmp_path / "a", {**env, "WEBHUB_NODE": "node-a"}, JOBS)
            try:
                yield a, b, url
            finally:
                a.stop()
                assert_clean_log(a)
        finally:
            b.stop()
            assert_clean_log(b)


def rows(url: str) -> list[str]:
    return [str(r[0]) for r in query(url, "SELECT job_id FROM webhub_running")]


def held(url: str, first: bytes, rest: bytes) -> Iterator[bytes]:
    """A body sent as ``first``, then ``rest`` once its request's row is there (admitted,
    before its body is read)."""
    yield first
    wait_until(lambda: len(rows(url)) == 1)
    yield rest


@pytest.mark.cluster
def test_the_row_is_there_while_the_body_is_read(tmp_path: Path) -> None:
    with two_hubs(tmp_path, 100) as (a, _, url), a.client() as client:
        assert client.post(f"{API}/public_echo", json={}).status_code == 200
        wait_until(lambda: rows(url) == [])  # node a writes rows: b is alive
        seen: list[list[str]] = []

        def body() -> Iterator[bytes]:
            yield b'{"say": '
            wait_until(lambda: len(rows(url)) == 1)  # admitted: its row, before its body
            seen.append(rows(url))
            yield b'"hi"}'

        answer = client.post(f"{API}/public_echo", content=body(),
                             headers={"content-type": "application/json"})
        assert answer.status_code == 200 and '{"say":"hi"}' in answer.text
        assert seen == [[answer.headers["x-job-id"]]]  # the run is the admitted one
        wait_until(lambda: rows(url) == [])
        bad = client.post(f"{API}/public_echo", content=held(url, b"{not", b" json"),
                          headers={"content-type": "application/json"})
        assert bad.status_code == 400
        wait_until(lambda: rows(url) == [], 1.5)  # a body refused: its row gone in a tick
        big = client.post(f"{API}/public_echo", content=held(url, b"x", b"x" * (2 << 20)))
        assert big.status_code == 413
        wait_until(lambda: rows(url) == [], 1.5)


@pytest.mark.cluster
def test_an_over_limit_request_gets_429_on_every_node_and_no_row_whatever_its_body(
        tmp_path: Path) -> None:
    with two_hubs(tmp_path, 1) as (a, b, url), a.client() as client, b.client() as other:
        assert client.post(f"{API}/public_echo", json={}).status_code == 200
        wait_until(lambda: rows(url) == [])
        for asked in (client, other):  # node b counts node a's hit: the limit is the cluster's
            bad = asked.post(f"{API}/public_echo", content=b"{not json",
                             headers={"content-type": "application/json"})
            big = asked.post(f"{API}/public_echo", content=b"x" * (2 << 20))
            assert (bad.status_code, big.status_code) == (429, 429), (bad.text, big.text)
        assert rows(url) == []
