"""Exactly once per cluster: three hub processes share one PostgreSQL database
(``WEBHUB_DB``, with history there too) and an every-second schedule. For ten
seconds all three run, then one is killed (SIGKILL) and the other two go on for ten
more. Every occurrence runs once — never twice in one second — and the occurrences
keep firing after the kill (the killed node may take at most one claimed occurrence
down with it).

The test watches the wall clock on purpose: what it checks is firing in real time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.hub.conftest import AUTH, HubProcess, assert_clean_log, launch_hub
from tests.hub.test_history_api import eventually
from tests.servers import fresh_database, query

PHASE_S = 10
JOBS = {"beat": "/*\nAccess: user\n*/\nreturn 1"}


def _scheduled_starts(url: str, schedule_id: int) -> list[float]:
    rows = query(url, "SELECT started FROM webjob_runs WHERE schedule_id = ? "
                      "AND outcome <> 'missed'", [str(schedule_id)])
    return sorted(float(r[0]) for r in rows)


def _settled_starts(url: str, schedule_id: int) -> list[float]:
    """The schedule's starts once history has them all: no run of it still running and
    the same starts read twice a second apart (a busy machine records late)."""
    deadline = time.monotonic() + 30
    last: list[float] | None = None
    while time.monotonic() < deadline:
        running = query(url, "SELECT COUNT(*) FROM webjob_runs WHERE schedule_id = ? "
                             "AND outcome = 'running'", [str(schedule_id)])[0][0]
        starts = _scheduled_starts(url, schedule_id)
        if not int(running) and starts == last:
            return starts
        last = starts
        time.sleep(1.0)  # another process's records: there is no event to await
    raise AssertionError(f"the schedule's history never settled: {last}")


def _count_between(starts: list[float], low: float, high: float) -> list[int]:
    return [int(s) for s in starts if low <= s < high]


@pytest.mark.slow
def test_each_occurrence_fires_once_across_three_nodes(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        env = {"WEBHUB_DB": url, "WEBJOB_HISTORY_STORE": "sql"}
        nodes = [launch_hub(tmp_path / f"n{i}", {**env, "WEBHUB_NODE": f"node-{i}"}, JOBS)
                 for i in range(3)]
        try:
            schedule_id = _start_every_second(nodes)
            began = time.time()
            time.sleep(PHASE_S)  # real time is what is under test
            nodes[2].proc.kill()
            nodes[2].proc.wait(10)
            killed = time.time()
            time.sleep(PHASE_S)
            with nodes[0].client(headers=AUTH) as client:
                client.put(f"/api/webjobs/schedules/{schedule_id}", json={"enabled": False})
            ended = time.time()
            starts = _settled_starts(url, schedule_id)
        finally:
            for node in nodes:
                node.stop()
        before = _count_between(starts, began + 1, killed - 1)
        after = _count_between(starts, killed + 1, ended - 1)
        for seconds in (before, after):
            assert len(seconds) == len(set(seconds)), "an occurrence ran twice"
        assert len(before) >= PHASE_S - 3, f"occurrences lost before the kill: {before}"
        assert len(after) >= PHASE_S - 4, f"occurrences lost after the kill: {after}"
        for node in nodes[:2]:
            assert_clean_log(node)


def _start_every_second(nodes: list[HubProcess]) -> int:
    with nodes[0].client(headers=AUTH) as client:
        made = client.post("/api/webjobs/schedules", json={
            "name": "heartbeat", "jobName": "beat", "cron": "* * * * * *", "enabled": True})
        assert made.status_code == 200, made.text
        schedule_id = int(made.json()["schedule"]["id"])
    for node in nodes[1:]:
        with node.client(headers=AUTH) as client:
            assert client.post("/api/webjobs/cron").json()["loaded"] == 1
    return schedule_id


NAP = {"nap": "/*\nAccess: user\nRuntime: 60000\n*/\n"
              "await new Promise(r => setTimeout(r, 30000))\nreturn 'rested'"}


def _runs_of(url: str, schedule_id: int) -> list[tuple[str, str]]:
    return [(str(job_id), str(outcome)) for job_id, outcome in query(
        url, "SELECT job_id, outcome FROM webjob_runs WHERE schedule_id = ? "
        "AND outcome <> 'missed' ORDER BY started", [str(schedule_id)])]


@pytest.mark.slow
def test_a_run_cut_by_kill_9_is_interrupted_once_when_its_node_starts_again(
        tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        env = {"WEBHUB_DB": url, "WEBJOB_HISTORY_STORE": "sql"}
        hub = launch_hub(tmp_path / "n", env, NAP)
        try:
            with hub.client(headers=AUTH) as client:
                made = client.post("/api/webjobs/schedules", json={
                    "name": "nap", "jobName": "nap", "cron": "* * * * * *", "enabled": True})
                assert made.status_code == 200, made.text
                sid = int(made.json()["schedule"]["id"])
            (cut, outcome), = eventually(lambda: _runs_of(url, sid), timeout=15)
            assert outcome == "running"
        finally:
            hub.proc.kill()
            hub.proc.wait(10)
        again = launch_hub(tmp_path / "n", env, NAP)
        try:
            done = eventually(lambda: [r for r in _runs_of(url, sid) if r[0] == cut
                                       and r[1] == "interrupted"], timeout=15)
            assert done == [(cut, "interrupted")]
            with again.client(headers=AUTH) as client:
                # The scheduler's own sweep took the run over (the schedule says so too).
                listed = client.get("/api/webjobs/schedules").json()["schedules"]
                assert listed[0]["lastRun"]["outcome"] == "interrupted"
                client.put(f"/api/webjobs/schedules/{sid}", json={"enabled": False})
            assert [r for r in _runs_of(url, sid) if r[1] == "interrupted"] == done
        finally:
            again.stop()
        assert_clean_log(again)
