"""Runs that wait hold no worker: one worker's warm isolate serves many runs at once,
interleaved at their awaits, and a run that breaks a limit fails alone.

Each engine here has ONE worker (``max_concurrent=1``, no spare), so every run shares
the same isolate. Runs wait on a ``db.exec`` call that the gate host answers only when
the test says so (or once enough calls are waiting): with a worker held per run, the
first test's runs could never all be waiting at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.engine import EngineConfig, RunRequest, RunResult, RunState
from shared.header import Limits
from tests.engine.conftest import EngineHarness, body_json, full_pool

WAIT = "const r = await db.exec('gate', []); return { n: params.n, got: r }"
# The isolate's heap limit is its runs' Memory together: small neighbours keep a heap
# blow-up's way to the limit short.
LIMITS = Limits(runtime_ms=20_000, memory_mb=16, cpu_ms=500)


class GateHost:
    """Answers ``db.exec('gate')`` once ``open`` is set, or once ``needed`` calls wait;
    ``db.exec('now')`` at once."""

    def __init__(self) -> None:
        self.waiting = 0
        self.needed: int | None = None
        self.open: asyncio.Event | None = None
        self.arrived: asyncio.Event | None = None

    def reset(self, needed: int | None) -> None:
        self.waiting, self.needed = 0, needed
        self.open, self.arrived = asyncio.Event(), asyncio.Event()

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        assert self.open is not None and self.arrived is not None
        if args.get("sql") == "now":
            return "now"
        if args.get("sql") == "big":  # a large answer: MB of text
            return "x" * (int(args["params"][0]) << 20)
        self.waiting += 1
        if self.needed is not None and self.waiting >= self.needed:
            self.arrived.set()
            self.open.set()
        await self.open.wait()
        return run.job_id


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[EngineHarness, GateHost]]:
    host = GateHost()
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=0, runs_per_worker=24,
                                         queue_timeout_ms=20_000), host)
    yield harness, host
    harness.call(asyncio.wait_for(full_pool(harness), 20))
    harness.close()


def run_all(harness: EngineHarness, requests: list[RunRequest]) -> list[RunResult]:
    async def go() -> list[RunResult]:
        return list(await asyncio.gather(*(harness.engine.run(r) for r in requests)))
    return harness.call(go())


def worker_pid(harness: EngineHarness) -> int:
    (pid,) = [w.pid for w in harness.engine.pool._all if w.alive]
    return pid


def test_sixteen_runs_wait_at_once_on_one_worker(shared: tuple[EngineHarness, GateHost]) -> None:
    harness, host = shared
    harness.call(_reset(host, needed=16))
    results = run_all(harness, [harness.request(WAIT, params={"n": i}, limits=LIMITS)
                                for i in range(16)])
    # Every run got its own answer, its own params: nothing crossed between them.
    assert [body_json(r) for r in results] == [{"n": i, "got": r.job_id}
                                               for i, r in enumerate(results)]
    assert harness.engine.metrics()["runsInFlight"] == 0


async def _reset(host: GateHost, needed: int | None) -> None:
    host.reset(needed)


NEIGHBOURS = 20
BREAKERS = [
    pytest.param("await null; for (;;) {}", "cpu", id="spins-after-await"),
    pytest.param("for (;;) {}", "cpu", id="spins-in-its-first-turn"),
    pytest.param("await new Promise((r) => setTimeout(r, 5)); for (;;) {}", "cpu",
                 id="spins-in-a-timer"),
    pytest.param("await db.exec('now', []); for (;;) {}", "cpu",
                 id="spins-after-a-bridge-reply"),
    pytest.param("await null; return /^(a+)+$/.test('a'.repeat(40) + 'b')", "cpu",
                 id="catastrophic-regexp"),
    # the worker ends and the job is quarantined: both logged as warnings
    pytest.param("await null; const a = []; for (;;) a.push(new Array(1e5).fill(1.5))",
                 "memory", id="heap-blow-up", marks=pytest.mark.expected_warning),
    pytest.param("await null; const a = []; for (;;) a.push(new Uint8Array(32 << 20).fill(1))",
                 "memory", id="buffers-outside-the-heap", marks=pytest.mark.expected_warning),
]


@pytest.mark.parametrize(("breaker", "limit"), BREAKERS)
def test_a_neighbour_that_breaks_a_limit_fails_alone(
        shared: tuple[EngineHarness, GateHost], breaker: str, limit: str) -> None:
    """20 runs wait on one worker while a neighbour breaks its limit; then the same
    neighbour again. CPU: stopped inside the worker (V8's TerminateExecution), the worker
    process stays, and only the breaker fails. Memory: not surgical (what the run
    allocated stays, and V8 would stop a neighbour's code next): the worker ends, the
    neighbours fail with JOB-005, and the breaker's job runs alone for a while."""
    harness, host = shared
    if limit == "memory":
        _memory_breach_ends_the_worker(harness, host, breaker)
        return
    pid = worker_pid(harness)
    for _ in range(2):
        harness.call(_reset(host, needed=None))
        waiting = [harness.request(WAIT, params={"n": i}, limits=LIMITS) for i in range(NEIGHBOURS)]
        cpu_ms = 300 if limit == "cpu" else 10_000  # memory: let the heap fill up first
        bad = harness.request(breaker,
                              limits=Limits(runtime_ms=20_000, memory_mb=64, cpu_ms=cpu_ms))
        results = harness.call(_neighbours_and_breaker(harness, host, waiting, bad))
        *answers, broken = results
        assert [body_json(r)["n"] for r in answers] == list(range(NEIGHBOURS))
        assert broken.error is not None and broken.error.code == "JOB-003", broken.error
        assert broken.error.extra.get("limit") == limit
    assert worker_pid(harness) == pid


def _memory_breach_ends_the_worker(harness: EngineHarness, host: GateHost, breaker: str) -> None:
    name = f"breaker-{abs(hash(breaker))}"
    pid = worker_pid(harness)
    harness.call(_reset(host, needed=None))
    waiting = [harness.request(WAIT, params={"n": i}, limits=LIMITS, name="good")
               for i in range(NEIGHBOURS)]
    bad = harness.request(breaker, name=name,
                          limits=Limits(runtime_ms=20_000, memory_mb=64, cpu_ms=10_000))
    *answers, broken = harness.call(_neighbours_and_breaker(harness, host, waiting, bad))
    assert broken.error is not None and broken.error.extra.get("limit") == "memory", broken.error
    assert [r.error.code if r.error else None for r in answers] == ["JOB-005"] * NEIGHBOURS
    assert harness.engine.must_be_alone(harness.request("return 1", name=name))
    harness.call(asyncio.wait_for(full_pool(harness), 20))
    assert worker_pid(harness) != pid
    harness.call(_reset(host, needed=1))
    assert body_json(harness.run(WAIT, params={"n": 0}, limits=LIMITS, name="good"))["n"] == 0


async def _neighbours_and_breaker(harness: EngineHarness, host: GateHost,
                                  waiting: list[RunRequest], bad: RunRequest) -> list[RunResult]:
    assert host.open is not None
    runs = [asyncio.ensure_future(harness.engine.run(r)) for r in waiting]
    while host.waiting < len(waiting):  # every neighbour waits on its call
        await asyncio.sleep(0.01)
    broken = await harness.engine.run(bad)
    host.open.set()  # the neighbours' calls are answered only after the breach
    return [*await asyncio.gather(*runs), broken]


def test_a_waiting_run_past_its_runtime_ends_alone(shared: tuple[EngineHarness, GateHost]) -> None:
    harness, host = shared
    pid = worker_pid(harness)
    harness.call(_reset(host, needed=None))

    async def go() -> list[RunResult]:
        assert host.open is not None
        neighbour = asyncio.ensure_future(harness.engine.run(
            harness.request(WAIT, params={"n": 1}, limits=LIMITS)))
        late = await harness.engine.run(harness.request(
            WAIT, params={"n": 2}, limits=Limits(runtime_ms=300, memory_mb=64, cpu_ms=500)))
        host.open.set()
        return [await neighbour, late]

    neighbour, late = harness.call(go())
    assert late.error is not None and late.error.extra.get("limit") == "runtime"
    assert body_json(neighbour)["n"] == 1
    assert worker_pid(harness) == pid  # ended in the isolate, the worker untouched


@pytest.mark.expected_warning  # the worker ended, the job quarantined: both logged
def test_a_run_its_worker_cannot_end_fails_its_neighbours_with_job_005() -> None:
    """The worker is frozen (SIGSTOP) while a run's runtime runs out: the hub cannot
    have it ended, so after the grace it ends the worker. The neighbours fail with
    JOB-005, never JOB-003; the job whose run it was runs alone for a while."""
    host = GateHost()
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=0, runs_per_worker=8,
                                         queue_timeout_ms=20_000), host)
    try:
        harness.call(_reset(host, needed=None))
        neighbours = [harness.request(WAIT, params={"n": i}, limits=LIMITS, name="good")
                      for i in range(3)]
        bad = harness.request(WAIT, name="faulty",
                              limits=Limits(runtime_ms=500, memory_mb=64, cpu_ms=500))
        results = harness.call(_frozen_worker(harness, host, [*neighbours, bad]))
        *others, broken = results
        assert broken.error is not None and broken.error.extra.get("limit") == "runtime"
        assert [r.error.code if r.error else None for r in others] == ["JOB-005"] * 3
        assert harness.engine.must_be_alone(harness.request("return 1", name="faulty"))
        assert not harness.engine.must_be_alone(harness.request("return 1", name="good"))
    finally:
        harness.call(asyncio.wait_for(full_pool(harness), 20))
        harness.close()


async def _frozen_worker(harness: EngineHarness, host: GateHost,
                         requests: list[RunRequest]) -> list[RunResult]:
    runs = [asyncio.ensure_future(harness.engine.run(r)) for r in requests]
    while host.waiting < len(requests):
        await asyncio.sleep(0.01)
    (worker,) = [w for w in harness.engine.pool._all if w.alive]
    os.kill(worker.pid, signal.SIGSTOP)
    return list(await asyncio.gather(*runs))


INTERLEAVED = """
const me = params.me;
const seen = [];
const tick = (ms) => new Promise((r) => setTimeout(r, ms));
// shared code (AbortSignal.timeout, EventTarget) calls this run's setTimeout and
// reportError/console through the isolate's forwarders: they must reach this run
const signal = AbortSignal.timeout(3);
signal.addEventListener('abort', () => {
  console.log('abort ' + me); throw new Error('thrown ' + me);
});
for (let i = 0; i < 6; i++) {
  await tick(1 + (i % 3));
  console.log(me + ' ' + i);
  seen.push(params.me, secrets.get('TOKEN'), request.query.me, crypto.randomUUID().length);
  await db.exec('now', []);
}
await tick(5);
return { me, seen: [...new Set(seen)] };
"""


def test_interleaved_runs_keep_their_own_console_params_secrets_and_request(
        shared: tuple[EngineHarness, GateHost]) -> None:
    harness, host = shared
    harness.call(_reset(host, needed=None))
    names = [f"run{i}" for i in range(8)]
    results = run_all(harness, [harness.request(
        INTERLEAVED, params={"me": me}, secret_names=("TOKEN",), secrets={"TOKEN": f"tok-{me}"},
        request={"method": "GET", "query": {"me": f"q-{me}"}, "caller": {"kind": "anonymous"}},
        limits=LIMITS) for me in names])
    for me, result in zip(names, results, strict=True):
        assert body_json(result) == {"me": me, "seen": [me, f"tok-{me}", f"q-{me}", 36]}
        lines = [line.message for line in result.logs]
        assert sorted(m.split("\n")[0] for m in lines) == sorted(
            [f"abort {me}", f"Error: thrown {me}", *(f"{me} {i}" for i in range(6))]), lines


SPINNER = "console.log('spinning'); await null; for (;;) {}"


@pytest.mark.parametrize("newcomer", [
    pytest.param("return 'B'", id="plain"),
    pytest.param("const m = require('date-fns'); return typeof m.format", id="loads-a-module"),
])
def test_a_run_that_arrives_while_a_neighbour_spins_is_not_charged_for_it(newcomer: str) -> None:
    """Found by a red-team pass: the newcomer's eval waits behind the spinning turn, and
    was charged for it (or, loading a module, switched the spinner's charge off)."""
    from tests.engine.isolation import module_kw

    host = GateHost()
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=0, runs_per_worker=8,
                                         queue_timeout_ms=20_000), host)
    try:
        harness.call(_reset(host, needed=None))
        results = harness.call(_spinner_then(harness, newcomer, module_kw(newcomer)))
        spinner, newcomer_result = results
        assert spinner.error is not None and spinner.error.extra.get("limit") == "cpu"
        assert newcomer_result.ok, newcomer_result.error
    finally:
        harness.call(asyncio.wait_for(full_pool(harness), 20))
        harness.close()


async def _spinner_then(harness: EngineHarness, newcomer: str,
                        kw: dict[str, Any]) -> list[RunResult]:
    spinning = asyncio.Event()
    spinner = asyncio.ensure_future(harness.engine.run(harness.request(
        SPINNER, on_log=lambda _line: spinning.set(),
        limits=Limits(runtime_ms=8_000, memory_mb=64, cpu_ms=400))))
    await spinning.wait()  # its first turn has run: the loop after the await comes next
    kw["limits"] = Limits(runtime_ms=8_000, memory_mb=64, cpu_ms=300)
    late = await harness.engine.run(harness.request(newcomer, **kw))
    return [await spinner, late]


TICKER = """
const end = Date.now() + Number(params.ms);
let turns = 0;
while (Date.now() < end) { await new Promise((r) => setTimeout(r, 1)); turns++; }
return turns;
"""
BIG_ANSWERS = """
let size = 0;
for (let i = 0; i < 4; i++) size += (await db.exec('big', [Number(params.mb)])).length;
return size;
"""


def test_a_large_bridge_answer_is_charged_to_the_run_it_answers(
        shared: tuple[EngineHarness, GateHost]) -> None:
    """A ticking neighbour enters the isolate every millisecond, so it was most often
    the run entered last when a large answer arrived for another. The answer, a literal
    in its eval, was scanned before the eval could name its run: that CPU was charged
    to the ticker, which was stopped at its limit, and the stop landed on the answer's
    eval, so the answered run never heard its answer and ran out of time."""
    harness, host = shared
    harness.call(_reset(host, needed=None))
    ticker = harness.request(TICKER, params={"ms": 2500},
                             limits=Limits(runtime_ms=20_000, memory_mb=16, cpu_ms=600))
    big = harness.request(BIG_ANSWERS, params={"mb": 16},
                          limits=Limits(runtime_ms=20_000, memory_mb=256, cpu_ms=10_000))
    ticking, answered = run_all(harness, [ticker, big])
    assert answered.ok, answered.error
    assert body_json(answered) == 4 * (16 << 20)
    assert ticking.ok, ticking.error
    assert answered.cpu_ms > ticking.cpu_ms  # the crossing is the answered run's own


def test_a_large_start_is_charged_to_the_run_it_starts(
        shared: tuple[EngineHarness, GateHost]) -> None:
    """The same for a run's start: its spec (a large request body, large params) was a
    literal in the start's eval, scanned before the run was named."""
    harness, host = shared
    harness.call(_reset(host, needed=None))
    ticker = harness.request(TICKER, params={"ms": 2500},
                             limits=Limits(runtime_ms=20_000, memory_mb=16, cpu_ms=400))
    large = [harness.request("return params.blob.length", params={"blob": "x" * (12 << 20)},
                             limits=Limits(runtime_ms=20_000, memory_mb=128, cpu_ms=10_000))
             for _ in range(6)]
    ticking, *started = run_all(harness, [ticker, *large])
    assert [body_json(r) for r in started] == [12 << 20] * 6
    assert ticking.ok, ticking.error
