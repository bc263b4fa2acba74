"""Run history over HTTP against a real hub process (the embedded local store):
every kind of run is recorded, searchable and replayable; metrics and per-job
statistics; bad queries are clear 400s; a restarted hub marks what it left
running as interrupted.

Records are written off the request path, so a test waits (with a deadline) for a
run to appear rather than assuming it already has."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, launch_hub, running_hub

JOBS = {
    "greet": "/*\nAccess: public\n*/\nconsole.log('hello', params.who)\n"
             "console.warn('careful')\nreturn { hi: params.who }",
    "boom": "/*\nAccess: public\n*/\nconsole.error('about to fail')\n"
            "throw new Error('kaboom ' + params.n)",
    "spin": "/*\nAccess: public\nRuntime: 300\n*/\nwhile (true) {}",
    "nap": "/*\nAccess: public\nRuntime: 30000\n*/\nconsole.log('napping')\n"
           "await new Promise(r => setTimeout(r, Number(params.ms)))\nreturn 'rested'",
    "big": "/*\nAccess: public\n*/\nfor (let i = 0; i < 400; i++) console.log('line ' + i)\n"
           "return response.text('x'.repeat(70000))",
}


def eventually(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Poll a hub from outside its process (there is no event to await) until
    ``check`` gives something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def history(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    answer = client.get("/api/webjobs/history", params=params, headers=AUTH)
    assert answer.status_code == 200, answer.text
    runs: list[dict[str, Any]] = answer.json()["runs"]
    return runs


def finished(client: httpx.Client, job_id: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        answer = client.get(f"/api/webjobs/{job_id}/output", headers=AUTH)
        if answer.status_code == 200 and answer.json()["outcome"] != "running":
            return dict(answer.json())
        return None

    record: dict[str, Any] | None = eventually(done)
    assert record, f"run {job_id} never reached history"
    return record


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with running_hub(tmp_path_factory.mktemp("history"), jobs=JOBS) as process:
        yield process


@pytest.fixture
def client(hub: HubProcess) -> Any:
    with hub.client() as c:
        yield c


def test_a_run_is_recorded_with_everything(client: httpx.Client) -> None:
    answer = client.post("/api/webjobs/greet", json={"who": "ann", "password": "hunter22"},
                         headers=AUTH)
    assert answer.status_code == 200
    record = finished(client, answer.headers["X-Job-Id"])
    assert record["jobName"] == "greet" and record["outcome"] == "success"
    assert record["source"] == "http" and record["method"] == "POST"
    assert record["params"] == {"who": "ann", "password": "***"}
    assert record["caller"] == {"kind": "system", "id": "system", "name": "system",
                                "userClass": "OWNER"}
    assert record["httpStatus"] == 200 and record["resultType"] == "json"
    assert '"hi"' in record["result"] and record["resultTruncated"] is False
    assert [(x["level"], x["message"]) for x in record["logs"]] == [
        ("log", "hello ann"), ("warn", "careful")]
    assert all(isinstance(x["ms"], int) and x["ms"] >= 0 for x in record["logs"])
    assert record["node"] == "test-node" and record["ref"]
    assert record["ended"] >= record["started"] and record["runtimeMs"] >= 0
    logs = client.get(f"/api/webjobs/{record['jobId']}/logs", headers=AUTH).json()
    assert logs["logs"] == record["logs"] and logs["truncated"] is False


def test_failures_and_limits_are_recorded(client: httpx.Client) -> None:
    assert client.get("/api/webjobs/boom", params={"n": "7"}).status_code == 500
    assert client.get("/api/webjobs/spin").status_code == 500
    boom = eventually(lambda: history(client, job="boom", status="failed"))[0]
    spin = eventually(lambda: history(client, job="spin", status="failed"))[0]
    assert boom["code"] == "JOB-001" and boom["message"] == "Error: kaboom 7 (line 5)"
    assert boom["caller"]["kind"] == "anonymous" and boom["httpStatus"] == 500
    assert spin["code"] == "JOB-003" and spin["limit"] == "runtime"
    output = finished(client, boom["jobId"])
    assert output["logs"][0]["message"] == "about to fail" and output["result"] is None


def test_big_results_and_consoles_are_bounded(client: httpx.Client) -> None:
    assert client.get("/api/webjobs/big").status_code == 200
    run = eventually(lambda: history(client, job="big"))[0]
    record = finished(client, run["jobId"])
    assert record["resultTruncated"] is True and record["resultSize"] == 70000
    assert len(record["result"].encode()) == 64 * 1024
    assert len(record["logs"]) == 300 and record["logsTruncated"] is True


def test_editor_and_adhoc_runs_are_recorded(client: httpx.Client) -> None:
    code = "console.log('from the editor')\nreturn 42"
    for source in ("editor", "adhoc"):
        answer = client.post("/api/webjobs/execute", headers=AUTH,
                             files={"file": ("draft.job.js", code.encode())},
                             data={"source": source} if source == "editor" else {})
        assert answer.status_code == 200
    assert eventually(lambda: history(client, source="editor"))[0]["jobName"] == "draft"
    assert eventually(lambda: history(client, source="adhoc"))[0]["jobName"] == "draft"


def test_search_and_filters(client: httpx.Client) -> None:
    client.post("/api/webjobs/greet", json={"who": "Zebedee-42"})
    found = eventually(lambda: history(client, search="zebedee-42"))  # params, any case
    assert {r["jobName"] for r in found} == {"greet"}
    assert eventually(lambda: history(client, search="about to fail"))  # console text
    assert eventually(lambda: history(client, search="kaboom"))  # error message
    assert history(client, search="no-such-thing-anywhere") == []
    assert all(r["outcome"] == "success" for r in history(client, status="success"))
    assert history(client, caller="nobody-called-this") == []
    newest = history(client, limit=2)
    assert len(newest) == 2 and newest[0]["started"] >= newest[1]["started"]
    assert history(client, limit=1, offset=1)[0]["jobId"] == newest[1]["jobId"]
    assert history(client, since="2999-01-01") == []
    assert history(client, until="2000-01-01T00:00:00Z") == []
    assert history(client, since=str(int(time.time() * 1000) - 3_600_000))


@pytest.mark.parametrize(("params", "words"), [
    ({"limit": "-1"}, "'limit' must be between 1 and 500"),
    ({"limit": "100000"}, "'limit' must be between 1 and 500"),
    ({"limit": "ten"}, "'limit' must be a whole number"),
    ({"offset": "-5"}, "'offset' must be between 0"),
    ({"since": "yesterday"}, "'since' must be an ISO 8601 date"),
    ({"until": "2026-13-45"}, "'until' must be an ISO 8601 date"),
    ({"since": "2026-02-01", "until": "2026-01-01"}, "'until' is before 'since'"),
    ({"status": "exploded"},
     "'status' must be one of success, failed, running, interrupted, missed"),
    ({"source": "fax"}, "'source' must be one of http, editor"),
    ({"search": "x" * 300}, "'search' may be at most 200 characters"),
    ({"stauts": "failed"}, "unknown history filter 'stauts'"),
])
def test_bad_queries_are_clear_400s(client: httpx.Client, params: dict[str, str],
                                    words: str) -> None:
    answer = client.get("/api/webjobs/history", params=params, headers=AUTH)
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "HUB-001" and words in body["error"], body
    assert "Traceback" not in answer.text


def test_history_is_for_owners_only(client: httpx.Client, hub: HubProcess) -> None:
    assert client.get("/api/webjobs/history").status_code == 401
    token = hub.add_user("hist-user")
    user = {"Authorization": f"Bearer {token}"}
    for path in ("/history", "/metrics", "/job_1/output", "/job_1/logs"):
        assert client.get(f"/api/webjobs{path}", headers=user).status_code == 403
    assert client.get("/api/webjobs/job_nope/output", headers=AUTH).status_code == 404


def test_a_run_in_flight_is_running_then_done(client: httpx.Client, hub: HubProcess) -> None:
    with hub.client() as other:
        thread = threading.Thread(
            target=lambda: other.get("/api/webjobs/nap", params={"ms": "1500"}))
        thread.start()
        running = eventually(lambda: history(client, job="nap", status="running"))
        assert running and running[0]["outcome"] == "running"
        stats = client.get("/api/webjobs/available", headers=AUTH).json()["jobs"]
        assert next(j for j in stats if j["name"] == "nap")["stats"]["running"] is True
        thread.join()
    assert finished(client, running[0]["jobId"])["result"] == '"rested"'


def test_metrics_and_per_job_statistics(client: httpx.Client) -> None:
    for _ in range(3):
        client.get("/api/webjobs/greet", params={"who": "m"})
    client.get("/api/webjobs/boom", params={"n": "1"})
    eventually(lambda: len(history(client, job="greet")) >= 3
               and len(history(client, job="boom")) >= 1)  # recorded off the request path
    metrics = client.get("/api/webjobs/metrics", headers=AUTH).json()
    assert metrics["total"] >= 4 and metrics["failures"] >= 1
    assert 0 < metrics["successRate"] < 1 and metrics["failuresToday"] >= 1
    assert len(metrics["runsPerHour"]) == 24 and metrics["runsPerHour"][-1] >= 4, metrics
    assert len(metrics["failuresPerHour"]) == len(metrics["p95PerHour"]) == 24
    assert metrics["p95PerHour"][-1] is not None
    assert metrics["runtime"]["max"] >= metrics["runtime"]["p50"] >= 0
    assert metrics["workersMax"] == 3 and metrics["workersRunning"] >= 0
    assert metrics["stores"]["history"]["kind"] == "local"
    assert metrics["stores"]["jobs"] == "files"
    jobs = {j["name"]: j["stats"]
            for j in client.get("/api/webjobs/available", headers=AUTH).json()["jobs"]}
    greet, boom = jobs["greet"], jobs["boom"]
    assert greet["runs"] >= 3 and greet["lastRun"]["outcome"] == "success"
    assert greet["p50Runtime"] is not None and greet["running"] is False
    assert boom["failures"] >= 1 and boom["successRate"] < 1
    assert boom["lastRun"]["by"] in ("anonymous", None)
    assert jobs["spin"]["runs"] >= 1 and all(j["runs"] >= 0 for j in jobs.values())


def test_a_restarted_hub_marks_what_it_left_running_interrupted(tmp_path: Any) -> None:
    first = launch_hub(tmp_path, jobs=JOBS)
    with first.client() as c:
        threading.Thread(target=lambda: _quietly(c, "/api/webjobs/nap?ms=20000"),
                         daemon=True).start()
        left = eventually(lambda: history(c, job="nap", status="running"))
        assert left
    first.proc.kill()  # no clean shutdown: the run is left "running" in the file
    first.proc.wait(10)
    second = launch_hub(tmp_path, jobs=JOBS)
    try:
        with second.client() as c:
            record = c.get(f"/api/webjobs/{left[0]['jobId']}/output", headers=AUTH).json()
            assert record["outcome"] == "interrupted"
            assert "stopped before the run ended" in record["message"]
    finally:
        second.stop()


def _quietly(client: httpx.Client, path: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the hub is killed under it on purpose
        client.get(path)
