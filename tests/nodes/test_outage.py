"""PostgreSQL stopped under a three-node cluster (``pg_ctlcluster stop``, then start):
runs of jobs the nodes have loaded keep answering, saves fail fast with ``SYS-503``,
nothing fails once the server is back (stale pooled connections are checked before
reuse), the runs made meanwhile reach history, and the schedule's occurrences that
could not fire are recorded as missed, once, with the reason."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.hub.test_history_api import eventually
from tests.nodes.conftest import Cluster, postgresql_stopped

# It stops the whole PostgreSQL server: make test runs it alone, after the rest.
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.stops_postgresql]

DOWN_S = 6
JOBS = {"tick": "/*\nAccess: user\n*/\nreturn 1"}


def _ping(cluster: Cluster, index: int, who: str) -> int:
    with cluster.client(index, owner=False) as client:
        return client.get("/api/webjobs/public_ping", params={"who": who}).status_code


def _history(cluster: Cluster, index: int, **params: Any) -> list[dict[str, Any]]:
    with cluster.client(index) as client:
        answer = client.get("/api/webjobs/history", params={"limit": 500, **params})
        assert answer.status_code == 200, answer.text
        runs: list[dict[str, Any]] = answer.json()["runs"]
        return runs


def _every_second(cluster: Cluster) -> int:
    with cluster.client(0) as client:
        made = client.post("/api/webjobs/schedules", json={
            "name": "ticker", "jobName": "tick", "cron": "* * * * * *", "enabled": True})
        assert made.status_code == 200, made.text
        return int(made.json()["schedule"]["id"])


def test_a_postgresql_outage_costs_no_run_and_nothing_after(cluster_of: Any) -> None:
    cluster: Cluster = cluster_of(3, JOBS)
    for index in range(3):
        assert _ping(cluster, index, "warm") == 200  # each node has loaded the job
    schedule_id = _every_second(cluster)
    eventually(lambda: _history(cluster, 0, job="tick"), timeout=10)

    statuses: list[int] = []
    with postgresql_stopped():
        stopped = time.time()
        with cluster.client(0) as client:
            began = time.monotonic()
            refused = client.post("/api/webjobs/save", json={"name": "tick", "code": "return 2"})
            took = time.monotonic() - began
        while time.time() - stopped < DOWN_S:
            statuses += [_ping(cluster, i, f"down-{len(statuses)}") for i in range(3)]
            time.sleep(0.2)  # light load, as an outage usually finds it: 5 rounds a second
    back = time.time()

    assert statuses and set(statuses) == {200}, statuses
    assert refused.status_code == 503 and refused.json()["code"] == "SYS-503", refused.text
    assert took < 5, f"a save took {took:.1f} s to fail"

    for index in range(3):  # the first calls after the outage work on every node
        with cluster.client(index) as client:
            assert client.get("/api/webjobs/available").status_code == 200
        assert _ping(cluster, index, "after") == 200
    with cluster.client(1) as client:
        saved = client.post("/api/webjobs/save", json={"name": "tick", "code": "return 3"})
        assert saved.status_code == 200, saved.text

    pings = eventually(lambda: (r := _history(cluster, 2, job="public_ping"))
                       and len([x for x in r if x["params"].get("who", "").startswith("down")])
                       == len(statuses) and r, timeout=20)
    assert pings, "runs made during the outage did not reach history"

    ticks = eventually(lambda: [r for r in _history(cluster, 0, job="tick")
                                if r["started"] >= back + 2], timeout=15)
    assert ticks and all(r["outcome"] == "success" for r in ticks), ticks
    # The gap is reported by one node's upkeep (every few seconds) once it has closed.
    missed = eventually(lambda: [r for r in _history(cluster, 0, job="tick", status="missed")
                                 if r.get("scheduleId") == str(schedule_id)], timeout=20)
    assert len(missed) == 1, [(r["started"] - stopped, r["message"]) for r in missed]
    told = re.search(r"the hub database was unreachable \((\d+) occurrences", missed[0]["message"])
    assert told and DOWN_S - 1 <= int(told.group(1)) <= DOWN_S + 2, missed[0]["message"]
