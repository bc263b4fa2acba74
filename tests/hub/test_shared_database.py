"""Two hub processes on one PostgreSQL database (``WEBHUB_DB``), with the job store
(``WEBJOB_STORE=db``) and run history (``WEBJOB_HISTORY_STORE=sql``) there: a save
on one node is what the other runs on its very next request, and each node's
history shows the runs of both."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.hub.conftest import AUTH, HubProcess, assert_clean_log, launch_hub
from tests.hub.test_history_api import eventually
from tests.servers import fresh_database


def _save(hub: HubProcess, name: str, code: str) -> dict[str, object]:
    with hub.client() as client:
        answer = client.post("/api/webjobs/save", json={"name": name, "code": code},
                             headers=AUTH)
    assert answer.status_code == 200, answer.text
    job: dict[str, object] = answer.json()["job"]
    return job


def _run(hub: HubProcess, name: str) -> httpx.Response:
    with hub.client() as client:
        return client.get(f"/api/webjobs/{name}", headers={**AUTH, "Accept": "application/json"})


def test_two_nodes_share_jobs_and_history(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        shared = {"WEBHUB_DB": url, "WEBJOB_STORE": "db", "WEBJOB_HISTORY_STORE": "sql"}
        one = launch_hub(tmp_path / "one", {**shared, "WEBHUB_NODE": "node-one"}, jobs={})
        two = launch_hub(tmp_path / "two", {**shared, "WEBHUB_NODE": "node-two"}, jobs={})
        try:
            _save(one, "shared_job", "return 'first'")
            assert _run(two, "shared_job").json() == "first"  # no cache hides the save
            _save(two, "shared_job", "return 'second'")
            assert _run(one, "shared_job").json() == "second"
            with one.client() as client:
                store = client.get("/api/webjobs/store", headers=AUTH).json()
                versions = client.get("/api/webjobs/shared_job/versions", headers=AUTH).json()
                runs = eventually(lambda: (r := client.get(
                    "/api/webjobs/history", params={"job": "shared_job"}, headers=AUTH
                ).json()["runs"]) and len(r) == 2 and r)
            assert store["store"] == "db" and store["database"] == "postgresql"
            assert [v["version"] for v in versions["versions"]] == [2, 1]
            assert {v["savedBy"] for v in versions["versions"]} == {"system"}
            assert runs, "the runs of both nodes never showed in one node's history"
            assert [(r["node"], r["jobVersion"]) for r in runs] == [("node-one", 2),
                                                                    ("node-two", 1)]
        finally:
            one.stop()
            two.stop()
        assert_clean_log(one)
        assert_clean_log(two)
