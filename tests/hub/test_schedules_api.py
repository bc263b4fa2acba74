"""Schedules over HTTP against a real hub process: saving (off unless enabled), plain
words and previews, firing as the scheduler with the stored parameters, history per
schedule, run now, /available, reload, and bad input on every endpoint."""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, running_hub
from tests.hub.test_history_api import eventually

API = "/api/webjobs"
JOBS = {
    "tick": "/*\nAccess: user\n*/\nconsole.log('tick', JSON.stringify(params))\n"
            "return { method: request.method, caller: request.caller.kind, params }",
}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with running_hub(tmp_path_factory.mktemp("schedules"), {"WEBHUB_TZ": "Europe/London"},
                     jobs=JOBS) as process:
        yield process


@pytest.fixture
def client(hub: HubProcess) -> Any:
    with hub.client(headers=AUTH) as c:
        yield c


def create(client: httpx.Client, **fields: Any) -> dict[str, Any]:
    body = {"name": "Nightly tick", "jobName": "tick", "cron": "30 2 * * 1-5", **fields}
    answer = client.post(f"{API}/schedules", json=body)
    assert answer.status_code == 200, answer.text
    schedule: dict[str, Any] = answer.json()["schedule"]
    return schedule


def test_a_schedule_is_saved_off_with_plain_words(client: httpx.Client) -> None:
    made = create(client, params={"who": "ann"})
    assert made["enabled"] is False and made["nextRun"] is None
    assert made["cronText"] == "At 02:30, Monday through Friday (Europe/London)"
    assert made["timezone"] == "Europe/London" and made["catchUp"] == "skip"
    assert made["overlap"] == "skip" and made["maxRetries"] == 0
    listed = {s["id"]: s for s in client.get(f"{API}/schedules").json()["schedules"]}
    assert listed[made["id"]]["name"] == "Nightly tick"
    turned_on = client.put(f"{API}/schedules/{made['id']}", json={"enabled": True}).json()
    assert turned_on["schedule"]["enabled"] is True and turned_on["schedule"]["nextRun"]
    assert client.delete(f"{API}/schedules/{made['id']}").json() == {"success": True}
    assert client.delete(f"{API}/schedules/{made['id']}").status_code == 404


def test_preview(client: httpx.Client) -> None:
    answer = client.post(f"{API}/schedules/preview",
                         json={"cron": "0 9 * * MON", "timezone": "America/New_York"}).json()
    assert answer["cronText"] == "At 09:00, only on Monday (America/New_York)"
    assert len(answer["next"]) == 5 and all(t.endswith("Z") for t in answer["next"])


def test_an_enabled_schedule_fires_as_the_scheduler(client: httpx.Client) -> None:
    made = create(client, name="Every second", cron="* * * * * *", enabled=True,
                  params={"n": 5})
    try:
        runs = eventually(lambda: client.get(f"{API}/schedules/{made['id']}/history")
                          .json()["runs"])
        assert runs, "the schedule never fired"
        record = client.get(f"{API}/{runs[0]['jobId']}/output").json()
        assert record["source"] == "schedule" and record["scheduleId"] == str(made["id"])
        assert record["scheduleName"] == "Every second" and record["method"] == "SCHEDULE"
        assert '"caller":"schedule"' in record["result"] and '"n":5' in record["result"]
        status = client.get(f"{API}/schedules/status").json()
        assert made["id"] in {s["id"] for s in status["loaded"]}
        jobs = {j["name"]: j for j in client.get(f"{API}/available").json()["jobs"]}
        assert jobs["tick"]["scheduled"] is True
        assert made["id"] in {s["id"] for s in jobs["tick"]["schedules"]}
        assert eventually(lambda: {s["id"]: s for s in client.get(f"{API}/schedules").json()
                                   ["schedules"]}[made["id"]]["lastRun"])
    finally:
        client.delete(f"{API}/schedules/{made['id']}")
    status = client.get(f"{API}/schedules/status").json()
    assert made["id"] not in {s["id"] for s in status["loaded"]}


def test_run_now_with_other_parameters(client: httpx.Client) -> None:
    made = create(client, name="Manual", params={"a": 1})
    try:
        answer = client.post(f"{API}/schedules/{made['id']}/run", json={"params": {"b": 2}})
        assert answer.json() == {"success": True, "outcome": "success"}
        runs = eventually(lambda: client.get(f"{API}/schedules/{made['id']}/history")
                          .json()["runs"])
        assert runs[0]["params"] == {"b": 2}
        listed = {s["id"]: s for s in client.get(f"{API}/schedules").json()["schedules"]}
        assert listed[made["id"]]["lastRun"]["outcome"] == "success"  # Run now counts
        assert client.post(f"{API}/schedules/{made['id']}/run").json()["success"] is True
    finally:
        client.delete(f"{API}/schedules/{made['id']}")


def test_stored_parameters_that_are_not_json_run_with_nothing(client: httpx.Client,
                                                               hub: HubProcess) -> None:
    made = create(client, name="Broken params")
    try:
        conn = sqlite3.connect(str(hub.home / "hub.db"))
        conn.execute("UPDATE IQXNetWebJobSchedule SET Params = '{oops' WHERE ID = ?",
                     (made["id"],))
        conn.commit()
        conn.close()
        assert client.post(f"{API}/schedules/{made['id']}/run").json()["success"] is True
        runs = eventually(lambda: client.get(f"{API}/schedules/{made['id']}/history")
                          .json()["runs"])
        assert runs[0]["params"] == {}
        assert "not a JSON object; running with {}" in hub.log_text()
    finally:
        client.delete(f"{API}/schedules/{made['id']}")


def test_reload_reports_how_many_loaded(client: httpx.Client) -> None:
    made = create(client, name="Loaded", enabled=True)
    try:
        answer = client.post(f"{API}/cron").json()
        assert answer["success"] is True and answer["loaded"] >= 1
    finally:
        client.delete(f"{API}/schedules/{made['id']}")


@pytest.mark.parametrize(("method", "path", "body", "status", "words"), [
    ("POST", "/schedules", {"name": "x", "jobName": "tick", "cron": "61 * * * *"}, 400,
     "minute field"),
    ("POST", "/schedules", {"name": "x", "jobName": "tick", "cron": "0 0 30 2 *"}, 400,
     "never fires"),
    ("POST", "/schedules", {"name": "x", "jobName": "tick", "cron": "* * * *"}, 400,
     "expected 5 fields"),
    ("POST", "/schedules", {"name": "x", "jobName": "tick", "cron": "0 * * * *",
                            "timezone": "Mars/Olympus"}, 400, "not a known time zone"),
    ("POST", "/schedules", {"name": "x", "jobName": "../etc", "cron": "0 * * * *"}, 400, ""),
    ("POST", "/schedules", {"name": "x", "jobName": "tick", "cron": "0 * * * *",
                            "maxRetries": 11}, 400, "maxRetries"),
    ("POST", "/schedules", {"name": "x", "jobName": "tick", "cron": "0 * * * *",
                            "params": "[1, 2"}, 400, "params"),
    ("POST", "/schedules", {"name": "x", "jobName": "tick", "cron": "0 * * * *",
                            "overlap": "sometimes"}, 400, "overlap"),
    ("POST", "/schedules", {"jobName": "tick", "cron": "0 * * * *"}, 400, "name"),
    ("POST", "/schedules/preview", {"cron": 5}, 400, "cron"),
    ("PUT", "/schedules/abc", {"enabled": True}, 400, "not a schedule id"),
    ("PUT", "/schedules/999999", {"enabled": True}, 404, "no schedule"),
    ("POST", "/schedules/999999/run", {}, 404, "no schedule"),
    ("GET", "/schedules/999999/history", None, 404, "no schedule"),
    ("DELETE", "/schedules/-1", None, 400, "not a schedule id"),
])
def test_bad_input_is_refused_clearly(client: httpx.Client, method: str, path: str,
                                      body: Any, status: int, words: str) -> None:
    answer = client.request(method, f"{API}{path}", json=body)
    assert answer.status_code == status, answer.text
    assert words.lower() in answer.json()["error"].lower()
    assert "Traceback" not in answer.text


def test_schedules_are_for_owners(client: httpx.Client, hub: HubProcess) -> None:
    token = hub.add_user("sched-user")
    with hub.client(headers={"Authorization": f"Bearer {token}"}) as user:
        assert user.get(f"{API}/schedules").status_code == 403
        assert user.post(f"{API}/schedules", json={}).status_code == 403
        assert user.post(f"{API}/cron").status_code == 403
