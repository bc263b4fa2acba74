"""The job's ``Isolation:`` header reaches the engine: ``JobRunner.run`` builds the
``RunRequest`` with it (warm unless the header says ``fresh``). The engine here only
records what it is asked, so the test says what the runner sends, not how it runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import cast

import pytest

from hub.auth import SYSTEM
from hub.engine.engine import Engine, RunRequest, RunResult
from hub.services.runs import JobRunner
from hub.settings import load_settings
from hub.store.files import FileJobStore


class RecordingEngine:
    def __init__(self) -> None:
        self.requests: list[RunRequest] = []

    async def run(self, req: RunRequest) -> RunResult:
        self.requests.append(req)
        return RunResult(req.job_id, True, {}, b"1", None, 1, 1)


@pytest.mark.parametrize(("header", "isolation"), [
    ("", "warm"), ("/*\nIsolation: fresh\n*/\n", "fresh"), ("/*\nIsolation: warm\n*/\n", "warm"),
    ("/*\nIsolation: cold\n*/\n", "warm")])
def test_the_header_says_how_the_run_is_isolated(tmp_path: Path, header: str,
                                                 isolation: str) -> None:
    settings = load_settings({"WEBHUB_HOME": str(tmp_path)})
    store = FileJobStore(tmp_path / "jobs")
    engine = RecordingEngine()
    runner = JobRunner(settings, store, cast(Engine, engine))
    job = runner.describe("iso_job", header + "counter = 5\nreturn counter")
    asyncio.run(runner.run(job, caller=SYSTEM, params={}, request={"method": "GET"}))
    [req] = engine.requests
    assert req.isolation == isolation
