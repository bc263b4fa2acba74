"""The step debugger over HTTP against a real hub process: a debug run streams its
pauses as NDJSON while the test drives it with commands on the session."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, launch_hub, running_hub

API = "/api/webjobs"
NESTED = """const a = 1
let total = 0
for (const n of [1, 2]) {
  if (n > 1) total += n
  else { total -= 1 }
}
async function twice(x) {
  const y = x * 2
  return y
}
const r = await twice(total)
return { a, total, r }"""
WAIT_S = 20.0


class DebugRun:
    """One debug run: its stream read in a thread, its events on a queue."""

    def __init__(self, hub: HubProcess, name: str, body: dict[str, Any]) -> None:
        self.hub = hub
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.session = ""
        self._thread = threading.Thread(target=self._read, args=(name, body), daemon=True)
        self._thread.start()
        start = self.next("debug")
        self.session, self.job_id = start["session"], start["jobId"]
        self.start = start

    def _read(self, name: str, body: dict[str, Any]) -> None:
        with httpx.Client(base_url=self.hub.url, timeout=60) as client, client.stream(
                "POST", f"{API}/debug/{name}", json=body, headers=AUTH) as answer:
            lines = answer.iter_lines()
            for line in lines:
                if not line.strip():
                    continue
                event = json.loads(line)
                self.events.put(event)
                if event.get("isMetaData"):
                    self.events.put({"type": "payload", "data": "\n".join(lines)})
                    return

    def next(self, *types: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while True:
            event = self.events.get(timeout=max(0.1, deadline - time.monotonic()))
            kind = "meta" if event.get("isMetaData") else (
                "failure" if event.get("success") is False else event.get("type"))
            if not types or kind in types:
                return event

    def command(self, command: str, **extra: Any) -> dict[str, Any]:
        with httpx.Client(base_url=self.hub.url, timeout=30) as client:
            answer = client.post(f"{API}/debug-session/{self.session}/command",
                                 json={"command": command, **extra}, headers=AUTH)
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def pauses(self, command: str = "step") -> Iterator[dict[str, Any]]:
        """Every pause until the run ends, answering each with ``command``."""
        while True:
            event = self.next("pause", "meta", "failure")
            if event.get("type") != "pause":
                self.end = event
                return
            yield event
            self.command(command)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    jobs = {"nested": NESTED,
            "tdz": "const before = 1\nconsole.log('hi')\nlet later = 2\nreturn later",
            "marks": "let x = 1\nbreakpoint()\nx = 2\ndebugger\nx = 3\nreturn x",
            "quick": "/*\nRuntime: 1000\n*/\nconst started = Date.now()\nreturn 'done'",
            "big": "const long = 'x'.repeat(1000)\nconst obj = { a: { b: { c: 1 } }, "
                   "list: [1, 2, 3] }\nreturn 1"}
    with running_hub(tmp_path_factory.mktemp("debugger"), jobs=jobs) as process:
        yield process


def test_stepping_through_nested_blocks_and_async_functions(hub: HubProcess) -> None:
    run = DebugRun(hub, "nested", {"params": {"p": 1}})
    assert run.start["source"] == NESTED and 1 in run.start["pausable"]
    seen = [(p["line"], p["vars"]) for p in run.pauses()]
    assert [line for line, _ in seen] == [1, 2, 3, 4, 5, 4, 4, 11, 8, 9, 12]
    first_vars = seen[0][1]
    assert first_vars["a"]["type"] == "tdz" and first_vars["total"]["type"] == "tdz"
    in_twice = seen[8][1]
    assert in_twice["x"] == {"type": "number", "value": 1}
    assert in_twice["y"]["type"] == "tdz"
    assert seen[10][1]["r"] == {"type": "number", "value": 2}
    assert run.end["isMetaData"] is True
    assert json.loads(run.next("payload")["data"]) == {"a": 1, "total": 1, "r": 2}


def test_breakpoint_only_mode(hub: HubProcess) -> None:
    run = DebugRun(hub, "marks", {"stepFromStart": False})
    lines = [(p["line"], p["reason"], p["vars"]["x"]["value"]) for p in run.pauses("continue")]
    assert lines == [(2, "breakpoint", 1), (4, "breakpoint", 2)]


def test_line_breakpoints_and_config(hub: HubProcess) -> None:
    run = DebugRun(hub, "nested", {"stepFromStart": False, "breakpoints": [9]})
    pause = run.next("pause")
    assert pause["line"] == 9 and pause["vars"]["y"] == {"type": "number", "value": 2}
    run.command("config", breakpoints=[12])
    run.command("continue")
    assert run.next("pause")["line"] == 12
    run.command("detach")
    assert run.next("meta", "failure")["isMetaData"] is True


def test_stop_ends_the_run_with_the_line(hub: HubProcess) -> None:
    run = DebugRun(hub, "nested", {})
    assert run.next("pause")["line"] == 1
    run.command("step")
    assert run.next("pause")["line"] == 2
    run.command("stop")
    failure = run.next("failure")
    assert failure["code"] == "JOB-001"
    assert failure["error"] == "Stopped by the debugger at line 2"


def test_a_client_that_hangs_up_while_parked_ends_the_run_cleanly(hub: HubProcess) -> None:
    with httpx.Client(base_url=hub.url, timeout=30) as client:
        with client.stream("POST", f"{API}/debug/quick", json={}, headers=AUTH) as answer:
            lines = (json.loads(line) for line in answer.iter_lines() if line.strip())
            session = next(lines)["session"]
            assert next(lines)["type"] == "stack"  # each pause's call chain first
            assert next(lines)["type"] == "pause"
        # Hung up while parked: the run ends, its session goes, and no traceback is
        # logged (the fixture checks the log when the hub stops).
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            gone = client.post(f"{API}/debug-session/{session}/command",
                               json={"command": "step"}, headers=AUTH)
            if gone.status_code == 404:
                break
            time.sleep(0.05)  # the hub notices the hang-up on its own schedule
        assert gone.status_code == 404
        # The session goes first; the run leaves the running list once its worker
        # has answered the stop.
        while time.monotonic() < deadline and _running(client, "quick"):
            time.sleep(0.05)
        assert not _running(client, "quick")


def _running(client: httpx.Client, name: str) -> list[dict[str, object]]:
    return [r for r in client.get(f"{API}/running", headers=AUTH).json()["running"]
            if r["jobName"] == name]


def test_the_runtime_limit_is_held_while_parked(hub: HubProcess) -> None:
    run = DebugRun(hub, "quick", {})  # Runtime: 1000 ms
    assert run.next("pause")["line"] == 4
    time.sleep(1.5)  # parked longer than the job's whole runtime limit, on purpose
    run.command("continue")
    assert run.next("meta", "failure").get("isMetaData") is True


def test_long_values_are_cut_and_objects_expand(hub: HubProcess) -> None:
    run = DebugRun(hub, "big", {"breakpoints": [3], "stepFromStart": False})
    pause = run.next("pause")
    long, obj = pause["vars"]["long"], pause["vars"]["obj"]
    assert len(long["value"]) == 200 and long["truncated"] == 1000
    assert obj["type"] == "object" and obj["size"] == 2
    level = run.command("expand", handle=obj["handle"])
    assert level["entries"]["list"]["type"] == "array" and level["entries"]["list"]["length"] == 3
    inner = run.command("expand", handle=level["entries"]["a"]["handle"])
    assert inner["entries"]["b"]["type"] == "object"
    run.command("continue")
    assert run.next("meta", "failure")["isMetaData"] is True


def test_unsaved_code_and_bad_input(hub: HubProcess) -> None:
    run = DebugRun(hub, "draft", {"code": "const q = params.q\nreturn q", "params": {"q": 7}})
    assert [p["line"] for p in run.pauses()] == [1, 2]
    with hub.client(headers=AUTH) as client:
        broken = client.post(f"{API}/debug/draft", json={"code": "let = ;"})
        assert broken.json()["code"] == "JOB-001" and broken.json()["line"] == 1
        assert client.post(f"{API}/debug/nested", json={"params": 5}).json()["code"] == "HUB-001"
        gone = client.post(f"{API}/debug-session/dbg_nope/command", json={"command": "step"})
        assert gone.status_code == 404
    with hub.client() as anonymous:
        assert anonymous.post(f"{API}/debug/nested", json={}).status_code == 401


def test_normal_runs_are_not_instrumented(hub: HubProcess) -> None:
    with hub.client(headers={**AUTH, "Accept": "application/json"}) as client:
        assert client.get(f"{API}/marks").json() == 3
        leaked = client.post(f"{API}/execute", files={"file": ("x.job.js", b"return typeof __dbg")})
    assert '"undefined"' in leaked.text


REPLAYED = """const rows = await db.exec("SELECT COUNT(*) AS n FROM Department")
const n = rows[0].n
if (n > 0) throw new Error('too many departments: ' + n)
return n"""


def test_a_recorded_failure_replays_to_the_same_error_without_the_database(
        tmp_path: Any) -> None:
    import sqlite3

    from tests.hub.test_history_api import eventually

    hub = launch_hub(tmp_path, jobs={"counted": REPLAYED})
    try:
        with hub.client(headers={**AUTH, "Accept": "application/json"}) as client:
            failed = client.get(f"{API}/counted")
            assert failed.status_code == 500
            message = failed.json()["error"]
            runs = eventually(lambda: client.get(f"{API}/history", params={
                "job": "counted", "status": "failed"}).json()["runs"])
            job_id = runs[0]["jobId"]
            recorded = client.get(f"{API}/{job_id}/output").json()
        assert recorded["calls"][0]["answer"][0]["n"] > 0
        conn = sqlite3.connect(str(hub.home / "business.db"))
        conn.execute("DELETE FROM Department")  # the database no longer says so
        conn.commit()
        conn.close()
        run = DebugRun(hub, "replay/" + job_id, {"stepFromStart": False})
        logs = []
        while (event := run.next("log", "failure", "meta")).get("type") == "log":
            logs.append(event["message"])
        assert event["error"] == message and event["line"] == 3, event
        assert "replay: db.exec call 1 answered from the recording" in logs
    finally:
        hub.stop()


ORDERED = ("/*\nAccess: owner\n*/\nfor (let i = 0; i < 10; i++) {\n"
           "  console.log('before', i)\n  await db.exec('SELECT 1 AS x')\n"
           "  console.log('after', i)\n}\nreturn 1")


def test_a_replays_notes_are_timed_on_the_jobs_clock(hub: HubProcess) -> None:
    """The hub's line for each replayed answer sits, by its time, between the job's
    lines around it: both are timed from when the hub took the run (the hub's clock
    used to start milliseconds before the job's, so its notes came out of order)."""
    from tests.hub.test_history_api import eventually

    with hub.client(headers={**AUTH, "Accept": "application/json"}) as client:
        job_id = client.post(f"{API}/save", json={"name": "ordered", "code": ORDERED}
                             ).raise_for_status() and client.get(f"{API}/ordered"
                                                                 ).headers["x-job-id"]
        assert eventually(lambda: client.get(f"{API}/{job_id}/output").status_code == 200)
    run = DebugRun(hub, "replay/" + job_id, {"stepFromStart": False})
    logs = []
    while (event := run.next("log", "result", "meta")).get("type") == "log":
        logs.append((event["t"], event["message"]))
    assert len(logs) == 30 and sum("replay:" in m for _, m in logs) == 10, logs
    assert [t for t, _ in logs] == sorted(t for t, _ in logs), logs


PAGE_JOB = "/*\nMode: page\nAccess: public\n*/\nconst shown = 'page'\nreturn response.html(shown)"


def test_sessions_belong_to_an_identity_not_a_name(tmp_path: Any) -> None:
    """An OWNER named 'system' is not the system token: it can neither drive, watch nor
    tag its requests with the system token's sessions, and the system token cannot drive
    the user's; a replay belongs to the owner who asked for it, not to the recorded
    caller."""
    hub = launch_hub(tmp_path, jobs={"nested": NESTED, "page": PAGE_JOB})
    try:
        namesake = {"Authorization": f"Bearer {hub.add_user('system', 'OWNER')}"}
        run = DebugRun(hub, "nested", {})
        assert run.next("pause")["line"] == 1
        with hub.client(headers=namesake) as as_user:
            command = as_user.post(f"{API}/debug-session/{run.session}/command",
                                   json={"command": "stop"})
            assert command.status_code == 404 and command.json()["code"] == "SYS-404"
            attached = httpx.post(f"{hub.url}{API}/debug/page/attach", json={},
                                  headers=AUTH).json()["session"]
            watch = as_user.get(f"{API}/debug-session/{attached}/events")
            assert watch.status_code == 404, watch.text
            tagged = as_user.get(f"{API}/page", params={"_debug": attached, "raw": "1"},
                                 timeout=10)  # not parked: the tag is someone else's
            assert tagged.status_code == 200 and tagged.text == "page", tagged.text
            ran = as_user.get(f"{API}/nested", params={"raw": "1"})
            assert ran.status_code == 200
        assert run.command("continue")["resumed"] is True  # the owner still drives it
        assert run.next("meta", "failure").get("isMetaData")
        _replay_is_the_askers(hub, namesake, ran.headers["x-job-id"])
    finally:
        hub.stop()


def _replay_is_the_askers(hub: HubProcess, asker: dict[str, str], job_id: str) -> None:
    """The user replays a run the user made: the session is the user's, so the system
    token (whose name the user shares) cannot drive it."""
    from tests.hub.test_history_api import eventually

    with hub.client(headers={**AUTH, "Accept": "application/json"}) as client:
        eventually(lambda: client.get(f"{API}/{job_id}/output").status_code == 200)
    with httpx.Client(base_url=hub.url, timeout=30, headers=asker) as client, \
            client.stream("POST", f"{API}/debug/replay/{job_id}", json={}) as answer:
        lines = answer.iter_lines()  # kept: dropping it would hang up, ending the run
        session = json.loads(next(lines))["session"]
        refused = httpx.post(f"{hub.url}{API}/debug-session/{session}/command",
                             json={"command": "continue"}, headers=AUTH)
        assert refused.status_code == 404, refused.text
        done = client.post(f"{API}/debug-session/{session}/command",
                           json={"command": "detach"})
        assert done.status_code == 200, done.text
        assert any('"isMetaData":true' in line for line in lines)


def test_an_editor_run_of_saved_text_replays_that_version(hub: HubProcess) -> None:
    """The editor runs its text through /execute: when that is the saved text, the run is
    of that version, and a replay after a later save still steps through what ran."""
    from tests.hub.test_history_api import eventually

    first, second = "const said = 'one'\nreturn said", "const said = 'two'\nreturn said"
    with hub.client(headers=AUTH) as client:
        client.post(f"{API}/save", json={"name": "versioned", "code": first}).raise_for_status()
        ran = client.post(f"{API}/execute", data={"source": "editor", "name": "versioned"},
                          files={"file": ("versioned.job.js", first.encode())})
        meta = next(json.loads(line) for line in ran.text.splitlines()
                    if line.strip() and json.loads(line).get("isMetaData"))
        job_id = meta["jobId"]
        detail = eventually(lambda: (got := client.get(f"{API}/{job_id}/output")).status_code
                            == 200 and got.json())
        assert detail["jobVersion"] == 1, detail
        unsaved = client.post(f"{API}/execute", data={"source": "editor", "name": "versioned"},
                              files={"file": ("versioned.job.js", b"return 'draft'")})
        draft_id = next(json.loads(line) for line in unsaved.text.splitlines()
                        if line.strip() and json.loads(line).get("isMetaData"))["jobId"]
        draft = eventually(lambda: (got := client.get(f"{API}/{draft_id}/output")).status_code
                           == 200 and got.json())
        assert draft["jobVersion"] is None, draft  # unsaved text is no version
        client.post(f"{API}/save", json={"name": "versioned", "code": second}
                    ).raise_for_status()
    run = DebugRun(hub, "replay/" + job_id, {"stepFromStart": False})
    assert "'one'" in run.start["source"], run.start["source"]
