"""Runs across real hub processes on one fresh PostgreSQL database: every node lists
every run with its node, a stop sent to any node ends the run where it runs, a node
whose heartbeat stops has its runs marked ``interrupted`` by another, and a run
killed in its first moment still leaves a record. One node name, one live process."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, assert_clean_log, launch_hub
from tests.hub.test_history_api import eventually, history
from tests.servers import fresh_database

pytestmark = [pytest.mark.cluster]

API = "/api/webjobs"
JOBS = {
    "nap": "/*\nAccess: user\nRuntime: 60000\n*/\n"
           "await new Promise(r => setTimeout(r, 20000))\nreturn 'woke'",
    "spin": "/*\nAccess: user\nRuntime: 60000\n*/\nfor (;;) {}",
}
Start = Callable[..., HubProcess]


@pytest.fixture
def start_node(tmp_path: Path) -> Iterator[Start]:
    """``start_node(name)``: a hub process on this test's own PostgreSQL database
    (through psycopg: stops and joins are pushed by NOTIFY)."""
    with _nodes("postgresql", tmp_path) as start:
        yield start


@pytest.fixture
def start_odbc_node(tmp_path: Path) -> Iterator[Start]:
    """The same through psqlODBC, which cannot receive notifications: stops and joins
    are found by the nodes' own ticks and heartbeats."""
    with _nodes("postgresql-odbc", tmp_path) as start:
        yield start


@contextlib.contextmanager
def _nodes(kind: str, tmp_path: Path) -> Iterator[Start]:
    started: list[HubProcess] = []
    killed: set[int] = set()
    with fresh_database(kind, tmp_path) as url:
        def start(name: str, **extra: str) -> HubProcess:
            env = {"WEBHUB_DB": url, "WEBJOB_HISTORY_STORE": "sql", "WEBHUB_NODE": name,
                   "WEBHUB_NODE_TIMEOUT_S": "2", **extra}
            node = launch_hub(tmp_path / f"{name}-{len(started)}", env, JOBS)
            started.append(node)
            return node

        start.killed = killed  # type: ignore[attr-defined]
        try:
            yield start
        finally:
            for node in started:
                node.proc.send_signal(signal.SIGCONT)
                node.stop()
    for node in started:
        if node.proc.pid not in killed:
            assert_clean_log(node)


def _kill(start: Start, node: HubProcess) -> None:
    start.killed.add(node.proc.pid)  # type: ignore[attr-defined]
    node.proc.send_signal(signal.SIGKILL)
    node.proc.wait(10)


def _in_flight(node: HubProcess) -> list[dict[str, Any]]:
    with node.client() as client:
        answer = client.get(f"{API}/running", headers=AUTH)
    assert answer.status_code == 200, answer.text
    runs: list[dict[str, Any]] = answer.json()["running"]
    return runs


def _call_in_background(node: HubProcess, job: str) -> dict[str, Any]:
    """``job`` run on ``node`` from a thread; its answer (or transport error) lands in
    the dict."""
    outcome: dict[str, Any] = {}

    def call() -> None:
        with httpx.Client(base_url=node.url, timeout=60) as client:
            try:
                outcome["answer"] = client.post(f"{API}/{job}", json={}, headers=AUTH)
            except httpx.TransportError as exc:
                outcome["error"] = type(exc).__name__
    outcome["thread"] = threading.Thread(target=call, daemon=True)
    outcome["thread"].start()
    return outcome


def _history_of(node: HubProcess, job: str) -> list[dict[str, Any]]:
    with node.client() as client:
        return history(client, job=job)


@pytest.mark.parametrize("driver", ["psycopg", "odbc"])
def test_a_run_is_listed_and_stopped_from_another_node(
        driver: str, request: pytest.FixtureRequest) -> None:
    start_node: Start = request.getfixturevalue(
        "start_node" if driver == "psycopg" else "start_odbc_node")
    a, b = start_node("node-a"), start_node("node-b")
    outcome = _call_in_background(a, "nap")
    listed = eventually(lambda: _in_flight(b))
    assert [(r["jobName"], r["node"], r["source"]) for r in listed] == [
        ("nap", "node-a", "http")]
    assert isinstance(listed[0]["runtime"], int) and listed[0]["runtime"] >= 0
    assert [(r["jobId"], r["node"]) for r in _in_flight(a)] == [(listed[0]["jobId"], "node-a")]

    with b.client() as client:
        stop = client.post(f"{API}/{listed[0]['jobId']}/stop", headers=AUTH)
        assert stop.status_code == 200, stop.text
        assert stop.json() == {"success": True, "stopped": False, "passedOn": True,
                               "node": "node-a"}
        outcome["thread"].join(15)
        answer = outcome["answer"]
        assert answer.status_code == 500 and answer.json()["code"] == "JOB-001", answer.text
        assert eventually(lambda: not _in_flight(b))
        again = client.post(f"{API}/{listed[0]['jobId']}/stop", headers=AUTH)
        assert again.status_code == 404 and again.json()["code"] == "SYS-404"
    [record] = _history_of(b, "nap")
    assert (record["outcome"], record["node"]) == ("failed", "node-a")


def test_a_node_whose_heartbeat_stops_has_its_runs_interrupted(start_node: Start) -> None:
    a, b = start_node("node-a"), start_node("node-b")
    outcome = _call_in_background(a, "nap")
    [run] = eventually(lambda: _in_flight(b))
    a.proc.send_signal(signal.SIGSTOP)  # alive, but beats no more
    marked = eventually(lambda: [r for r in _history_of(b, "nap")
                                 if r["outcome"] == "interrupted"], timeout=20)
    assert [(r["jobId"], r["node"]) for r in marked] == [(run["jobId"], "node-a")]
    assert "stopped before the run ended" in marked[0]["message"]
    assert not _in_flight(b)
    # Back, it joins again; its run ends on it and its own record replaces the mark.
    a.proc.send_signal(signal.SIGCONT)
    assert eventually(lambda: _in_flight(b), timeout=20)
    with a.client() as client:
        assert client.post(f"{API}/{run['jobId']}/stop", headers=AUTH).status_code == 200
    outcome["thread"].join(15)
    assert eventually(lambda: [r["outcome"] for r in _history_of(b, "nap")] == ["failed"])
    assert "taken for dead by the others" in a.log_text()


def test_a_run_killed_in_its_first_moment_leaves_a_record(start_node: Start) -> None:
    # one place on node-a: one worker, one run at a time on it
    a, b = (start_node("node-a", WEBJOB_MAX_CONCURRENT="1", WEBJOB_RUNS_PER_WORKER="1"),
            start_node("node-b"))
    _call_in_background(a, "nap")
    [first] = eventually(lambda: _in_flight(b), timeout=10)
    # The second run waits for the one worker: its code has not started, history has
    # nothing of it, only the cluster knows it began.
    _call_in_background(a, "spin")
    eventually(lambda: len(_in_flight(b)) == 2, timeout=10)
    assert _history_of(b, "spin") == []
    _kill(start_node, a)
    marked = eventually(lambda: _history_of(b, "spin"), timeout=20)
    assert [(r["outcome"], r["node"], r["source"]) for r in marked] == [
        ("interrupted", "node-a", "http")]
    assert eventually(lambda: [r["outcome"] for r in _history_of(b, "nap")] == ["interrupted"])
    assert _history_of(b, "nap")[0]["jobId"] == first["jobId"]
    assert not _in_flight(b)


def test_a_killed_node_restarting_marks_its_own_leftovers(start_node: Start) -> None:
    a = start_node("node-a")
    _call_in_background(a, "spin")
    [run] = eventually(lambda: _in_flight(a), timeout=10)
    # Alone, a node keeps no registry rows: its restart mends what history shows running.
    assert eventually(lambda: [r for r in _history_of(a, "spin") if r["outcome"] == "running"])
    _kill(start_node, a)
    again = start_node("node-a")  # at once: the name's last holder is gone from this host
    with again.client() as client:
        record = client.get(f"{API}/{run['jobId']}/output", headers=AUTH).json()
    assert record["outcome"] == "interrupted" and record["node"] == "node-a"
    assert _in_flight(again) == []


def test_a_second_live_process_with_a_nodes_name_is_refused(start_node: Start) -> None:
    start_node("node-a")
    with pytest.raises(RuntimeError) as refused:
        start_node("node-a")
    assert "WEBHUB_NODE=node-a is already in use by a running hub" in str(refused.value)


def test_a_joining_node_lists_the_runs_begun_before_it_came(start_node: Start) -> None:
    a = start_node("node-a")
    outcome = _call_in_background(a, "nap")
    [run] = eventually(lambda: _in_flight(a))
    b = start_node("node-b")
    assert [(r["jobId"], r["node"]) for r in eventually(lambda: _in_flight(b))] == [
        (run["jobId"], "node-a")]
    with b.client() as client:
        assert client.post(f"{API}/{run['jobId']}/stop", headers=AUTH).json()["passedOn"]
    outcome["thread"].join(15)
    assert outcome["answer"].json()["code"] == "JOB-001"
