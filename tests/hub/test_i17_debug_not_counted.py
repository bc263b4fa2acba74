"""Debug runs through a real hub: kept in history, left out of /available's stats (runs,
failures, success rate, last run) and of /metrics."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from tests.hub.conftest import AUTH, HubProcess
from tests.hub.test_history_api import eventually

API = "/api/webjobs"
PROBE = "let x = 1\nx = 2\nreturn x"


def stopped_debug_run(c: httpx.Client) -> None:
    """A debug session paused on its first line, then stopped (a failed run)."""
    with c.stream("POST", f"{API}/debug/probe", json={}, headers=AUTH) as answer:
        lines = (json.loads(line) for line in answer.iter_lines() if line.strip())
        session = next(e for e in lines if e.get("type") == "debug")["session"]
        assert next(e for e in lines if e.get("type") == "pause")["line"] == 1
        stop = c.post(f"{API}/debug-session/{session}/command", json={"command": "stop"},
                      headers=AUTH)
        assert stop.status_code == 200, stop.text
        assert next(e for e in lines if e.get("success") is False)["code"] == "JOB-001"


def test_a_stopped_debug_session_is_no_failure_nor_last_run(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={"probe": PROBE})
    with hub.client() as c:
        assert c.get(f"{API}/probe", headers=AUTH).status_code == 200
        stopped_debug_run(c)

        def both_recorded() -> list[dict[str, Any]]:
            runs = c.get(f"{API}/history", params={"job": "probe"}, headers=AUTH).json()
            done = [r for r in runs["runs"] if r["outcome"] != "running"]
            return done if len(done) == 2 else []

        recorded = eventually(both_recorded)
        assert sorted(r["source"] for r in recorded) == ["debug", "http"]
        listed = {j["name"]: j for j in c.get(f"{API}/available", headers=AUTH).json()["jobs"]}
        stats = listed["probe"]["stats"]
        assert (stats["runs"], stats["failures"], stats["successRate"]) == (1, 0, 1.0)
        assert stats["lastRun"]["outcome"] == "success"
        metrics = c.get(f"{API}/metrics", headers=AUTH).json()
        assert (metrics["total"], metrics["failures"], metrics["successRate"]) == (1, 0, 1.0)
