"""After a short run the worker does not ask the isolate anything: whether the run left
work running is read from the channel memory (the isolate marks, in a task of its own,
that it got past the run's settling), and the heap is measured by CPU spent, not after
every few runs. Counted, not timed: each question is a round trip into V8 (the idle
probe ~0.15 ms, mini-racer's heap_stats ~0.5 ms, as it builds a whole context)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine import warm
from tests.engine.test_warm_engine import SPEC

RUNS = 40


class Counted:
    """Counts the isolate's idle probes and heap readings."""

    def __init__(self, isolate: warm.WarmIsolate) -> None:
        self.probes = self.heap_readings = 0
        racer = isolate.racer
        eval_async, heap_stats = racer.eval_async, racer.heap_stats

        async def counting_eval(code: str) -> Any:
            self.probes += "idle()" in code
            return await eval_async(code)

        def counting_heap() -> dict[str, Any]:
            self.heap_readings += 1
            return heap_stats()

        racer.eval_async = counting_eval  # type: ignore[method-assign]
        racer.heap_stats = counting_heap  # type: ignore[method-assign]


@pytest.fixture()
def isolate() -> Iterator[warm.WarmIsolate]:
    made = warm.build(slots=4)
    yield made
    made.close()


def runs(isolate: warm.WarmIsolate, source: str, count: int) -> list[Any]:
    async def go() -> list[Any]:
        answers = []
        for _ in range(count):
            outcome = await warm.run(isolate, source, json.loads(json.dumps(SPEC)), 64)
            assert await warm.settle(isolate) is warm.Fitness.KEEP
            answers.append(outcome.body)
        return answers
    return asyncio.run(go())


@pytest.mark.parametrize("source", [
    pytest.param("return 1", id="plain"),
    pytest.param("await null; return 1", id="after-an-await"),
    pytest.param("await new Promise((r) => setTimeout(r, 1)); return 1", id="after-a-timer"),
])
def test_short_runs_are_not_followed_by_round_trips(isolate: warm.WarmIsolate,
                                                    source: str) -> None:
    counted = Counted(isolate)
    assert runs(isolate, source, RUNS) == ["1"] * RUNS
    # the mark is nearly always there before the worker looks: a probe now and then
    # (work left running is still asked about: test_warm_engine's work-left-spinning)
    assert counted.probes <= RUNS // 4
    # about one reading per 20 ms of the isolate's CPU; it used to be every 8th run
    assert counted.heap_readings < RUNS // 8

