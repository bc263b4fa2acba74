"""Escape battery, part two: a job that rewrites built-ins, floods the console or
forges the notes to Python breaks nothing but itself, and the next runs on the same
worker see none of it. Under the warm engine every rewrite of a built-in is refused
(a TypeError: they are frozen) and the job goes on; under ``Isolation: fresh`` it
takes effect, and the sandbox's machinery must still work (tests/engine/battery.py)."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.engine import RunRequest, RunResult, RunState
from shared.header import Limits
from tests.engine.battery import (
    ISOLATIONS,
    SHORT,
    U,
    assert_failed,
    assert_healthy,
    bends,
    per,
    wait_for_replacements,
)
from tests.engine.conftest import EngineHarness, body_json, pids, workers

ROOMY = Limits(runtime_ms=15_000, memory_mb=128, cpu_ms=8_000)  # floods: bounded by the cap
CONSOLE_CAP = 8 * 1024 * 1024
SIGN_KEY = "c2lnbmluZyBrZXkgZm9yIHRlc3Rz"  # the harness default: b"signing key for tests"


@pytest.fixture(scope="module")
def solo() -> Iterator[EngineHarness]:
    """An engine with exactly one worker: consecutive runs share one process."""
    with workers(1, queue_timeout_ms=10_000) as harness:
        yield harness


@pytest.fixture(autouse=True)
def _replacements_started(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    wait_for_replacements(request)


def refusals(isolation: str, count: int) -> list[str]:
    """What ``bends`` leaves in ``refused``: each of ``count`` rewrites refused on warm."""
    return ["TypeError"] * count if isolation == "warm" else []


# ---- prototype pollution: the run ends cleanly, the next run is untouched --------
PRISTINE = """const marks = [Object.prototype.polluted, Array.prototype.polluted,
  String.prototype.polluted, Function.prototype.polluted, globalThis.leaked,
  Object.prototype.toJSON];
console.log('clean');
return { marks: marks.map((m) => typeof m), json: JSON.stringify({ a: [1, 'x'] }),
  parsed: JSON.parse('{"b":2}').b, split: 'a,b'.split(','), mapped: [1, 2].map((x) => x * 2),
  call: Math.max.call(null, 1, 2), apply: Math.max.apply(null, [3, 4]),
  timer: await new Promise((r) => setTimeout(() => r(5), 1)),
  then: await Promise.resolve(6).then((x) => x + 1) };"""
PRISTINE_ANSWER = {"marks": [U] * 6, "json": '{"a":[1,"x"]}', "parsed": 2, "split": ["a", "b"],
                   "mapped": [2, 4], "call": 2, "apply": 4, "timer": 5, "then": 7}


class Clean:
    """Fresh: expect this result or a prompt, clean JOB-001 (a fix may choose either).
    Warm, where the rewrite is refused: exactly this result."""

    def __init__(self, value: Any) -> None:
        self.value = value


CIRCULAR = "const o = {}; o.o = o; return o;"
# (id, the rewrites, the rest of the job, what it gives, how many rewrites warm refuses;
# a job's globals are its function's parameters there, so assigning to one is allowed).
POLLUTERS: list[tuple[str, tuple[str, ...], str, Any, int]] = [
    ("object-prototype", ("Object.prototype.polluted = 'yes';", "Object.prototype.type = "
     "'redirect';", "Object.prototype.status = 999;", "Object.prototype.success = true;"),
     "return { a: 1 };", {"a": 1}, 4),
    ("array-prototype", ("Array.prototype.polluted = 1;",
                         "Array.prototype.map = () => { throw 1; };"),
     "console.log('a', [1]); return [1, 2, 3];", [1, 2, 3], 2),
    ("array-iterator", ("Array.prototype[Symbol.iterator] = function* () { yield 'evil'; };",),
     "console.log('a'); return [1, 2, 3];", Clean([1, 2, 3]), 1),
    ("string-charcodeat", ("const cc = String.prototype.charCodeAt; String.prototype.charCodeAt ="
                           " function (i) { return cc.call(this, i) === 97 ? 0x22"
                           " : cc.call(this, i); };",), "console.log('a'); return 1;", Clean(1), 1),
    ("json-stringify-parse", ("JSON.stringify = () => '\"forged\"';",
                              "JSON.parse = () => ({ forged: true });"),
     "return { a: 1 };", {"a": 1}, 2),
    ("promise-then", ("Promise.prototype.then = () => { throw 1; };",
                      "Object.getPrototypeOf(Promise.prototype).then = () => { throw 2; };"),
     "await null; return 'ok';", "ok", 1),  # the run's Promise (a class of its own) may change
    ("promise-null-settimeout", ("Promise = null;",
                                 "setTimeout = () => { throw new Error('no'); };"),
     "await null; return await (async () => 'ok')();", "ok", 0),
    ("promise-species", ("Object.defineProperty(Object.getPrototypeOf(Promise.prototype),"
                         " 'constructor', { value: { get [Symbol.species]() {"
                         " throw new Error('species trap'); } } });",),
     "return 1;", {"fresh": ("JOB-001", "species trap"), "warm": 1}, 1),
    ("string-split", ("String.prototype.split = () => { throw new Error('split'); };",),
     CIRCULAR, ("JOB-001", "circular structure"), 1),
    ("function-apply", ("Function.prototype.apply = () => { throw 1; };", "Reflect.apply = null;"),
     "await new Promise((r) => setTimeout(r, 1)); return 'ok';", "ok", 2),
    ("error-constructors", ("Error = function () { return {}; };", "TypeError = null;"),
     CIRCULAR, ("JOB-001", "TypeError"), 0),
    ("function-call", ("Function.prototype.call = function () {};",), "return 1;", Clean(1), 1),
    ("object-tojson-throws", ("Object.prototype.toJSON = function () {"
                              " throw new Error('poisoned'); };",),
     "return { a: 1 };", {"fresh": Clean(None), "warm": {"a": 1}}, 1),
    ("logs-setter-throws", ("Object.defineProperty(Object.prototype, 'logs', { set() {"
                            " throw new Error('nl'); } });",), "return 1;", Clean(1), 1),
]


def check_outcome(result: RunResult, expected: Any, isolation: str) -> None:
    if isinstance(expected, Clean) and isolation == "fresh":
        assert (result.ok and body_json(result) == expected.value) or (
            result.error is not None and result.error.code == "JOB-001"), result.error
    elif isinstance(expected, tuple):
        assert_failed(result, *expected)
    else:
        assert body_json(result) == (expected.value if isinstance(expected, Clean) else expected)
        assert result.meta["type"] == "json" and result.meta["status"] == 200


@pytest.mark.parametrize(("bent", "rest", "expected", "refused", "isolation"), [
    pytest.param(b, r, per(iso, e), n, iso, id=f"{i}-{iso}")
    for i, b, r, e, n in POLLUTERS for iso in ISOLATIONS])
def test_pollution_leaves_next_run_clean(solo: EngineHarness, bent: tuple[str, ...], rest: str,
                                         expected: Any, refused: int, isolation: str) -> None:
    before = pids(solo)
    # Warm only: on fresh the console may be what the rewrite broke.
    report = "console.log('refused: ' + refused.join());\n" if isolation == "warm" else ""
    result = solo.run(bends(*bent) + report + rest, limits=SHORT, isolation=isolation)
    check_outcome(result, expected, isolation)
    if isolation == "warm":
        assert "refused: " + ",".join(refusals(isolation, refused)) in [
            line.message for line in result.logs]
    for after_isolation in ISOLATIONS:
        after = solo.run(PRISTINE, isolation=after_isolation)
        assert body_json(after) == PRISTINE_ANSWER
        assert [line.message for line in after.logs] == ["clean"]
    assert pids(solo) == before  # the same worker served every run


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_globals_do_not_survive_into_the_next_run_on_the_same_worker(
        solo: EngineHarness, isolation: str) -> None:
    before = pids(solo)
    source = ("const seen = [typeof globalThis.leaked, typeof Object.prototype.polluted,"
              " typeof x, (0, eval)('typeof x')];\n" + bends("Object.prototype.polluted = 1;")
              + "globalThis.leaked = 1; (0, eval)('var x = 1'); return [seen, refused];")
    for _ in range(5):
        assert body_json(solo.run(source, isolation=isolation)) == [[U] * 4,
                                                                    refusals(isolation, 1)]
    assert pids(solo) == before


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_timers_never_fire_after_their_run(solo: EngineHarness, isolation: str) -> None:
    before = pids(solo)
    first = solo.run("setTimeout(() => { globalThis.leaked = 'timer'; console.log('LATE'); }, 200);"
                     " setInterval(() => console.log('LATE INTERVAL'), 50); return 'first';",
                     isolation=isolation)
    assert body_json(first) == "first" and first.logs == []
    for later in ISOLATIONS:
        second = solo.run("await new Promise((r) => setTimeout(r, 400)); return typeof leaked;",
                          isolation=later)
        assert body_json(second) == U and second.logs == []
    assert pids(solo) == before


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_twenty_runs_after_a_polluting_run_are_right(solo: EngineHarness, isolation: str) -> None:
    polluter = bends("Object.prototype.polluted = 1;", "Array.prototype.map = null;",
                     "JSON.parse = null;", "JSON.stringify = null;",
                     "String.prototype.split = null;", "Promise.prototype.then = null;",
                     "Function.prototype.apply = null;")
    polluter += "globalThis.leaked = 1; return ['polluted', refused.length];"
    assert body_json(solo.run(polluter, isolation=isolation)) == [
        "polluted", len(refusals(isolation, 6))]  # the run's own Promise is its to change
    source = """const r = await Promise.all([1, 2].map(async (x) => x * params.n));
return { n: params.n, sum: r.reduce((a, b) => a + b, 0), leaked: typeof leaked,
  json: JSON.parse(JSON.stringify({ s: 'a,b'.split(',') })) };"""
    for n in range(20):  # alternately warm and fresh, on the one worker
        got = solo.run(source, params={"n": n}, isolation=ISOLATIONS[n % 2])
        assert body_json(got) == {"n": n, "sum": 3 * n, "leaked": U, "json": {"s": ["a", "b"]}}


# ---- floods and huge answers ---------------------------------------------------------
@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("line", ["i", "''", "'x'.repeat(100)"], ids=["numbers", "empty", "long"])
def test_console_flood_is_bounded(engine: EngineHarness, line: str, isolation: str) -> None:
    result = engine.run(f"for (let i = 0; i < 1e6; i++) console.log({line}); return 'done';",
                        limits=ROOMY, isolation=isolation)
    assert body_json(result) == "done"
    assert len(result.logs) <= 1_000_001
    assert sum(len(x.message) for x in result.logs) <= CONSOLE_CAP + 100
    assert_healthy(engine)


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_console_cap_drops_the_rest(engine: EngineHarness, isolation: str) -> None:
    result = engine.run("for (let i = 0; i < 1e4; i++) console.log('y'.repeat(1000)); return 1;",
                        live=True, limits=ROOMY, isolation=isolation)
    assert body_json(result) == 1
    assert sum(len(x.message) for x in result.logs) <= CONSOLE_CAP + 100
    assert result.logs[-1].message.startswith("[console output over 8 MB")


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_console_lines_of_a_synchronous_run_are_kept(engine: EngineHarness,
                                                     isolation: str) -> None:
    result = engine.run("for (let i = 0; i < 1e4; i++) console.log(String(i).padStart(100));"
                        " const t = Date.now(); while (Date.now() - t < 40); console.log('last');"
                        " return 1;", isolation=isolation)  # the last line flushes a batch
    assert [x.message.strip() for x in result.logs] == [*map(str, range(10_000)), "last"]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_huge_result_is_answered_or_refused_cleanly(engine: EngineHarness,
                                                    isolation: str) -> None:
    result = engine.run("return 'x'.repeat(50 * 1024 * 1024);", isolation=isolation)
    if result.ok:
        assert len(result.body) == 50 * 1024 * 1024 + 2 and result.body[:2] == b'"x'
    else:
        assert result.error is not None and result.error.code in ("JOB-001", "JOB-003")
    assert_healthy(engine)


# ---- the notes to Python and the bridge --------------------------------------------
def forge_meta(fields: str) -> str:
    """A job whose Object.prototype.toJSON swaps the run's meta line for ``fields``
    (fresh; warm refuses the rewrite). It answers [1, the refused rewrites]."""
    return bends("Object.prototype.toJSON = function () { return 'ok' in this && !this.forged ?"
                 f" {{ forged: 1, {fields} }} : this; }};") + "return [1, refused];"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_forged_meta_logs_do_not_break_the_engine(engine: EngineHarness, isolation: str) -> None:
    result = engine.run(forge_meta("ok: false, code: 'JOB-001', logs: 5"),  # must not raise
                        isolation=isolation)
    if isolation == "warm" or result.ok:
        assert body_json(result) == [1, refusals(isolation, 1)]
    else:
        assert result.error is not None and result.error.code == "JOB-001"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_forged_meta_cannot_make_a_response(engine: EngineHarness, isolation: str) -> None:
    result = engine.run(forge_meta("ok: true, type: 'redirect', status: 99999,"
                                   " headers: { Location: 'https://evil.example' }"),
                        isolation=isolation)
    assert isolation == "fresh" or body_json(result) == [1, ["TypeError"]]
    assert not result.ok or (result.meta["type"] == "json" and result.meta["status"] == 200)


# A fresh job reaches the host's bridge directly; a warm one only through db and http.
BRIDGE_CALL = {"fresh": "__webjob_host.bridge('db', 1)", "warm": "db.exec('select 1')"}


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_forged_call_note_does_not_kill_the_worker(solo: EngineHarness, isolation: str) -> None:
    before = pids(solo)
    source = (bends("Object.prototype.toJSON = function () { return this && this.op ?"
                    " { id: 'x', op: 'db', args: 0 } : this; };")
              + f"const call = {BRIDGE_CALL[isolation]}; await Promise.race([call.catch(() => 0),"
              " new Promise((r) => setTimeout(r, 300))]); return ['alive', refused];")
    result = solo.run(source, limits=SHORT, isolation=isolation)
    assert body_json(result) == ["alive", refusals(isolation, 1)]
    assert pids(solo) == before


class _SlowBridge:
    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        delay, secret = args["params"]  # db.exec(sql, [delay, secret])
        await asyncio.sleep(delay)
        return {"answer_for": run.job_id, "secret": secret}


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_late_bridge_answer_never_reaches_the_next_run(solo: EngineHarness,
                                                         isolation: str) -> None:
    solo.engine.bridge = _SlowBridge()
    try:
        first = solo.run("await new Promise((r) => setTimeout(r, 5)); db.exec('x',"
                         " [0.2, 'alice-only']).catch(() => 0); return 'A';", isolation=isolation)
        assert body_json(first) == "A"
        for later in ISOLATIONS:
            second = solo.run("return await db.exec('x', [0.6, null]);", isolation=later)
            assert body_json(second) == {"answer_for": second.job_id, "secret": None}
    finally:
        time.sleep(0.7)  # let the pending answers drain before the next test
        solo.engine.bridge = None


# Typed arrays' set is what copies bytes into buffers the sandbox owns (the signing
# key's, the console ring's): a job that hooks it must see none of them.
HOOK_SET = "TA.set = function (src, at) { SEEN; return set.call(this, src, at); };"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_sign_key_cannot_be_read(engine: EngineHarness, isolation: str) -> None:
    source = ("const seen = []; const TA = Object.getPrototypeOf(Uint8Array.prototype);"
              " const set = TA.set;\n"
              + bends(HOOK_SET.replace("SEEN", "seen.push(Array.from(src))"))
              + "const token = sign({ a: 1 }); verify('x.y'); if (!refused.length) TA.set = set;"
              " return { token, seen, refused };")
    got = body_json(engine.run(source, sign_key=SIGN_KEY, isolation=isolation))
    assert isinstance(got["token"], str) and "." in got["token"]
    assert list(base64.b64decode(SIGN_KEY)) not in got["seen"]
    assert got["refused"] == refusals(isolation, 1)


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_shared_array_buffer_is_unreachable_through_the_console_ring(
        engine: EngineHarness, isolation: str) -> None:
    grab = ("if (Object.prototype.toString.call(this.buffer) === '[object SharedArrayBuffer]')"
            " shared = this.buffer")
    source = ("let shared = null; const TA = Object.getPrototypeOf(Uint8Array.prototype);"
              " const set = TA.set;\n" + bends(HOOK_SET.replace("SEEN", grab))
              + "console.log('hello'); if (!refused.length) TA.set = set;"
              " return [shared === null ? 'none' : shared.constructor.name, refused];")
    got = body_json(engine.run(source, limits=SHORT, isolation=isolation))
    assert got == ["none", refusals(isolation, 1)]
