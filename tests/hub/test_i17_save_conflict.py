"""A save says which version it was based on (``baseVersion``), and the hub refuses a
lost update: 409 HUB-010 with the job's ``currentVersion``, nothing saved.

Jobs these tests save on the shared hub are named ``i17s_...`` and removed after."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from shared.errors import JobChanged, error_from_wire
from tests.hub.conftest import AUTH, HubProcess

API = "/api/webjobs"


def save(c: httpx.Client, name: str, code: str, **extra: Any) -> httpx.Response:
    return c.post(f"{API}/save", json={"name": name, "code": code, **extra}, headers=AUTH)


def saved_version(resp: httpx.Response) -> int:
    assert resp.status_code == 200, resp.text
    version = resp.json()["job"]["currentVersion"]
    assert isinstance(version, int)
    return version


def code_of(c: httpx.Client, name: str) -> str:
    resp = c.get(f"{API}/{name}/code", headers=AUTH)
    assert resp.status_code == 200, resp.text
    return resp.text


def changed(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 409, resp.text
    body: dict[str, Any] = resp.json()
    assert body["success"] is False and body["code"] == "HUB-010" and body["error"]
    assert "currentVersion" in body
    return body


@pytest.fixture
def job(client: httpx.Client) -> Iterator[str]:
    name = "i17s_job"
    client.delete(f"{API}/{name}", headers=AUTH)
    yield name
    client.delete(f"{API}/{name}", headers=AUTH)


def test_a_save_based_on_the_current_version_saves(client: httpx.Client, job: str) -> None:
    first = saved_version(save(client, job, "return 1"))
    second = saved_version(save(client, job, "return 2", baseVersion=first))
    assert second == first + 1 and code_of(client, job) == "return 2"


def test_a_stale_save_is_refused_and_saves_nothing(client: httpx.Client, job: str) -> None:
    opened = saved_version(save(client, job, "return 1"))
    theirs = saved_version(save(client, job, "return 'theirs'", baseVersion=opened))
    body = changed(save(client, job, "return 'mine'", baseVersion=opened))
    assert body["currentVersion"] == theirs
    assert code_of(client, job) == "return 'theirs'"
    versions = client.get(f"{API}/{job}/versions", headers=AUTH).json()["versions"]
    assert versions[0]["version"] == theirs  # no version was added by the refused save
    # The console turns the answer back into its own class, version and all.
    back = error_from_wire(body)
    assert isinstance(back, JobChanged) and back.current_version == theirs


@pytest.mark.parametrize("base", [None, "absent"])
def test_no_base_version_saves_over_whatever_is_there(client: httpx.Client, job: str,
                                                      base: str | None) -> None:
    saved_version(save(client, job, "return 1"))
    saved_version(save(client, job, "return 2"))
    extra = {} if base == "absent" else {"baseVersion": None}
    saved_version(save(client, job, "return 'forced'", **extra))
    assert code_of(client, job) == "return 'forced'"


def test_base_version_zero_is_a_new_job(client: httpx.Client, job: str) -> None:
    made = saved_version(save(client, job, "return 1", baseVersion=0))
    body = changed(save(client, job, "return 2", baseVersion=0))
    assert body["currentVersion"] == made and code_of(client, job) == "return 1"


def test_a_job_deleted_since_it_was_opened_is_a_conflict(client: httpx.Client,
                                                         job: str) -> None:
    opened = saved_version(save(client, job, "return 1"))
    assert client.delete(f"{API}/{job}", headers=AUTH).status_code == 200
    body = changed(save(client, job, "return 2", baseVersion=opened))
    assert body["currentVersion"] is None
    assert client.get(f"{API}/{job}/code", headers=AUTH).status_code == 404


@pytest.mark.parametrize("base", ["1", True, -1, 1.0, 1.5, [1], {"v": 1}])
def test_a_base_version_that_is_no_version_is_bad_input(client: httpx.Client, job: str,
                                                        base: object) -> None:
    resp = save(client, job, "return 1", baseVersion=base)
    assert resp.status_code == 400 and resp.json()["code"] == "HUB-001", resp.text
    assert client.get(f"{API}/{job}/code", headers=AUTH).status_code == 404


def test_the_code_says_which_version_it_is(client: httpx.Client, job: str) -> None:
    version = saved_version(save(client, job, "return 1"))
    resp = client.get(f"{API}/{job}/code", headers=AUTH)
    assert resp.headers["X-Job-Version"] == str(version)
    listed = {j["name"]: j for j in client.get(f"{API}/available", headers=AUTH).json()["jobs"]}
    assert listed[job]["currentVersion"] == version


def test_of_saves_racing_from_one_version_exactly_one_wins(hub: HubProcess, job: str) -> None:
    with hub.client() as c:
        opened = saved_version(save(c, job, "return 0"))
    statuses: list[int] = []
    start = threading.Barrier(6)

    def racer(n: int) -> None:
        with hub.client() as c:
            start.wait()
            statuses.append(save(c, job, f"return {n + 1}", baseVersion=opened).status_code)

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200] + [409] * 5
    with hub.client() as c:
        versions = c.get(f"{API}/{job}/versions", headers=AUTH).json()["versions"]
    assert versions[0]["version"] == opened + 1
