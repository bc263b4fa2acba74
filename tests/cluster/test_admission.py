"""A public run's rate-limit hit and its row in the cluster's registry, one statement on
PostgreSQL: the row is written only when the hit was counted, the rows of ended runs
go either way, the answer is the plain hit's; a request that never reaches its run is
counted alone, once; a refused key is refused on the node without a statement until
its wait is over; other dialects keep their separate statements."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path

import pytest

from bench.pg_counter import CountingProxy
from hub import admission as admission_module
from hub.admission import Admission, expect_run, run_follows, take_admission
from hub.cluster.nodes import NodeRegistry, NodeStore
from hub.cluster.registry import LiveRun, RunsStore
from hub.cluster.runs import ClusterRuns
from hub.history.record import Caller
from hub.limiting import SharedRequestLimit, database_limits
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.limits_store import LimitsStore, Step
from hub.store.migrations import upgrade
from shared.errors import TooManyRequests
from tests.servers import database_nodes, fresh_database
from tests.store.set_clock import SetClock

START = 1_800_000_000.0


def in_loop(test: Callable[..., Coroutine[None, None, None]]) -> Callable[..., None]:
    """The async test run to its end in a loop of its own."""
    @functools.wraps(test)
    def run(*args: object, **kwargs: object) -> None:
        asyncio.run(test(*args, **kwargs))
    return run


def live(job_id: str, node: str = "node-a") -> LiveRun:
    return LiveRun(job_id, node, "public_ping", "http", time.time(),
                   Caller("anonymous", None, None, None), f"ref-{job_id}", None, "GET")


@pytest.fixture
def counted(tmp_path: Path) -> Iterator[tuple[HubDatabase, CountingProxy]]:
    proxy = CountingProxy("127.0.0.1", 5432)
    with fresh_database("postgresql", tmp_path) as url:
        db = open_hub_database(url.replace(":5432/", f":{proxy.port}/"))
        try:
            upgrade(db)
            yield db, proxy
        finally:
            db.close()
            proxy.close()


def running(db: HubDatabase) -> list[str]:
    return [str(r[0]) for r in db.read("SELECT job_id FROM webhub_running ORDER BY job_id")]


def test_a_hit_and_the_runs_row_are_one_statement(
        counted: tuple[HubDatabase, CountingProxy]) -> None:
    db, proxy = counted
    store, clock = RunsStore(db), SetClock(db, START)
    limits = clock.store()
    store.enter([live("old-1"), live("old-2")])
    limits.hit("public:warm", START, 60.0, 1, 5)  # the store's one-time schema check
    before = proxy.snapshot()
    admitted = limits.hit_with("public:a", 1, 60.0, 1, store.entry_steps(live("run-1"),
                                                                         ["old-1"]))
    clock.set(START + 0.5)
    refused = limits.hit_with("public:a", 1, 60.0, 1, store.entry_steps(live("run-2"),
                                                                        ["old-2"]))
    spent = proxy.snapshot().minus(before)
    assert sum(spent.kinds.values()) == 3  # two hits, one clock set by the test
    assert admitted == 0.0 and refused == pytest.approx(60.5)  # as hit() answers
    assert running(db) == ["run-1"]  # refused: no row; ended rows gone either way
    assert limits.hit("public:a", START + 0.5, 60.0, 1, 1) > 0  # the refusal counted nothing


def test_a_hit_carries_writes_on_postgresql_only(tmp_path: Path) -> None:
    with database_nodes("sqlite", tmp_path) as node:
        db = node()
        with pytest.raises(ValueError, match="PostgreSQL only"):
            LimitsStore(db).hit_with("public:a", 1, 60.0, 1, [])
        limits = database_limits(db, 1, 1)
        try:
            assert isinstance(limits.public, SharedRequestLimit)
            assert limits.public._defers is False
        finally:
            asyncio.run(limits.close())


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


# -- the admission ----------------------------------------------------------------------


class Decisions:
    """A shared store's decisions: admit ``free`` hits, then refuse."""

    def __init__(self, free: int) -> None:
        self.free, self.calls = free, list[list[Step]]()

    async def __call__(self, steps: Sequence[Step]) -> bool:
        self.calls.append(list(steps))
        if len(self.calls) > self.free:
            raise TooManyRequests("refused", retry_after=3)
        return bool(steps)


@in_loop
async def test_an_admission_is_counted_once_with_the_runs_steps() -> None:
    decide = Decisions(1)
    admission = Admission(decide)
    assert admission.pending
    assert await admission.count([("step", [])]) is True
    assert await admission.count([("other", [])]) is True  # counted already: the same answer
    assert decide.calls == [[("step", [])]] and not admission.pending


@in_loop
async def test_a_refused_admission_raises_for_every_waiter() -> None:
    admission = Admission(Decisions(0))
    for _ in range(2):
        with pytest.raises(TooManyRequests):
            await admission.count()


@in_loop
async def test_a_request_that_never_runs_is_counted_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission_module, "COUNT_ALONE_AFTER_S", 0.01)
    decide, refused = Decisions(1), Decisions(0)
    admission, unheard = Admission(decide), Admission(refused)
    await asyncio.sleep(0.1)
    assert decide.calls == [[]] and refused.calls == [[]]  # the refusal retrieved, not raised
    assert await admission.count([("late", [])]) is False  # its steps are the run's own now
    assert decide.calls == [[]] and not unheard.pending


@in_loop
async def test_a_request_holds_one_admission_for_its_run() -> None:
    first, second = Decisions(1), Decisions(1)
    admission_module.defer_admission(Admission(first))
    admission_module.defer_admission(Admission(second))  # the first is counted alone
    taken = take_admission()
    assert taken is not None and take_admission() is None
    assert await taken.count([("row", [])]) is True
    await asyncio.sleep(0)
    assert first.calls == [[]] and second.calls == [[("row", [])]]


# -- the limit and the registry together, on PostgreSQL ------------------------------------


@in_loop
async def test_a_public_hit_waits_for_its_runs_row(
        counted: tuple[HubDatabase, CountingProxy]) -> None:
    db, proxy = counted
    nodes = NodeRegistry(NodeStore(db), "node-a", 30)
    other = NodeRegistry(NodeStore(db), "node-b", 30)
    nodes.claim()
    other.claim()
    runs = ClusterRuns(RunsStore(db), nodes, stop=lambda job_id: False,
                       interrupt=lambda node, records: 0, history_shared=True)
    runs.look_around()
    assert runs.shared
    limits = database_limits(db, 1, 5)
    try:
        expect_run()  # as the runner authorises an anonymous run
        await limits.public.admit("10.0.0.9")  # the one-time schema checks, the first prune
        await runs.enter(live("run-0"), take_admission())
        runs.leave("run-0")
        expect_run()
        await limits.public.admit("10.0.0.1")
        before = proxy.snapshot()
        admission = take_admission()
        assert admission is not None
        await runs.enter(live("run-1"), admission)
        assert sum(proxy.snapshot().minus(before).kinds.values()) == 1  # run-0's row went too
        assert running(db) == ["run-1"]
        runs.leave("run-1")
        expect_run()
        await limits.public.admit("10.0.0.1")  # deferred: refused as its run enters
        with pytest.raises(TooManyRequests):
            await runs.enter(live("run-2"), take_admission())
        assert running(db) == [] and "run-2" not in runs._runs  # the ended row went too
        before = proxy.snapshot()
        with pytest.raises(TooManyRequests):  # known refused: no statement
            await limits.public.admit("10.0.0.1")
        assert sum(proxy.snapshot().minus(before).kinds.values()) == 0
        await limits.public.admit("10.0.0.2")  # no run said to follow: counted at once
        assert take_admission() is None
        with pytest.raises(TooManyRequests):
            await limits.public.admit("10.0.0.2")
        expect_run()
        await limits.sign_in_rate.admit("10.0.0.3")  # only the public limit waits for a run
        assert take_admission() is None and run_follows()
    finally:
        await limits.close()
