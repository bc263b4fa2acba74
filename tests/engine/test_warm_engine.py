"""The warm isolate's own life: what a run leaves behind never holds up the next run,
each run's memory limit is its own, and an isolate that is spinning, too full or old is
replaced (hub/engine/warm.py). Engine tests run real worker processes; the isolate-level
ones drive ``warm`` in this process, as a worker does."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine import warm
from hub.engine.pool import read_cpu_ms
from shared.header import Limits
from tests.engine.conftest import EngineHarness, body_json, workers

SHORT = Limits(runtime_ms=2_000, memory_mb=64, cpu_ms=1_000)
SPEC: dict[str, Any] = {"params": {}, "request": {"method": "GET", "caller": {"kind": "anonymous"}},
                        "limits": {}, "approved": [], "named": []}


@pytest.fixture(scope="module")
def solo() -> Iterator[EngineHarness]:
    with workers(1, queue_timeout_ms=20_000) as harness:
        yield harness


def worker_pids(harness: EngineHarness) -> set[int]:
    return {w.pid for w in harness.engine.pool._all if w.alive}


LEFT_SPINNING = [
    pytest.param("(async () => { for (;;) await null })(); return params.n", id="await-loop"),
    pytest.param("Promise.resolve().then(function loop() { return Promise.resolve().then(loop) });"
                 " return params.n", id="then-recursion"),
    pytest.param("queueMicrotask(function again() { queueMicrotask(again) }); return params.n",
                 id="microtask-recursion"),
]


@pytest.mark.parametrize("source", LEFT_SPINNING)
def test_work_left_spinning_after_the_answer_does_not_hold_up_the_next_run(
        solo: EngineHarness, source: str) -> None:
    before = worker_pids(solo)
    assert body_json(solo.run(source, params={"n": 7}, limits=SHORT)) == 7
    # The answer went out; the worker found its isolate busy, stopped what spins in it
    # and replaced the isolate: the same process serves the next run, at once.
    after = solo.run("return 'next'", limits=SHORT)
    assert body_json(after) == "next"
    assert after.runtime_ms < 1_000
    assert worker_pids(solo) == before
    [pid] = before
    assert not spinning(pid), "what the first run left still spins in the worker"


def spinning(pid: int) -> bool:
    """Whether the process burns CPU: more than half of a quarter of a second (nothing
    announces that work stopped; an idle worker uses next to none)."""
    first = read_cpu_ms(pid)
    time.sleep(0.25)
    last = read_cpu_ms(pid)
    assert first is not None and last is not None, "the worker is gone"
    return last - first > 125


def test_a_thenable_that_spins_fails_its_own_run_only(solo: EngineHarness) -> None:
    result = solo.run("return { then() { for (;;) {} } }", limits=SHORT)
    assert not result.ok and result.error is not None and result.error.code == "JOB-003"
    assert body_json(solo.run("return 'next'", limits=SHORT)) == "next"


def test_timers_left_behind_are_cancelled_and_the_worker_is_kept(solo: EngineHarness) -> None:
    first = solo.run("setInterval(() => console.log('tick'), 1);"
                     " setTimeout(() => { for (;;) {} }, 5); return 'A'", limits=SHORT)
    assert body_json(first) == "A"
    pids = worker_pids(solo)
    second = solo.run("await new Promise((r) => setTimeout(r, 30)); return 'B'", limits=SHORT)
    assert body_json(second) == "B" and second.logs == []
    assert worker_pids(solo) == pids


def test_garbage_of_earlier_runs_never_counts_against_a_run(solo: EngineHarness) -> None:
    """mini-racer's hard limit counts everything on the heap: a 16 MB job that leaves
    ~1.5 MB of garbage each time tripped a fixed isolate limit at run 327 in the probe."""
    tight = Limits(runtime_ms=5_000, memory_mb=16, cpu_ms=2_000)
    source = ("const junk = []; for (let i = 0; i < 15000; i++) junk.push({ i, s: 'x' + i });"
              " return junk.length")
    results = [solo.run(source, limits=tight) for _ in range(400)]
    failures = [r.error.message for r in results if r.error is not None]
    assert failures == []


def test_a_run_over_its_memory_fails_alone(solo: EngineHarness) -> None:
    tight = Limits(runtime_ms=10_000, memory_mb=32, cpu_ms=8_000)
    result = solo.run("const a = []; for (;;) a.push(new Array(1e5).fill(1.5))", limits=tight)
    assert not result.ok and result.error is not None
    assert (result.error.code, result.meta.get("limit")) == ("JOB-003", "memory")
    assert body_json(solo.run("return [typeof a, 1 + 1]", limits=tight)) == ["undefined", 2]


# ---- the isolate itself, driven in this process --------------------------------------
def run_here(isolate: warm.WarmIsolate, source: str) -> tuple[dict[str, Any], bool]:
    async def go() -> tuple[dict[str, Any], bool]:
        outcome = await warm.run(isolate, source, json.loads(json.dumps(SPEC)), 256)
        return outcome.meta, await warm.settle(isolate) is warm.Fitness.KEEP
    return asyncio.run(go())


@pytest.fixture()
def isolate() -> Iterator[warm.WarmIsolate]:
    made = warm.build()
    yield made
    made.close()


def test_an_isolate_that_keeps_what_runs_leave_is_replaced(isolate: warm.WarmIsolate) -> None:
    """Symbol.for keys stay on the heap for good: once what stays after a collection
    has grown by GROWTH_LIMIT, the isolate is not used again."""
    meta, fit = run_here(isolate, "return 1")
    assert meta["ok"] and fit
    isolate.heap_cpu_ns = -warm.HEAP_AFTER_CPU_NS  # the next settle measures the heap
    meta, fit = run_here(isolate, "for (let i = 0; i < 1.6e6; i++) Symbol.for('k' + i); return 1")
    assert meta["ok"] and not fit


def test_an_isolate_is_replaced_after_max_runs(isolate: warm.WarmIsolate) -> None:
    isolate.runs = warm.MAX_RUNS - 2
    assert run_here(isolate, "return 1") == (run_here(isolate, "return 1")[0], True)
    assert run_here(isolate, "return 1")[1] is False


def test_each_run_compiles_its_own_text(isolate: warm.WarmIsolate) -> None:
    """The same job text twice is two different scripts (V8 would otherwise reuse
    the code and type feedback of the first: the JIT cliff)."""
    first = warm.job_script(isolate, "return 1", dict(SPEC)).text
    second = warm.job_script(isolate, "return 1", dict(SPEC)).text
    # the job's own text is the same; the run's number (first and last lines) is not
    assert first != second and first.split("\n")[-2] != second.split("\n")[-2]
    assert first.split("\n")[0].endswith("return 1")
    assert second.split("\n")[0].endswith("return 1")


def test_a_job_without_await_is_settled_within_its_eval(isolate: warm.WarmIsolate) -> None:
    plain = warm.job_script(isolate, "return 'a wait'", dict(SPEC)).text
    awaiting = warm.job_script(isolate, "return await 1", dict(SPEC)).text
    assert "return function ()" in plain and "return async function ()" in awaiting
    slot = isolate.slots[0]  # the slot job_script names (its default)
    slot.take(None, None)  # an empty channel: no outcome yet
    assert slot.channel.outcome() is None
    isolate.racer.eval(plain)
    assert slot.channel.outcome() is not None
    slot.free()


ESCAPES = [
    "} }); __webjob_host.idle(); (function () { {",
    "return 1 } }); globalThis.leak = 1; (function () { return function () {",
    "}\n})\n//",
]


@pytest.mark.parametrize("source", ESCAPES)
def test_a_text_that_closes_its_wrapper_early_never_runs(solo: EngineHarness, source: str) -> None:
    """The warm script pastes the job's text into its wrapper: a text that is not one
    whole function body is refused before it is compiled, whatever its way in."""
    result = solo.run(source, isolation="warm", limits=SHORT)
    assert not result.ok and result.error is not None and result.error.code == "JOB-001"
    assert body_json(solo.run("return typeof leak", limits=SHORT)) == "undefined"
