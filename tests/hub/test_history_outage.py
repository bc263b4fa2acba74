"""No run is lost when the history store goes away: a hub keeps history on
PostgreSQL (``WEBJOB_HISTORY_STORE=sql``), the PostgreSQL server is stopped in the
middle of a load and started again, and every run is in the table afterwards.

This stops the machine's real PostgreSQL server for a few seconds, and always
starts it again (``make test`` would start it too)."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.hub.conftest import AUTH, launch_hub
from tests.hub.test_history_api import eventually
from tests.servers import fresh_database, query

# It stops the whole PostgreSQL server: make test runs it alone, after the rest.
pytestmark = pytest.mark.stops_postgresql

RUNS = 60
JOBS = {"tick": "/*\nAccess: public\n*/\nreturn { n: params.n }"}


def _up() -> bool:
    return subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1"], timeout=20).returncode == 0


def _cluster(action: str) -> None:
    if action == "start" and _up():
        return
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[0]
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action,
                    *(["-m", "fast"] if action == "stop" else [])],
                   check=True, capture_output=True, timeout=60)
    if action == "start":
        subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-t", "30"], check=True,
                       timeout=40)


def _stored_runs(url: str) -> list[tuple[str, str]]:
    rows = query(url, "SELECT job_id, outcome FROM webjob_runs")
    return [(str(r[0]), str(r[1])) for r in rows]


def _status(client: httpx.Client) -> dict[str, object] | None:
    answer = client.get("/api/webjobs/metrics", headers=AUTH)
    return answer.json()["stores"]["history"] if answer.status_code == 200 else None


@pytest.mark.slow
def test_no_run_is_lost_when_postgresql_stops_mid_load(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        assert url.startswith("postgresql://postgres@127.0.0.1:5432/")  # psycopg
        hub = launch_hub(tmp_path, {"WEBHUB_DB": url, "WEBJOB_HISTORY_STORE": "sql"}, JOBS)
        try:
            ids = _load_with_an_outage(hub.url)
            with hub.client() as client:
                status = eventually(lambda: (s := _status(client)) and s["spooled"] == 0
                                    and s["storeReachable"] and s, timeout=60)
                assert status, "the spool was never written back"
            # The last runs may still be in the writer's queue (not the spool) by then.
            stored = eventually(lambda: (rows := dict(_stored_runs(url)))
                                and set(ids) <= set(rows) and rows, timeout=30) or dict(
                                    _stored_runs(url))
            assert set(ids) <= set(stored), f"lost {len(set(ids) - set(stored))} runs"
            assert {stored[i] for i in ids} == {"success"}
        finally:
            _cluster("start")  # whatever happened, the server runs again
            hub.stop()
        assert "spooling runs" in hub.log_text() and "spooled runs written" in hub.log_text()


def _load_with_an_outage(url: str) -> list[str]:
    """RUNS requests, four at a time; PostgreSQL stops after a third and starts again
    after two thirds. Every answer must still be a success."""
    ids: list[str] = []
    with httpx.Client(base_url=url, timeout=30) as client, ThreadPoolExecutor(4) as pool:
        def one(n: int) -> str:
            answer = client.get("/api/webjobs/tick", params={"n": str(n)})
            assert answer.status_code == 200, answer.text
            return answer.headers["X-Job-Id"]

        for start, action in ((0, "stop"), (RUNS // 3, "start"), (2 * RUNS // 3, None)):
            ids.extend(pool.map(one, range(start, start + RUNS // 3)))
            if action is not None:
                _cluster(action)
    return ids
