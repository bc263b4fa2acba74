"""Runs are the cluster's, not a node's: every node lists every run in flight with its
node, a stop sent to any node ends the run where it runs, and a node that dies (kill
-9) has its runs marked ``interrupted`` by the others once its heartbeat is overdue —
including a run killed in its first moment."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import httpx
import pytest

from tests.hub.test_history_api import eventually
from tests.nodes.conftest import Cluster

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

JOBS = {
    "slow": "/*\nAccess: user\nRuntime: 60000\n*/\nconsole.log('begun')\n"
            "await new Promise(r => setTimeout(r, 30000))\nreturn 'woke'",
}


def _in_flight(cluster: Cluster, index: int) -> list[dict[str, Any]]:
    with cluster.client(index) as client:
        answer = client.get("/api/webjobs/running")
        assert answer.status_code == 200, answer.text
        runs: list[dict[str, Any]] = answer.json()["running"]
        return runs


def _start_in_background(cluster: Cluster, index: int) -> dict[str, Any]:
    """Start ``slow`` on node ``index``; its answer lands in the dict when it ends."""
    outcome: dict[str, Any] = {}

    def call() -> None:
        with cluster.client(index) as client:
            try:
                answer = client.post("/api/webjobs/slow", json={}, timeout=90)
                outcome["status"] = answer.status_code
                outcome["body"] = answer.json()
            except httpx.TransportError as exc:  # the node was killed under it
                outcome["error"] = type(exc).__name__
    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    outcome["thread"] = worker
    return outcome


def _history(cluster: Cluster, index: int, job: str) -> list[dict[str, Any]]:
    with cluster.client(index) as client:
        answer = client.get("/api/webjobs/history", params={"job": job})
        assert answer.status_code == 200, answer.text
        runs: list[dict[str, Any]] = answer.json()["runs"]
        return runs


def test_every_node_lists_every_run_and_stops_it_from_anywhere(
        cluster_of: Any) -> None:
    cluster: Cluster = cluster_of(3, JOBS)
    outcome = _start_in_background(cluster, 0)
    seen = eventually(lambda: [r for r in _in_flight(cluster, 2) if r["jobName"] == "slow"])
    assert seen, "node-2 does not list node-0's run"
    run = seen[0]
    assert run["node"] == "node-0" and run["jobId"]
    assert [r["jobId"] for r in _in_flight(cluster, 1)] == [run["jobId"]]

    with cluster.client(1) as client:
        stopped = client.post(f"/api/webjobs/{run['jobId']}/stop")
    assert stopped.status_code == 200, stopped.text
    outcome["thread"].join(30)
    assert outcome.get("status") == 500 and outcome["body"]["code"] == "JOB-001", outcome
    assert eventually(lambda: not _in_flight(cluster, 2))
    with cluster.client(2) as client:
        again = client.post(f"/api/webjobs/{run['jobId']}/stop")
    assert again.status_code == 404


def test_a_killed_nodes_runs_become_interrupted_on_the_others(cluster_of: Any) -> None:
    cluster: Cluster = cluster_of(2, JOBS)
    _start_in_background(cluster, 1)
    assert eventually(lambda: _in_flight(cluster, 0))
    cluster.kill(1)
    # The heartbeat timeout is 3 s in these clusters: the survivor takes over.
    runs = eventually(lambda: [r for r in _history(cluster, 0, "slow")
                               if r["outcome"] == "interrupted"], timeout=30)
    assert len(runs) == 1 and runs[0]["node"] == "node-1", _history(cluster, 0, "slow")
    assert eventually(lambda: not _in_flight(cluster, 0))


def test_a_run_killed_in_its_first_moment_leaves_a_record(cluster_of: Any) -> None:
    cluster: Cluster = cluster_of(2, {"quick_console": "/*\nAccess: user\n*/\n"
                                      "console.log('a'); for(;;){}"})
    outcome: dict[str, Any] = {}

    def call() -> None:
        with cluster.client(1) as client, contextlib.suppress(httpx.TransportError):
            outcome["answer"] = client.post("/api/webjobs/quick_console", json={}, timeout=30)
    threading.Thread(target=call, daemon=True).start()
    # Killed the moment its own node lists it: its first statements have barely run.
    assert eventually(lambda: _in_flight(cluster, 1), timeout=10)
    cluster.kill(1)
    runs = eventually(lambda: [r for r in _history(cluster, 0, "quick_console")
                               if r["outcome"] == "interrupted"], timeout=30)
    assert len(runs) == 1

