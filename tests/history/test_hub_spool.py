"""A real hub (``webhub serve``) and the spool of issue 16: a spool left by an earlier
start, holding a record with a lone surrogate (which used to block it for good) and a
line that is not a record, is replayed when the hub starts, before any run; the
record is kept with U+FFFD, the line put aside, and the next run goes to the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from hub.history.record import record_to_json
from hub.history.recorder import REJECTED_FILE
from hub.services.history import SPOOL_FILE
from tests.history.conftest import run
from tests.hub.conftest import AUTH, running_hub
from tests.hub.test_history_api import eventually

JOBS = {"public_hello": "console.log('hello', params.who)\nreturn { hello: params.who }"}


def history_status(client: httpx.Client) -> dict[str, Any]:
    answer = client.get("/api/webjobs/metrics", headers=AUTH)
    assert answer.status_code == 200, answer.text
    status: dict[str, Any] = answer.json()["stores"]["history"]
    return status


def recorded(client: httpx.Client, job_id: str) -> dict[str, Any] | None:
    answer = client.get(f"/api/webjobs/{job_id}/output", headers=AUTH)
    return answer.json() if answer.status_code == 200 else None  # type: ignore[no-any-return]


def test_a_hub_recovers_its_spool_at_start_and_records_a_lone_surrogate(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    older = [run("spooled-1"), run("lone-1", params={"who": "\ud800"}), run("spooled-2")]
    (home / SPOOL_FILE).write_bytes(
        b"".join(json.dumps(record_to_json(r)).encode() + b"\n" for r in older)
        + b"[\"not a record\"]\n")
    with running_hub(tmp_path, jobs=JOBS) as hub, hub.client() as client:
        # No run yet: the spool is written at start.
        status = eventually(lambda: (s := history_status(client))["spooled"] == 0 and s)
        assert status and status["storeReachable"], status
        lone = recorded(client, "lone-1")
        assert lone is not None and lone["params"] == {"who": "\ufffd"}
        assert recorded(client, "spooled-1") and recorded(client, "spooled-2")
        aside = (home / REJECTED_FILE).read_bytes().decode("utf-8").splitlines()
        assert len(aside) == 1 and json.loads(json.loads(aside[0])["line"]) == ["not a record"]

        answer = client.get("/api/webjobs/public_hello", params={"who": "ann"},
                            headers={"Accept": "application/json"})
        assert answer.status_code == 200, answer.text
        job_id = answer.headers["X-Job-Id"]
        after = eventually(lambda: recorded(client, job_id))
        assert after and after["params"] == {"who": "ann"}
        assert history_status(client)["spooled"] == 0
        assert not (home / SPOOL_FILE).exists()
    log = hub.log_text()
    assert "put aside in history-rejected.jsonl" in log and "Logging error" not in log
