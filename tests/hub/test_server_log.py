"""The hub's own log through real hub processes: a job's console lines in it
(``[WebJob:<name>] <level> <text>``, the run's id, no secret value, at most
WEBJOB_LOG_LINES a run and a note of the rest, a long line cut, live for a watched
run), the JSON format (WEBHUB_LOG_FORMAT=json: every stderr line an object with the
run's fields) and the access log (WEBHUB_ACCESS_LOG, off by default, credential-like
query values masked)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from shared.ndjson import LogLine, MetaData, read_stream
from tests.hub.conftest import AUTH, HubProcess, _wait_healthy, free_port, launch_hub

API = "/api/webjobs"
PLAIN = {**AUTH, "Accept": "application/json"}
VALUE = "sk_test_Server-Log-91c2e7"

JOBS = {
    "talker": """/*
Secrets: log_secret
*/
console.log('the key is ' + secrets.get('log_secret'))
console.warn('careful')
console.error('broken\\n2026-12-02 12:00:00,000 INFO webhub.auth: FORGED')
console.debug('only at debug')
console.info({ n: 1 })
return 'done'""",
    "chatty": "for (let i = 0; i < 1000; i++) console.log('line ' + i)\nreturn 1000",
    "wide": "console.log('w'.repeat(12000))\nreturn 1",
}


def _set_secret(client: httpx.Client) -> None:
    answer = client.put(f"{API}/secrets/log_secret", json={"value": VALUE}, headers=AUTH)
    assert answer.status_code == 200, answer.text


def _job_lines(text: str, job: str) -> list[str]:
    return [line for line in text.splitlines() if f"[WebJob:{job}] " in line
            and " webhub.job " in line]


def _wait_for(path: Path, found: Callable[[str], bool]) -> str:
    """The file's text once ``found`` holds for it (uvicorn writes its access line just
    after the answer went out: polling a file, there is no event to await)."""
    deadline = time.monotonic() + 10
    while True:
        text = path.read_text(errors="replace")
        if found(text) or time.monotonic() > deadline:
            return text
        time.sleep(0.02)


@pytest.fixture
def text_hub(start_hub: Callable[..., HubProcess]) -> HubProcess:
    return start_hub({"WEBJOB_LOG_LINES": "10"}, JOBS)


def test_console_lines_reach_the_log_masked_with_the_run(text_hub: HubProcess) -> None:
    with text_hub.client() as client:
        _set_secret(client)
        answer = client.get(f"{API}/talker", headers=PLAIN)
        assert answer.status_code == 200, answer.text
    run = answer.headers["x-job-id"]
    text = text_hub.log_text()
    lines = _job_lines(text, "talker")
    assert VALUE not in text and "Server-Log" not in text
    assert len(lines) == 4, lines  # the debug line is below the log's level
    assert all(f" webhub.job run={run}: [WebJob:talker] " in line for line in lines)
    assert lines[0].endswith("[WebJob:talker] log the key is ***") and " INFO " in lines[0]
    assert lines[1].endswith("[WebJob:talker] warn careful") and " WARNING " in lines[1]
    assert " ERROR " in lines[2]
    assert lines[2].endswith("error broken\\n2026-12-02 12:00:00,000 INFO webhub.auth: FORGED")
    assert not any(line.startswith("2026-12-02 12:00:00,000") for line in text.splitlines())
    assert lines[3].endswith("[WebJob:talker] info {\"n\":1}")
    assert "uvicorn.access" not in text  # no access log unless asked for


def test_a_run_logs_at_most_its_cap_and_says_how_many_it_left_out(
        text_hub: HubProcess) -> None:
    with text_hub.client() as client:
        quiet = client.get(f"{API}/chatty", headers=PLAIN)
        watched = client.get(f"{API}/chatty", params={"enableLogger": "1"}, headers=AUTH)
    events = list(read_stream([watched.content]))
    assert sum(isinstance(e, LogLine) for e in events) == 1000  # the live console has all
    meta = next(e for e in events if isinstance(e, MetaData))
    text = text_hub.log_text()
    for run in (quiet.headers["x-job-id"], meta.jobId):
        lines = [line for line in _job_lines(text, "chatty") if f"run={run}:" in line]
        assert [line.rsplit(" ", 1)[1] for line in lines[:10]] == [str(i) for i in range(10)]
        assert len(lines) == 11, lines
        assert lines[10].endswith("[WebJob:chatty] warn 990 more console lines not logged "
                                  "(WEBJOB_LOG_LINES=10); history keeps up to 300")


def test_a_long_console_line_is_cut_in_the_log_not_in_the_console(
        text_hub: HubProcess) -> None:
    with text_hub.client() as client:
        watched = client.get(f"{API}/wide", params={"enableLogger": "1"}, headers=AUTH)
    events = list(read_stream([watched.content]))
    assert [e.message for e in events if isinstance(e, LogLine)] == ["w" * 12000]
    (line,) = _job_lines(text_hub.log_text(), "wide")
    assert line.endswith(f"[WebJob:wide] log {'w' * 8192}\u2026 (3808 more characters)")


def test_no_console_in_the_log_when_the_setting_is_zero(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBJOB_LOG_LINES": "0"}, JOBS)
    with hub.client() as client:
        assert client.get(f"{API}/chatty", headers=PLAIN).status_code == 200
    assert "[WebJob:chatty]" not in hub.log_text()


@pytest.fixture
def json_hub(tmp_path: Path) -> Iterator[tuple[HubProcess, Path]]:
    """A hub logging JSON with its access log on; its stderr in a file of its own."""
    jobs_dir = tmp_path / "jobs"
    jobs_dir.mkdir()
    for name, code in JOBS.items():
        (jobs_dir / f"{name}.job.js").write_text(code)
    env = {**_hub_env(tmp_path, jobs_dir), "WEBHUB_LOG_FORMAT": "json",
           "WEBHUB_ACCESS_LOG": "1", "WEBJOB_LOG_LINES": "10"}
    port = free_port()
    stderr_path = tmp_path / "stderr.log"
    with open(tmp_path / "stdout.log", "wb") as out, open(stderr_path, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "hub.cli", "serve", "--port", str(port)],
                                cwd=tmp_path, env=env, stdout=out, stderr=err)
    hub = HubProcess(f"http://127.0.0.1:{port}", proc, stderr_path, jobs_dir, tmp_path / "home")
    try:
        _wait_healthy(hub)
        yield hub, stderr_path
    finally:
        hub.stop()


def _hub_env(tmp: Path, jobs_dir: Path) -> dict[str, str]:
    """The environment launch_hub gives a hub."""
    from tests.hub import conftest

    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
    return {**env, "WEBHUB_HOME": str(tmp / "home"), "WEBJOB_JOBS_DIR": str(jobs_dir),
            "WEBHUB_SYSTEM_TOKEN": conftest.TOKEN, "WEBHUB_NODE": "test-node",
            "WEBHUB_SECRET": conftest.TEST_SECRET, "WEBJOB_PUBLIC_RATE": "0"}


def _objects(text: str) -> list[dict[str, Any]]:
    objects = [json.loads(line) for line in text.splitlines()]
    assert all(isinstance(o, dict) for o in objects)
    return objects


def test_json_log_is_one_object_a_line_with_the_runs_fields(
        json_hub: tuple[HubProcess, Path]) -> None:
    hub, stderr_path = json_hub
    with hub.client() as client:
        _set_secret(client)
        answer = client.get(f"{API}/talker", params={"api_key": "wjk_Query-Secret-5"},
                            headers=PLAIN)
        assert answer.status_code == 200, answer.text
    run = answer.headers["x-job-id"]
    text = _wait_for(stderr_path, lambda t: "/api/webjobs/talker?" in t)
    objects = _objects(text)  # every line, uvicorn's own among them
    assert VALUE not in text and "Query-Secret" not in text
    for o in objects:
        assert {"time", "level", "logger", "message"} <= o.keys() and o["node"] == "test-node"
        assert "color_message" not in o
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    assert any(o["logger"].startswith("uvicorn.error") for o in objects)
    console = [o for o in objects if o["logger"] == "webhub.job"]
    assert [o["level"] for o in console] == ["INFO", "WARNING", "ERROR", "INFO"]
    assert console[0]["message"] == "[WebJob:talker] log the key is ***"
    for o in console:
        assert o["run"] == run and o["job"] == "talker" and o["caller"] == "system"
        assert re.fullmatch(r"[0-9a-f]{6,}|\w+", o["ref"]), o
    access = [o for o in objects if o["logger"] == "uvicorn.access"]
    asked = [o for o in access if "/api/webjobs/talker?" in o["message"]]
    assert len(asked) == 1 and "api_key=***" in asked[0]["message"], access


def test_access_log_in_text_when_asked_for(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_ACCESS_LOG": "1"}, JOBS)
    with hub.client() as client:
        client.get(f"{API}/chatty", params={"token": "tok-Hidden-77", "n": "2"}, headers=PLAIN)
    text = _wait_for(hub.log_path, lambda t: "/api/webjobs/chatty?" in t)
    lines = [line for line in text.splitlines() if " uvicorn.access: " in line]
    asked = [line for line in lines if "/api/webjobs/chatty?" in line]
    assert len(asked) == 1 and asked[0].endswith('"GET /api/webjobs/chatty?token=***&n=2 '
                                                 'HTTP/1.1" 200'), lines
    assert "Hidden-77" not in text


def test_uvicorn_lines_use_the_hubs_text_format(text_hub: HubProcess) -> None:
    started = [line for line in text_hub.log_text().splitlines() if "Application startup" in line]
    assert len(started) == 1 and " INFO uvicorn.error: Application startup complete." in started[0]


def test_launch_hub_log_is_checked_without_the_job_console(tmp_path: Path) -> None:
    """A job's own "ERROR" line is not a fault of the hub's (conftest's check)."""
    from tests.hub.conftest import assert_clean_log

    hub = launch_hub(tmp_path, {"WEBJOB_LOG_LINES": "5"},
                     {"loud": "console.error('ERROR Traceback (most recent call last)')\nreturn 1"})
    try:
        with hub.client() as client:
            assert client.get(f"{API}/loud", headers=PLAIN).status_code == 200
    finally:
        hub.stop()
    assert " ERROR webhub.job " in hub.log_text()
    assert_clean_log(hub)
