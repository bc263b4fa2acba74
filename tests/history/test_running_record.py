"""When History writes a run's ``running`` record: only for a run still going after
RUNNING_VISIBLE_AFTER_S, so a short run costs one record (its end), not two."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from hub.auth import Caller
from hub.engine.engine import RunResult
from hub.history.base import HistoryStore
from hub.history.record import RunRecord
from hub.history.recorder import Recorder
from hub.services import history as history_service
from hub.services.history import History, RunStart

SOON_S = 0.02  # the running write's delay here, so the tests wait little


@pytest.fixture(autouse=True)
def soon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_service, "RUNNING_VISIBLE_AFTER_S", SOON_S)


class Collected:
    """Stands in for the Recorder's queue: History only hands it records."""

    def __init__(self) -> None:
        self.records: list[RunRecord] = []

    def record(self, record: RunRecord) -> None:
        self.records.append(record)


def history() -> tuple[History, Collected]:
    collected = Collected()
    store = cast(HistoryStore, None)  # never queried here
    return History(store, cast(Recorder, collected), "node-a"), collected


def start(job_id: str) -> RunStart:
    return RunStart(job_id, "nap", 1, "http", Caller("anonymous"), {}, "GET", "ref1")


def result(job_id: str) -> RunResult:
    return RunResult(job_id, True, {"status": 200, "type": "json"}, b'"ok"', None, 3, 2)


def test_a_short_run_is_written_once_when_it_ends() -> None:
    async def go() -> list[RunRecord]:
        hist, collected = history()
        record = hist.begin(start("job_short"))
        hist.end(record, result("job_short"), [])
        await asyncio.sleep(SOON_S * 5)  # the cancelled write stays away
        return collected.records

    records = asyncio.run(go())
    assert [r.outcome for r in records] == ["success"]


def test_a_long_run_is_shown_running_then_ended() -> None:
    async def go() -> list[RunRecord]:
        hist, collected = history()
        record = hist.begin(start("job_long"))
        while not collected.records:  # the running record arrives by itself
            await asyncio.sleep(0.02)
        hist.end(record, result("job_long"), [])
        return collected.records

    records = asyncio.run(go())
    assert [r.outcome for r in records] == ["running", "success"]
    assert records[0].ended is None and records[1].ended is not None


def test_an_abrupt_end_cancels_the_running_write() -> None:
    async def go() -> list[RunRecord]:
        hist, collected = history()
        record = hist.begin(start("job_abrupt"))
        hist.end_abruptly(record, "the run ended without an outcome")
        await asyncio.sleep(SOON_S * 5)
        return collected.records

    assert [r.outcome for r in asyncio.run(go())] == ["failed"]
