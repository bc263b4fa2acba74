"""Deleted jobs: ``GET /deleted`` lists the jobs deleted with their versions kept, and
``POST /deleted/<name>/restore`` brings one back from its last saved version.

Jobs these tests save on the shared hub are named ``i17d_...`` and removed after."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess

API = "/api/webjobs"


def save(c: httpx.Client, name: str, code: str) -> dict[str, Any]:
    resp = c.post(f"{API}/save", json={"name": name, "code": code}, headers=AUTH)
    assert resp.status_code == 200, resp.text
    job: dict[str, Any] = resp.json()["job"]
    return job


def deleted(c: httpx.Client) -> dict[str, dict[str, Any]]:
    resp = c.get(f"{API}/deleted", headers=AUTH)
    assert resp.status_code == 200, resp.text
    return {job["name"]: job for job in resp.json()["jobs"]}


def delete(c: httpx.Client, name: str, headers: dict[str, str] = AUTH) -> None:
    assert c.delete(f"{API}/{name}", headers=headers).status_code == 200


@pytest.fixture
def names(client: httpx.Client) -> Iterator[list[str]]:
    """Job names this test owns; each is deleted after (and so stays listed as deleted,
    which other tests here tolerate by looking only at their own names)."""
    owned: list[str] = []
    yield owned
    for name in owned:
        client.delete(f"{API}/{name}", headers=AUTH)


def test_a_deleted_job_is_listed_with_when_who_and_its_last_version(
        hub: HubProcess, client: httpx.Client, names: list[str]) -> None:
    names.append("i17d_report")
    save(client, "i17d_report", "return 1")
    save(client, "i17d_report", "return 2")
    assert "i17d_report" not in deleted(client)
    token = hub.add_user("i17d_owner", "OWNER")
    before = time.time()
    delete(client, "i17d_report", {"Authorization": f"Bearer {token}"})
    listed = deleted(client)["i17d_report"]
    assert set(listed) == {"name", "deletedAt", "deletedBy", "lastVersion"}
    assert listed["deletedBy"] == "i17d_owner" and listed["lastVersion"] == 2
    assert before - 1 <= listed["deletedAt"] <= time.time() + 1


def test_restore_brings_the_last_version_back(client: httpx.Client, names: list[str]) -> None:
    names.append("i17d_back")
    save(client, "i17d_back", "return 'first'")
    save(client, "i17d_back", "return 'last'")
    delete(client, "i17d_back")
    resp = client.post(f"{API}/deleted/i17d_back/restore", headers=AUTH)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["success"] is True and body["job"]["name"] == "i17d_back"
    assert body["job"]["currentVersion"] == 3  # a new version: the history says who
    assert client.get(f"{API}/i17d_back/code", headers=AUTH).text == "return 'last'"
    assert "i17d_back" not in deleted(client)
    listed = {j["name"] for j in client.get(f"{API}/available", headers=AUTH).json()["jobs"]}
    assert "i17d_back" in listed


def test_restoring_over_a_job_that_exists_is_a_conflict(client: httpx.Client,
                                                        names: list[str]) -> None:
    names.append("i17d_alive")
    save(client, "i17d_alive", "return 1")
    resp = client.post(f"{API}/deleted/i17d_alive/restore", headers=AUTH)
    assert resp.status_code == 409 and resp.json()["code"] == "HUB-009", resp.text
    assert client.get(f"{API}/i17d_alive/code", headers=AUTH).text == "return 1"


@pytest.mark.parametrize(("name", "status", "code"), [
    ("i17d_never_saved", 404, "SYS-404"),
    ("bad%20name", 400, "HUB-007"),
])
def test_restoring_what_is_not_a_deleted_job(client: httpx.Client, name: str, status: int,
                                             code: str) -> None:
    resp = client.post(f"{API}/deleted/{name}/restore", headers=AUTH)
    assert resp.status_code == status and resp.json()["code"] == code, resp.text


@pytest.mark.parametrize(("method", "path"), [("GET", "/deleted"),
                                              ("POST", "/deleted/i17d_x/restore")])
def test_deleted_jobs_are_for_owners(hub: HubProcess, method: str, path: str) -> None:
    token = hub.add_user(f"i17d_user_{method.lower()}", "USER")
    with hub.client() as c:
        assert c.request(method, API + path).status_code == 401
        resp = c.request(method, API + path, headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 403, resp.text


def test_a_job_named_like_a_new_route_is_not_shadowed_silently(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={"deleted": "return 'the job'", "check": "return 'the job'"})
    with hub.client() as c:
        listed = {j["name"]: j for j in c.get(f"{API}/available", headers=AUTH).json()["jobs"]}
        for name in ("deleted", "check"):
            assert any(f"/api/webjobs/{name}" in w for w in listed[name]["warnings"]), name
            resp = c.post(f"{API}/save", json={"name": name, "code": "return 2"}, headers=AUTH)
            assert resp.status_code == 400 and resp.json()["code"] == "HUB-007"
        # The route answers its own path.
        assert "jobs" in c.get(f"{API}/deleted", headers=AUTH).json()
