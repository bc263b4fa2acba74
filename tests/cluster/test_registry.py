"""The cluster's run registry on the hub database: a run's row comes back as it went
in, a stop reaches only a live node's run, a dead node's runs become ``interrupted``
(those history never saw too, finished ones untouched), and a node on the embedded
SQLite file keeps no registry at all."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.api.app import create_app
from hub.cluster.nodes import SWEPT, NodeRegistry, NodeStore
from hub.cluster.registry import LiveRun, RunsStore
from hub.cluster.runs import ClusterRuns
from hub.history.record import Caller, RunRecord
from hub.history.recorder import Recorder
from hub.history.sqlstore import SqlHistoryStore
from hub.services.history import History
from hub.settings import load_settings
from hub.store.hubdb import HubDatabase
from tests.servers import database_nodes

TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
               max_size=40)


def live(job_id: str, node: str, **changes: object) -> LiveRun:
    fields: dict[str, object] = {
        "job_id": job_id, "node": node, "job_name": "nap", "source": "http",
        "started": time.time(), "caller": Caller("user", "7", "ann", "USER"), "ref": "r1",
        "job_version": 3, "method": "POST", "schedule_id": None, "schedule_name": None,
        **changes}
    return LiveRun(**fields)  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", "postgresql", "postgresql-odbc", "mariadb"])
def pools(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[HubDatabase]]:
    with database_nodes(request.param, tmp_path) as node:
        yield [node(), node()]


@pytest.fixture
def sqlite_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubDatabase]:
    with database_nodes("sqlite", tmp_path_factory.mktemp("registry")) as node:
        yield node()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=TEXT, who=st.one_of(st.none(), TEXT),
       version=st.one_of(st.none(), st.integers(0, 2**40)), schedule=st.one_of(st.none(), TEXT))
def test_a_row_reads_back_as_written(sqlite_pool: HubDatabase, name: str, who: str | None,
                                     version: int | None, schedule: str | None) -> None:
    store = RunsStore(sqlite_pool)
    run = live(f"job_{time.monotonic_ns()}", "n1", caller=Caller("key", who, name, None),
               job_version=version, schedule_id=schedule, schedule_name=schedule)
    store.enter([run])
    store.enter([run])  # written again (a rejoin): still one row
    assert [r for r in store.of_node("n1") if r.job_id == run.job_id] == [run]
    store.leave([run.job_id])
    assert all(r.job_id != run.job_id for r in store.of_node("n1"))


def test_a_stop_reaches_a_live_nodes_run_only(pools: list[HubDatabase]) -> None:
    alive = NodeRegistry(NodeStore(pools[0]), "alive", 30)
    gone = NodeRegistry(NodeStore(pools[0]), "gone", 30)
    alive.claim()
    gone.claim()
    pools[0].write("UPDATE webhub_nodes SET beat = ? WHERE node = ?", (time.time() - 60, "gone"))
    store = RunsStore(pools[1])
    store.enter([live("job_a", "alive"), live("job_g", "gone")])
    now = time.time()
    assert [r.job_id for r in store.in_flight(now - 30)] == ["job_a"]
    assert store.request_stop("job_a", now, now - 30) == "alive"
    assert store.request_stop("job_g", now, now - 30) is None
    assert store.request_stop("job_none", now, now - 30) is None
    assert store.stops_for("alive") == ["job_a"] and store.stops_for("gone") == []


@pytest.mark.expected_warning  # the survivor says it took the dead node over
def test_a_dead_nodes_runs_are_marked_by_one_survivor(pools: list[HubDatabase],
                                                       tmp_path: Path) -> None:
    history_store = SqlHistoryStore(pools[1])
    history = History(history_store, Recorder(history_store, tmp_path / "spool.jsonl"), "live")
    try:
        dead = NodeRegistry(NodeStore(pools[0]), "dead", 0.3)
        survivor = NodeRegistry(NodeStore(pools[1]), "live", 0.3)
        dead.claim()
        survivor.claim()
        store = RunsStore(pools[0])
        unseen, shown, done = live("job_1", "dead"), live("job_2", "dead"), live("job_3", "dead")
        store.enter([unseen, shown, done])
        history_store.put([shown.as_record(),
                           done.as_record().finished(outcome="success", ended=time.time())])
        runs = ClusterRuns(RunsStore(pools[1]), survivor, stop=lambda job_id: False,
                           interrupt=history.mark_interrupted, history_shared=True)
        deadline = time.monotonic() + 5
        while store.of_node("dead"):
            survivor.beat()
            assert time.monotonic() < deadline, "the dead node's runs were never swept"
            time.sleep(0.05)
        outcomes = {r: history_store.get(r) for r in ("job_1", "job_2", "job_3")}
        assert {r: (v.outcome if v else None) for r, v in outcomes.items()} == {
            "job_1": "interrupted", "job_2": "interrupted", "job_3": "success"}
        assert outcomes["job_1"] is not None and outcomes["job_1"].node == "dead"
        assert [n.node for n in survivor.store.nodes()] == ["live"]  # the dead row is gone
        assert runs.shared is False  # alone now: no more rows on its runs' path
    finally:
        history.close()


def test_a_node_on_the_embedded_database_keeps_no_registry(tmp_path: Path) -> None:
    app = create_app(load_settings({"WEBHUB_HOME": str(tmp_path / "home"),
                                    "WEBJOB_JOBS_DIR": str(tmp_path / "jobs"),
                                    "WEBHUB_NODE": "solo"}))
    hub = app.state.hub
    assert hub.runner.cluster is None and hub.nodes is not None
    assert hub.nodes.store.db.kind == "sqlite"


@pytest.mark.expected_warning  # taken for dead, the stalled node joins again
def test_a_stalled_node_joining_during_its_sweep_keeps_its_runs(
        pools: list[HubDatabase]) -> None:
    stalled = NodeRegistry(NodeStore(pools[0]), "stalled", 0.3)
    survivor = NodeRegistry(NodeStore(pools[1]), "live", 0.3)
    stalled.claim()
    survivor.claim()
    store = RunsStore(pools[0])
    store.enter([live("job_s1", "stalled"), live("job_s2", "stalled")])
    told: list[list[str]] = []

    def interrupt(node: str, records: Sequence[RunRecord]) -> int:
        told.append([r.job_id for r in records])
        stalled.beat()  # it wakes up between the sweep's read and its delete
        return 0

    ClusterRuns(RunsStore(pools[1]), survivor, stop=lambda job_id: False,
                interrupt=interrupt, history_shared=True)
    deadline = time.monotonic() + 5
    while not told:
        survivor.beat()
        assert time.monotonic() < deadline, "the stalled node was never taken over"
        time.sleep(0.05)
    assert told == [["job_s1", "job_s2"]]
    assert [r.job_id for r in store.of_node("stalled")] == ["job_s1", "job_s2"]
    assert {n.node: n.instance for n in survivor.store.nodes()}["stalled"] == stalled.instance
    assert store.of_swept_node("stalled", f"{SWEPT}live") == []
