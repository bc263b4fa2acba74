"""The store and version routes (hub.api.store_routes) on a real hub: one keeping jobs
in files, one keeping them in its database (embedded SQLite)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, assert_clean_log, launch_hub

API = "/api/webjobs"
JOBS = {"rt_one": "return 1", "rt_two": "/*\nName: Two\n*/\nreturn 2"}


def refused(resp: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body: dict[str, Any] = resp.json()
    assert body["success"] is False and body["code"] == code
    return body


@pytest.fixture(scope="module")
def files_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    process = launch_hub(tmp_path_factory.mktemp("files-hub"), jobs=JOBS)
    yield process
    process.stop()
    assert_clean_log(process)


@pytest.fixture(scope="module")
def db_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    process = launch_hub(tmp_path_factory.mktemp("db-hub"), {"WEBJOB_STORE": "db"}, jobs=JOBS)
    yield process
    process.stop()
    assert_clean_log(process)


@pytest.fixture
def files_client(files_hub: HubProcess) -> Iterator[httpx.Client]:
    with files_hub.client(headers=AUTH) as c:
        yield c


@pytest.fixture
def db_client(db_hub: HubProcess) -> Iterator[httpx.Client]:
    with db_hub.client(headers=AUTH) as c:
        yield c


def test_store_on_a_files_hub(files_client: httpx.Client, files_hub: HubProcess) -> None:
    info = files_client.get(f"{API}/store").json()
    on_disk = len(list(Path(files_hub.jobs_dir).glob("*.job.js")))
    assert info == {"store": "files", "database": None, "jobs": on_disk}
    body = refused(files_client.post(f"{API}/store/import-files", json={"overwrite": False}),
                   400, "HUB-001")
    assert "WEBJOB_STORE=db" in body["error"]


def test_versions_list_read_and_restore(files_client: httpx.Client) -> None:
    for code in ("return 'v1'", "return 'v2'"):
        assert files_client.post(f"{API}/save", json={"name": "rt_ver", "code": code}).is_success
    listed = files_client.get(f"{API}/rt_ver/versions").json()["versions"]
    assert [(v["version"], v["savedBy"], v["current"], v["size"]) for v in listed] == [
        (2, "system", True, 11), (1, "system", False, 11)]
    assert all(isinstance(v["saved"], float) for v in listed)
    one = files_client.get(f"{API}/rt_ver/versions/1").json()
    assert (one["version"], one["code"], one["current"]) == (1, "return 'v1'", False)
    restored = files_client.post(f"{API}/rt_ver/versions/1/restore")
    assert restored.status_code == 200 and restored.json()["success"] is True
    assert restored.json()["job"]["name"] == "rt_ver"
    assert files_client.get(f"{API}/rt_ver/code").text == "return 'v1'"
    assert files_client.get(f"{API}/rt_ver/versions").json()["versions"][0]["version"] == 3


def test_a_deleted_job_is_restored(files_client: httpx.Client) -> None:
    files_client.post(f"{API}/save", json={"name": "rt_gone", "code": "return 'kept'"})
    assert files_client.delete(f"{API}/rt_gone").is_success
    listed = files_client.get(f"{API}/rt_gone/versions").json()["versions"]
    assert [(v["version"], v["current"]) for v in listed] == [(1, False)]
    assert files_client.post(f"{API}/rt_gone/versions/1/restore").is_success
    assert files_client.get(f"{API}/rt_gone/code").text == "return 'kept'"


@pytest.mark.parametrize("n", ["0", "-1", "x", "1.5", "99999999999"])
def test_a_bad_version_number_is_refused(files_client: httpx.Client, n: str) -> None:
    files_client.post(f"{API}/save", json={"name": "rt_bad", "code": "return 1"})
    body = refused(files_client.get(f"{API}/rt_bad/versions/{n}"), 400, "HUB-001")
    assert "whole numbers from 1" in body["error"]
    refused(files_client.post(f"{API}/rt_bad/versions/{n}/restore"), 400, "HUB-001")


def test_unknown_jobs_and_versions(files_client: httpx.Client) -> None:
    refused(files_client.get(f"{API}/rt_nobody/versions"), 404, "SYS-404")
    refused(files_client.get(f"{API}/rt_nobody/versions/1"), 404, "SYS-404")
    files_client.post(f"{API}/save", json={"name": "rt_known", "code": "return 1"})
    refused(files_client.get(f"{API}/rt_known/versions/7"), 404, "SYS-404")
    refused(files_client.post(f"{API}/rt_known/versions/7/restore"), 404, "SYS-404")
    refused(files_client.get(f"{API}/bad.name/versions"), 400, "HUB-007")


def test_a_restore_is_checked_like_a_save(files_client: httpx.Client,
                                          files_hub: HubProcess) -> None:
    # A hand-edited file that does not parse is version 1 (unsaved) of its job.
    (Path(files_hub.jobs_dir) / "rt_broken.job.js").write_text("let = ;")
    assert files_client.post(f"{API}/save", json={"name": "rt_broken",
                                                  "code": "return 'fixed'"}).is_success
    refused(files_client.post(f"{API}/rt_broken/versions/1/restore"), 400, "HUB-008")


def test_owners_only(files_hub: HubProcess) -> None:
    with files_hub.client() as anonymous:
        for method, path in (("GET", "/store"), ("POST", "/store/import-files"),
                             ("GET", "/rt_one/versions"), ("GET", "/rt_one/versions/1"),
                             ("POST", "/rt_one/versions/1/restore")):
            resp = anonymous.request(method, f"{API}{path}")
            assert resp.status_code == 401, (method, path, resp.text)


def test_import_into_a_database_hub(db_client: httpx.Client, db_hub: HubProcess) -> None:
    names = sorted(p.name[: -len(".job.js")] for p in Path(db_hub.jobs_dir).glob("*.job.js"))
    assert db_client.get(f"{API}/store").json() == {"store": "db", "database": "sqlite",
                                                    "jobs": 0}
    refused(db_client.post(f"{API}/store/import-files", json={"overwrite": "yes"}),
            400, "HUB-001")
    report = db_client.post(f"{API}/store/import-files", json={"overwrite": False}).json()
    assert (sorted(report["copied"]), report["skipped"], report["replaced"]) == (names, [], [])
    assert db_client.get(f"{API}/store").json()["jobs"] == len(names)
    assert db_client.get(f"{API}/rt_one/code").text == "return 1"
    assert db_client.post(f"{API}/save", json={"name": "rt_one", "code": "return 11"}
                          ).is_success
    again = db_client.post(f"{API}/store/import-files", json={"overwrite": True}).json()
    assert (again["copied"], sorted(again["skipped"]), again["replaced"]) == (
        [], [n for n in names if n != "rt_one"], ["rt_one"])
    listed = db_client.get(f"{API}/rt_one/versions").json()["versions"]
    assert [(v["version"], v["savedBy"]) for v in listed] == [
        (3, "system"), (2, "system"), (1, "system")]
