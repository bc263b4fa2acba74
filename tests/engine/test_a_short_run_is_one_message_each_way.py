"""A short run costs one message each way between the hub and its worker: the run,
and its answer, which also says the worker is ready for the next (a separate ready
line used to follow every answer: another write, read and wake-up on both sides)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.pool import WorkerProcess
from tests.engine.conftest import EngineHarness, body_json, workers

RUNS = 20


@pytest.fixture()
def seen() -> Iterator[list[str]]:
    """The kinds of the messages the hub reads from its workers, "done+ready" for an
    answer that says ready."""
    kinds: list[str] = []
    dispatch = WorkerProcess._dispatch

    def recording(self: WorkerProcess, msg: dict[str, Any], body: bytes, size: int) -> None:
        kinds.append(str(msg.get("t")) + ("+ready" if msg.get("ready") else ""))
        dispatch(self, msg, body, size)

    WorkerProcess._dispatch = recording  # type: ignore[method-assign]
    yield kinds
    WorkerProcess._dispatch = dispatch  # type: ignore[method-assign]


async def checked(harness: EngineHarness) -> None:
    while any(worker.settling for worker in harness.engine.pool._all):
        await asyncio.sleep(0.005)


def one_after_another(harness: EngineHarness, source: str) -> list[Any]:
    return [body_json(harness.run(source)) for _ in range(RUNS)]


@pytest.mark.parametrize("source", [
    pytest.param("return 1", id="plain"),
    pytest.param("await null; return 1", id="after-an-await"),
])
def test_short_runs_answer_and_say_ready_in_one_message(seen: list[str], source: str) -> None:
    with workers(1) as harness:
        harness.run("return 0")  # the first run's module loads and heap reading
        harness.call(asyncio.wait_for(checked(harness), 10))  # its ready line, if any
        seen.clear()
        assert one_after_another(harness, source) == [1] * RUNS
        harness.call(asyncio.wait_for(checked(harness), 10))  # the last run's ready line
        done = [kind for kind in seen if kind.startswith("done")]
        assert len(done) == RUNS
        # Each run is followed by one word that the worker is ready: in its answer when
        # the isolate has marked the run as left behind by the time the answer goes (a
        # race with V8's thread, mostly won), else in a ready line after the check.
        assert done.count("done+ready") + seen.count("ready") == RUNS, seen
        assert done.count("done+ready") >= 1, seen
