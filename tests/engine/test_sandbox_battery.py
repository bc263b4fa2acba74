"""Escape battery: nothing a job does reaches the host (the worker process, its
files, environment, network, other runs), and the sandbox's own machinery
(``__webjob_host``, the prelude's closures, the notes to Python) cannot be turned
against the host. Each finding it made is fixed and kept here as a regression test."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.engine import EngineConfig, RunRequest, RunResult
from shared.header import Limits
from tests.engine.conftest import EngineHarness, body_json

# Runs that could hang get a short runtime limit, so a hang shows as JOB-003 quickly.
SHORT = Limits(runtime_ms=1_500, memory_mb=128, cpu_ms=400)
ROOMY = Limits(runtime_ms=15_000, memory_mb=128, cpu_ms=8_000)  # floods: bounded by the cap
CONSOLE_CAP = 8 * 1024 * 1024
SIGN_KEY = "c2lnbmluZyBrZXkgZm9yIHRlc3Rz"  # the harness default: b"signing key for tests"


@pytest.fixture(scope="module")
def solo() -> Iterator[EngineHarness]:
    """An engine with exactly one worker: consecutive runs share one process."""
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=0,
                                         queue_timeout_ms=10_000))
    yield harness
    harness.close()


async def _full_pool(harness: EngineHarness) -> None:
    pool = harness.engine.pool
    while pool._starting or sum(w.alive for w in pool._all) < pool.size:
        await asyncio.sleep(0.01)


@pytest.fixture(autouse=True)
def _replacements_started(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that got a worker killed, wait until its replacement has spawned: an
    engine closed while a spawn is in flight leaves that worker running and the harness'
    loop.close() then blocks forever (WorkerPool.close only kills the workers it knows)."""
    yield
    for name in ("engine", "solo"):
        if name in request.fixturenames:
            harness = request.getfixturevalue(name)
            harness.call(asyncio.wait_for(_full_pool(harness), 20))


def pids(harness: EngineHarness) -> list[int]:
    return sorted(w.pid for w in harness.engine.pool._all if w.alive)


def assert_failed(result: RunResult, code: str, fragment: str) -> None:
    assert not result.ok and result.error is not None, result.body[:200]
    assert result.error.code == code and result.error.message, result.error.message
    assert fragment in result.error.message, result.error.message


def assert_healthy(harness: EngineHarness) -> None:
    assert body_json(harness.run("return [typeof leaked, 6 * 7]")) == ["undefined", 42]


# ---- code that tries to reach the host through the language ----------------------
U = "undefined"
ESCAPES: list[tuple[str, str, Any]] = [
    ("constructor-constructor", "try { return typeof"
     ' this.constructor.constructor("return process")(); } catch (e) { return String(e); }',
     "ReferenceError: process is not defined"),
    ("function-return-this", 'const g = Function("return this")(); return [g === globalThis,'
     " typeof g.process, typeof g.module, typeof g.global, g.require === require];",
     [True, U, U, U, True]),
    ("direct-eval", 'return eval("[typeof process, typeof __webjob_note, typeof global]");',
     [U, U, U]),
    ("indirect-eval", 'return (0, eval)("[this === globalThis, typeof process,'
     ' typeof __webjob_note, typeof Atomics]");', [True, U, U, U]),
    ("new-function", 'return new Function("return [typeof process, typeof module, typeof exports,'
     ' typeof __filename, typeof __dirname]")();', [U, U, U, U, U]),
    ("async-function-ctor", "const AF = Object.getPrototypeOf(async function () {}).constructor;"
     ' return await AF("await null; return [typeof process, typeof WebAssembly]")();', [U, U]),
    ("generator-function-ctor", "const GF = Object.getPrototypeOf(function* () {}).constructor;"
     ' return [...GF("yield typeof process; yield typeof SharedArrayBuffer")()];', [U, U]),
    ("async-generator-ctor", "const AG = Object.getPrototypeOf(async function* () {}).constructor;"
     ' const out = []; for await (const v of AG("yield typeof process; yield typeof Deno")())'
     " out.push(v); return out;", [U, U]),
    ("dynamic-import", "const r = []; for (const m of ['fs', 'node:fs', 'child_process', 'net',"
     " 'data:text/javascript,export default 1', 'https://example.com/x.js']) {"
     " try { await import(m); r.push('imported'); } catch (e) { r.push(String(e)); } } return r;",
     ["Error: Not supported"] * 6),
    ("eval-import-meta", "try { return eval('import.meta'); } catch (e) { return String(e); }",
     "SyntaxError: Cannot use 'import.meta' outside a module"),
    ("caller-from-prelude", "let c = 1; const seen = []; await new Promise((r) => setTimeout("
     "function g() { c = g.caller; r(); }, 1)); const hook = (o, k) => { const f = o[k];"
     " o[k] = function h(...a) { seen[seen.length] = h.caller; return f.apply(this, a); }; };"
     " hook(Array.prototype, 'push'); hook(String.prototype, 'charCodeAt');"
     " hook(Object.getPrototypeOf(Uint8Array.prototype), 'set'); console.log('hi');"
     " return [c, seen.every((x) => x === null)];", [None, True]),
    ("host-run-again", "try { __webjob_host.run('{\"params\":{}}', async () => 1); return 'ran'; }"
     " catch (e) { return String(e); }", "Error: A run is already started"),
    ("host-poll-from-job", "return __webjob_host.poll();", ""),
    ("host-provide-after-start", "try { __webjob_host.provide('date-fns', {}) }"
     " catch (e) { return e.message }", "Modules are provided before the job starts"),
    ("host-reply-own-call", "const p = __webjob_host.bridge('db', {}); __webjob_host.reply(1, true,"
     " '\"self\"'); return await p;", "self"),
    ("host-object-frozen", "'use strict'; const out = []; for (const f of ["
     "() => { __webjob_host.poll = () => 'x'; }, () => { __webjob_host.reply = () => 0; },"
     " () => Object.setPrototypeOf(__webjob_host, { bridge: () => 0 }),"
     " () => { globalThis.__webjob_host = {}; },"
     " () => Object.defineProperty(globalThis, '__webjob_host', { value: {} }),"
     " () => delete globalThis.__webjob_host, () => (0, eval)('function __webjob_host() {}'),"
     " () => (0, eval)('var __webjob_host = 1')]) { try { f(); out.push('no error'); }"
     " catch (e) { out.push(e.name); } } out.push(Object.isFrozen(__webjob_host),"
     " Object.getOwnPropertyNames(__webjob_host).join()); return out;",
     ["TypeError"] * 7 + ["no error", True, "run,poll,reply,bridge,provide"]),
]


@pytest.mark.parametrize(("source", "expected"), [pytest.param(s, e, id=i) for i, s, e in ESCAPES])
def test_language_escape_finds_nothing(engine: EngineHarness, source: str, expected: Any) -> None:
    assert body_json(engine.run(source, limits=SHORT)) == expected


HOST_NAMES = ["process", "global", "module", "exports", "__dirname", "__filename", "fetch",
              "XMLHttpRequest", "Deno", "Bun", "setImmediate", "SharedArrayBuffer", "Atomics",
              "WebAssembly", "__webjob_note", "__timer_manager", "importScripts"]


@pytest.mark.parametrize("name", HOST_NAMES)
def test_host_global_is_absent(engine: EngineHarness, name: str) -> None:
    source = (f'return [typeof {name}, typeof globalThis["{name}"], (0, eval)("typeof {name}"),'
              f' typeof Function("return this")()["{name}"]];')
    assert body_json(engine.run(source)) == [U] * 4


def test_global_names_hold_no_host_object(engine: EngineHarness) -> None:
    source = """const names = Object.getOwnPropertyNames(globalThis);
return { names, fns: names.filter((n) => typeof globalThis[n] === 'function'),
  symbols: Object.getOwnPropertySymbols(globalThis).length }"""
    got = body_json(engine.run(source))
    forbidden = {"process", "SharedArrayBuffer", "Atomics", "WebAssembly", "__webjob_note"}
    assert not forbidden & set(got["names"])
    assert {n for n in got["names"] if n.startswith("__")} <= {"__webjob_host", "__timer_manager"}
    assert "__timer_manager" not in got["fns"] and "__webjob_host" not in got["fns"]
    assert "require" in got["fns"] and got["symbols"] == 0  # the job's require: JOB-002 below


# ---- escapes that must fail cleanly, and the engine keeps answering --------------
FAILS = [
    ("import-meta", "return import.meta.url;", "JOB-001", "Cannot use 'import.meta' outside"),
    ("static-import", "import fs from 'fs'; return 1;", "JOB-001", "import statement outside"),
    ("require-fs", "return require('fs').readFileSync('/etc/passwd', 'utf8');", "JOB-002",
     "Module 'fs' is not approved for jobs"),
    ("require-child-process", "return require('child_process').execSync('id');", "JOB-002",
     "Module 'child_process' is not approved"),
    ("require-net", "return require('net').connect(80, 'example.com');", "JOB-002",
     "Module 'net' is not approved"),
    ("bridge-refused", "await __webjob_host.bridge('anything', { path: '/etc/passwd' }); return 1;",
     "JOB-001", "'anything' is not available to jobs on this hub"),
    ("microtask-throws", "queueMicrotask(() => { throw new Error('mt'); }); return 1;", "JOB-001",
     "Error: mt"),
    ("microtask-not-function", "queueMicrotask(42); return 1;", "JOB-001", "fn is not a function"),
    ("stack-overflow", "const f = () => f(); f();", "JOB-001", "Maximum call stack size exceeded"),
    ("prepare-stack-trace-throws", "Error.prepareStackTrace = () => { throw new Error('pst'); };"
     " throw new Error('boom');", "JOB-001", "Error: boom"),
    ("string-too-long", "return 'x'.repeat(2 ** 29 + 100);", "JOB-001", "Invalid string length"),
    ("heap-bomb", "const a = []; for (;;) a.push(new Array(1e5).fill(0.5));", "JOB-003", "memory"),
    ("buffer-bomb", "const k = []; for (let i = 0; i < 100; i++) k.push(new Uint8Array(16e6)"
     ".fill(1)); return k.length;", "JOB-003", "memory limit"),
    ("cpu-bomb", "for (;;) {}", "JOB-003", "CPU limit"),
    # The queue grows as it spins: the CPU or the heap limit may come first.
    ("microtask-storm", "const f = () => queueMicrotask(f); f(); await new Promise(() => {});",
     "JOB-003", " limit of "),
    ("interval-forever", "setInterval(() => {}, 0); await new Promise(() => {});", "JOB-003",
     "runtime limit"),
]


@pytest.mark.parametrize(("source", "code", "fragment"),
                         [pytest.param(s, c, f, id=i) for i, s, c, f in FAILS])
def test_escape_fails_cleanly(engine: EngineHarness, source: str, code: str, fragment: str) -> None:
    bomb = "memory" in fragment  # the memory bombs keep the harness' CPU budget
    assert_failed(engine.run(source, **({} if bomb else {"limits": SHORT})), code, fragment)
    assert_healthy(engine)


# ---- thrown values and results that fight back ----------------------------------
THROWS = [
    pytest.param("throw null;", "null", id="null"),
    pytest.param("throw undefined;", "undefined", id="undefined"),
    pytest.param("throw Symbol('s');", "Symbol(s)", id="symbol"),
    pytest.param("throw 42;", "42", id="number"),
    pytest.param("throw Object.create(null);", "cannot be shown", id="null-prototype"),
    pytest.param("throw { toString() { throw new Error('x'); } };", "cannot be shown",
                 id="throwing-tostring"),
    pytest.param("throw { get message() { throw new Error('m'); } };", "cannot be shown",
                 id="message-getter"),
    pytest.param("const e = new Error('x'); Object.defineProperty(e, 'message',"
                 " { get() { throw 1; } }); throw e;", "cannot be shown",
                 id="error-message-getter"),
    pytest.param("Object.defineProperty(Error, Symbol.hasInstance, { value: () => { throw 1; } });"
                 " throw new Error('real');", "cannot be shown", id="error-hasinstance"),
    pytest.param("throw new Proxy({}, new Proxy({}, { get: () => () => { throw new Error('t'); }"
                 " }));", "", id="proxy-every-trap-throws"),
    pytest.param("throw { message: 'has a code getter', get code() { throw new Error('cg'); } };",
                 "has a code getter",
                 id="code-getter"),
]


@pytest.mark.parametrize(("source", "fragment"), THROWS)
def test_non_error_throw_is_job_001(engine: EngineHarness, source: str, fragment: str) -> None:
    assert_failed(engine.run(source, limits=SHORT), "JOB-001", fragment)


RESULTS = [
    ("throwing-tojson", "return { toJSON() { throw new Error('tj'); } };",
     "The result cannot be sent as JSON: tj"),
    ("proxy-result", "return new Proxy({}, { get() { throw new Error('proxy get'); } });",
     "Error: proxy get"),
    ("revoked-proxy", "const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy;", "revoked"),
    ("success-getter", "return { get success() { throw new Error('sg'); } };", "Error: sg"),
    ("error-getter", "return { success: false, get error() { throw new Error('eg'); } };",
     "Error: eg"),
    ("cyclic", "const o = {}; o.self = o; return o;", "Converting circular structure to JSON"),
    ("bigint", "return { n: 10n };", "Do not know how to serialize a BigInt"),
]


@pytest.mark.parametrize(("source", "fragment"),
                         [pytest.param(s, f, id=i) for i, s, f in RESULTS])
def test_hostile_result_is_job_001(engine: EngineHarness, source: str, fragment: str) -> None:
    assert_failed(engine.run(source, limits=SHORT), "JOB-001", fragment)


# ---- stack-trace machinery exposes no host object or path ------------------------
def test_prepare_stack_trace_call_sites_expose_nothing(engine: EngineHarness) -> None:
    source = r"""const seen = [];
const kind = (f) => f === undefined ? 'none'
  : /\{\s*\[native code\]\s*\}$/.test(String(f)) ? 'native' : 'job';
Error.prepareStackTrace = (err, sites) => {
  for (const s of sites) {
    const th = s.getThis();
    seen.push([String(s.getFileName()), String(s.getScriptNameOrSourceURL()),
      String(s.getEvalOrigin()), kind(s.getFunction()),
      th === undefined ? 'none' : th === globalThis ? 'global' : 'object']);
  }
  return 'x';
};
const grab = () => new Error('probe').stack;
grab(); await null; grab();
await new Promise((r) => setTimeout(() => { grab(); r(); }, 1));
queueMicrotask(grab);
console.log({ toJSON() { grab(); return 1; } }, { get a() { grab(); return 1; } });
await __webjob_host.bridge('x', { toJSON() { grab(); return 1; } }).catch(() => 0);
(0, eval)('new Error("e").stack'); new Function('return new Error("f").stack')();
return { toJSON() { grab(); return seen; } };"""
    sites = body_json(engine.run(source))
    assert len(sites) > 20
    assert {s[0] for s in sites} <= {"<anonymous>", "null", "undefined"}
    # console.log of an object runs the prelude's cold chunk (strict mode, like the prelude)
    assert {s[1] for s in sites} == {"job.js", "webjobs:prelude", "webjobs:prelude-cold", "null",
                                     "undefined"}
    assert all("/" not in s[2] and ".py" not in s[2] for s in sites)
    assert "native" not in {s[3] for s in sites}  # no host or builtin function handed out
    assert all(s[3] == "none" and s[4] == "none" for s in sites
               if s[1].startswith("webjobs:prelude"))


def test_capture_stack_trace_shows_no_path(engine: EngineHarness) -> None:
    source = """const o = {}; Error.captureStackTrace(o);
const t = await new Promise((r) => setTimeout(() => r(new Error('t').stack), 1));
return [o.stack, t, new Error('x').stack];"""
    for stack in body_json(engine.run(source)):
        assert "job.js" in stack and "/" not in stack and ".py" not in stack, stack


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
    """Expect this result or a prompt, clean JOB-001 (a fix may choose either)."""

    def __init__(self, value: Any) -> None:
        self.value = value


POLLUTERS = [
    pytest.param("Object.prototype.polluted = 'yes'; Object.prototype.type = 'redirect';"
                 " Object.prototype.status = 999; Object.prototype.success = true;"
                 " return { a: 1 };",
                 {"a": 1}, id="object-prototype"),
    pytest.param("Array.prototype.polluted = 1; Array.prototype.map = () => { throw 1; };"
                 " console.log('a', [1]); return [1, 2, 3];", [1, 2, 3], id="array-prototype"),
    pytest.param("Array.prototype[Symbol.iterator] = function* () { yield 'evil'; };"
                 " console.log('a'); return [1, 2, 3];", Clean([1, 2, 3]), id="array-iterator"),
    pytest.param("const cc = String.prototype.charCodeAt; String.prototype.charCodeAt ="
                 " function (i) { return cc.call(this, i) === 97 ? 0x22 : cc.call(this, i); };"
                 " console.log('a'); return 1;", Clean(1), id="string-charcodeat"),
    pytest.param("JSON.stringify = () => '\"forged\"'; JSON.parse = () => ({ forged: true });"
                 " return { a: 1 };", {"a": 1}, id="json-stringify-parse"),
    pytest.param("Promise.prototype.then = () => { throw 1; }; Object.getPrototypeOf("
                 "Promise.prototype).then = () => { throw 2; }; await null; return 'ok';", "ok",
                 id="promise-then"),
    pytest.param("Promise = null; setTimeout = () => { throw new Error('no'); }; await null;"
                 " return await (async () => 'ok')();", "ok", id="promise-null-settimeout"),
    pytest.param("Object.defineProperty(Object.getPrototypeOf(Promise.prototype), 'constructor',"
                 " { value: { get [Symbol.species]() { throw new Error('species trap'); } } });"
                 " return 1;", ("JOB-001", "species trap"), id="promise-species"),
    pytest.param("String.prototype.split = () => { throw new Error('split'); }; const o = {};"
                 " o.o = o; return o;", ("JOB-001", "circular structure"), id="string-split"),
    pytest.param("Function.prototype.apply = () => { throw 1; }; Reflect.apply = null;"
                 " await new Promise((r) => setTimeout(r, 1)); return 'ok';", "ok",
                 id="function-apply"),
    pytest.param("Error = function () { return {}; }; TypeError = null; const o = {}; o.o = o;"
                 " return o;", ("JOB-001", "TypeError"), id="error-constructors"),
    pytest.param("Function.prototype.call = function () {}; return 1;", Clean(1),
                 id="function-call"),
    pytest.param("Object.prototype.toJSON = function () { throw new Error('poisoned'); };"
                 " return { a: 1 };", Clean(None), id="object-tojson-throws"),
    pytest.param("Object.defineProperty(Object.prototype, 'logs', { set() { throw new Error('nl');"
                 " } }); return 1;", Clean(1), id="logs-setter-throws"),
]


@pytest.mark.parametrize(("source", "expected"), POLLUTERS)
def test_pollution_leaves_next_run_clean(solo: EngineHarness, source: str, expected: Any) -> None:
    before = pids(solo)
    result = solo.run(source, limits=SHORT)
    if isinstance(expected, Clean):
        assert (result.ok and body_json(result) == expected.value) or (
            result.error is not None and result.error.code == "JOB-001"), result.error
    elif isinstance(expected, tuple):
        assert_failed(result, *expected)
    else:
        assert body_json(result) == expected
        assert result.meta["type"] == "json" and result.meta["status"] == 200
    after = solo.run(PRISTINE)
    assert body_json(after) == PRISTINE_ANSWER
    assert [line.message for line in after.logs] == ["clean"]
    assert pids(solo) == before  # the same worker served both runs


def test_globals_do_not_survive_into_the_next_run_on_the_same_worker(solo: EngineHarness) -> None:
    before = pids(solo)
    source = """const seen = [typeof globalThis.leaked, typeof Object.prototype.polluted, typeof x];
globalThis.leaked = 1; Object.prototype.polluted = 1; (0, eval)('var x = 1'); return seen;"""
    for _ in range(5):
        assert body_json(solo.run(source)) == [U, U, U]
    assert pids(solo) == before


def test_timers_never_fire_after_their_run(solo: EngineHarness) -> None:
    before = pids(solo)
    first = solo.run("setTimeout(() => { globalThis.leaked = 'timer'; console.log('LATE'); }, 200);"
                     " setInterval(() => console.log('LATE INTERVAL'), 50); return 'first';")
    assert body_json(first) == "first" and first.logs == []
    second = solo.run("await new Promise((r) => setTimeout(r, 400)); return typeof leaked;")
    assert body_json(second) == U and second.logs == []
    assert pids(solo) == before


def test_twenty_runs_after_a_polluting_run_are_right(solo: EngineHarness) -> None:
    polluter = """Object.prototype.polluted = 1; Array.prototype.map = null; JSON.parse = null;
JSON.stringify = null; String.prototype.split = null; Promise.prototype.then = null;
Function.prototype.apply = null; globalThis.leaked = 1; return 'polluted';"""
    assert body_json(solo.run(polluter)) == "polluted"
    source = """const r = await Promise.all([1, 2].map(async (x) => x * params.n));
return { n: params.n, sum: r.reduce((a, b) => a + b, 0), leaked: typeof leaked,
  json: JSON.parse(JSON.stringify({ s: 'a,b'.split(',') })) };"""
    for n in range(20):
        assert body_json(solo.run(source, params={"n": n})) == {
            "n": n, "sum": 3 * n, "leaked": U, "json": {"s": ["a", "b"]}}


# ---- floods and huge answers ---------------------------------------------------------
@pytest.mark.parametrize("line", ["i", "''", "'x'.repeat(100)"], ids=["numbers", "empty", "long"])
def test_console_flood_is_bounded(engine: EngineHarness, line: str) -> None:
    result = engine.run(f"for (let i = 0; i < 1e6; i++) console.log({line}); return 'done';",
                        limits=ROOMY)
    assert body_json(result) == "done"
    assert len(result.logs) <= 1_000_001
    assert sum(len(x.message) for x in result.logs) <= CONSOLE_CAP + 100
    assert_healthy(engine)


def test_console_cap_drops_the_rest(engine: EngineHarness) -> None:
    result = engine.run("for (let i = 0; i < 1e4; i++) console.log('y'.repeat(1000)); return 1;",
                        live=True, limits=ROOMY)
    assert body_json(result) == 1
    assert sum(len(x.message) for x in result.logs) <= CONSOLE_CAP + 100
    assert result.logs[-1].message.startswith("[console output over 8 MB")


def test_console_lines_of_a_synchronous_run_are_kept(engine: EngineHarness) -> None:
    result = engine.run("for (let i = 0; i < 1e4; i++) console.log(String(i).padStart(100));"
                        " const t = Date.now(); while (Date.now() - t < 40); console.log('last');"
                        " return 1;")  # the last line flushes a batch: an 'L' note
    assert [x.message.strip() for x in result.logs] == [*map(str, range(10_000)), "last"]


def test_huge_result_is_answered_or_refused_cleanly(engine: EngineHarness) -> None:
    result = engine.run("return 'x'.repeat(50 * 1024 * 1024);")
    if result.ok:
        assert len(result.body) == 50 * 1024 * 1024 + 2 and result.body[:2] == b'"x'
    else:
        assert result.error is not None and result.error.code in ("JOB-001", "JOB-003")
    assert_healthy(engine)


# ---- the notes to Python and the bridge --------------------------------------------
def forge_meta(fields: str) -> str:
    """A job whose Object.prototype.toJSON swaps the prelude's meta line for ``fields``."""
    return ("Object.prototype.toJSON = function () { return 'ok' in this && !this.forged ?"
            f" {{ forged: 1, {fields} }} : this; }};\nreturn 1;")




def test_forged_meta_logs_do_not_break_the_engine(engine: EngineHarness) -> None:
    result = engine.run(forge_meta("ok: false, code: 'JOB-001', logs: 5"))  # must not raise
    assert result.body == b"1" if result.ok else result.error and result.error.code == "JOB-001"


def test_forged_meta_cannot_make_a_response(engine: EngineHarness) -> None:
    result = engine.run(forge_meta("ok: true, type: 'redirect', status: 99999,"
                                    " headers: { Location: 'https://evil.example' }"))
    assert not result.ok or (result.meta["type"] == "json" and result.meta["status"] == 200)


def test_forged_call_note_does_not_kill_the_worker(solo: EngineHarness) -> None:
    before = pids(solo)
    result = solo.run("Object.prototype.toJSON = function () { return this && this.op ? { id: 'x',"
                      " op: 'db', args: 0 } : this; };\nconst call = __webjob_host.bridge('db', 1);"
                      " await Promise.race([call.catch(() => 0), new Promise((r) =>"
                      " setTimeout(r, 300))]); return 'alive';", limits=SHORT)
    assert body_json(result) == "alive"
    assert pids(solo) == before


class _SlowBridge:
    async def call(self, op: str, args: Any, run: RunRequest) -> Any:
        await asyncio.sleep(args["delay"])
        return {"answer_for": run.job_id, "secret": args.get("secret")}


def test_a_late_bridge_answer_never_reaches_the_next_run(solo: EngineHarness) -> None:
    solo.engine.bridge = _SlowBridge()
    try:
        first = solo.run("await new Promise((r) => setTimeout(r, 5)); __webjob_host.bridge('db',"
                         " { delay: 0.2, secret: 'alice-only' }).catch(() => 0); return 'A';")
        assert body_json(first) == "A"
        second = solo.run("return await __webjob_host.bridge('db', { delay: 0.6 });")
        assert body_json(second) == {"answer_for": second.job_id, "secret": None}
    finally:
        time.sleep(0.7)  # let the pending answers drain before the next test
        solo.engine.bridge = None


def test_sign_key_cannot_be_read(engine: EngineHarness) -> None:
    source = """const seen = []; const TA = Object.getPrototypeOf(Uint8Array.prototype);
const set = TA.set; TA.set = function (src, off) { seen.push(Array.from(src));
  return set.call(this, src, off); };
const token = sign({ a: 1 }); verify('x.y'); TA.set = set; return { token, seen };"""
    got = body_json(engine.run(source, sign_key=SIGN_KEY))
    assert isinstance(got["token"], str) and "." in got["token"]
    assert list(base64.b64decode(SIGN_KEY)) not in got["seen"]


def test_shared_array_buffer_is_unreachable_through_the_console_ring(engine: EngineHarness) -> None:
    source = """let shared = null; const TA = Object.getPrototypeOf(Uint8Array.prototype);
const set = TA.set; TA.set = function (src, at) {
  if (Object.prototype.toString.call(this.buffer) === '[object SharedArrayBuffer]') {
    shared = this.buffer; }
  return set.call(this, src, at); };
console.log('hello'); TA.set = set;
return shared === null ? 'none' : shared.constructor.name;"""
    assert body_json(engine.run(source, limits=SHORT)) == "none"

