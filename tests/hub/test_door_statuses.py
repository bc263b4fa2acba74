"""Answers the fuzz layer found breaking the connection or missing their run id: a
job's own 1xx, 204 and 304 statuses, a live answer's ``X-Job-Id``, and a history search
holding a NUL."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.hub.conftest import AUTH, running_hub

JOBS = {"public_status": "return response.json({ said: 'x' }, Number(params.status))"}
PLAIN = {"Accept": "application/json"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with running_hub(tmp_path_factory.mktemp("door_statuses"), jobs=JOBS) as hub, \
            hub.client() as c:
        yield c


@pytest.mark.parametrize("status", [204, 304])
def test_a_status_without_a_body_goes_out_without_one(client: httpx.Client,
                                                      status: int) -> None:
    resp = client.get("/api/webjobs/public_status", params={"status": status}, headers=PLAIN)
    assert resp.status_code == status and resp.content == b""
    assert client.get("/api/webjobs/public_ping", headers=PLAIN).status_code == 200


@pytest.mark.parametrize("status", [100, 101, 199])
def test_an_interim_status_fails_the_run(client: httpx.Client, status: int) -> None:
    resp = client.get("/api/webjobs/public_status", params={"status": status}, headers=PLAIN)
    assert resp.status_code == 500 and resp.json()["code"] == "JOB-001"
    assert f"status {status}" in resp.json()["error"]


def test_a_live_answer_names_its_run(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/public_ping", params={"enableLogger": "1"})
    job_id = resp.headers["x-job-id"]
    meta = [line for line in map(json.loads, resp.text.splitlines())
            if isinstance(line, dict) and line.get("isMetaData")]
    assert [line["jobId"] for line in meta] == [job_id]


@pytest.mark.parametrize("term", ["a\x00b", "\x00\x00\x00", "abc\x00"])
def test_a_history_search_with_a_nul_is_answered(client: httpx.Client, term: str) -> None:
    resp = client.get("/api/webjobs/history", params={"search": term}, headers=AUTH)
    assert resp.status_code == 200, resp.text
    assert resp.json()["runs"] == []
