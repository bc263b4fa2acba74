"""Escape battery: nothing a job does reaches the host (the worker process, its
files, environment, network, other runs), and the sandbox's own machinery
(``__webjob_host``, the run's closures, the notes to Python) cannot be turned
against the host. Each attack runs under the warm engine and under ``Isolation:
fresh`` (tests/engine/battery.py); each finding it made is fixed and kept here as a
regression test. Rewritten built-ins and the runs after them: test_sandbox_pollution.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shared.header import Limits
from tests.engine.battery import (
    INERT_CTOR,
    ISOLATIONS,
    SHORT,
    U,
    assert_failed,
    assert_healthy,
    bends,
    by_isolation,
    wait_for_replacements,
)
from tests.engine.conftest import EngineHarness, body_json

# SHORT's CPU budget with more room in time: 400 ms of CPU on a loaded machine can take
# longer than SHORT's runtime, and then the runtime limit would end the run first.
CPU_BOUND = Limits(runtime_ms=15_000, memory_mb=128, cpu_ms=400)
# For the run meant to end at its runtime limit: it does, however slow the machine.
HANGS = Limits(runtime_ms=1_500, memory_mb=128, cpu_ms=400)


@pytest.fixture(autouse=True)
def _replacements_started(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    wait_for_replacements(request)


# ---- code that tries to reach the host through the language ----------------------
# A warm job's only way to the host object would be a global: every one is shadowed.
NO_HOST = "TypeError: Cannot read properties of undefined (reading '{}')"
ESCAPES: list[tuple[str, str, Any]] = [
    ("top-level-this", "return typeof this;", {"fresh": "object", "warm": U}),
    ("constructor-constructor", "try { return typeof (this ?? globalThis).constructor"
     '.constructor("return process")(); } catch (e) { return String(e); }',
     {"fresh": "ReferenceError: process is not defined", "warm": INERT_CTOR}),
    ("function-return-this", 'const f = Function("return this")(); const g = f ?? globalThis;'
     " return [f === undefined, g === globalThis, typeof g.process, typeof g.module,"
     " typeof g.global, g.require === require];",
     {"fresh": [False, True, U, U, U, True], "warm": [True, True, U, U, U, True]}),
    ("direct-eval", 'return eval("[typeof process, typeof __webjob_note, typeof global]");',
     [U, U, U]),
    ("indirect-eval", 'return (0, eval)("[this === globalThis, typeof process,'
     ' typeof __webjob_note, typeof Atomics]");', [True, U, U, U]),
    ("new-function", 'return new Function("return [typeof process, typeof module, typeof exports,'
     ' typeof __filename, typeof __dirname]")();', [U, U, U, U, U]),
    ("async-function-ctor", "const AF = Object.getPrototypeOf(async function () {}).constructor;"
     ' try { return await AF("await null; return [typeof process, typeof WebAssembly]")(); }'
     " catch (e) { return String(e); }", {"fresh": [U, U], "warm": INERT_CTOR}),
    ("generator-function-ctor", "const GF = Object.getPrototypeOf(function* () {}).constructor;"
     ' try { return [...GF("yield typeof process; yield typeof SharedArrayBuffer")()]; }'
     " catch (e) { return String(e); }", {"fresh": [U, U], "warm": INERT_CTOR}),
    ("async-generator-ctor", "const AG = Object.getPrototypeOf(async function* () {}).constructor;"
     ' const out = []; try { for await (const v of AG("yield typeof process; yield typeof Deno")'
     "()) out.push(v); } catch (e) { return String(e); } return out;",
     {"fresh": [U, U], "warm": INERT_CTOR}),
    ("dynamic-import", "const r = []; for (const m of ['fs', 'node:fs', 'child_process', 'net',"
     " 'data:text/javascript,export default 1', 'https://example.com/x.js']) {"
     " try { await import(m); r.push('imported'); } catch (e) { r.push(String(e)); } } return r;",
     ["Error: Not supported"] * 6),
    ("eval-import-meta", "try { return eval('import.meta'); } catch (e) { return String(e); }",
     "SyntaxError: Cannot use 'import.meta' outside a module"),
    # A sloppy function called by the sandbox's code could read it as .caller (fresh);
    # a warm job's functions are strict and the warm built-ins cannot be hooked at all.
    ("caller-from-prelude", "let c = 1; const seen = []; await new Promise((r) => setTimeout("
     "function g() { c = g.caller; r(); }, 1)); const hook = (o, k) => { const f = o[k];"
     " o[k] = function h(...a) { seen[seen.length] = h.caller; return f.apply(this, a); }; };\n"
     + bends("hook(Array.prototype, 'push');", "hook(String.prototype, 'charCodeAt');",
             "hook(Object.getPrototypeOf(Uint8Array.prototype), 'set');")
     + "console.log('hi'); return [c, seen.every((x) => x === null), refused];",
     {"fresh": [None, True, []], "warm": [None, True, ["TypeError"] * 3]}),
    ("host-unreachable", "return [typeof __webjob_host, typeof globalThis.__webjob_host,"
     " (0, eval)('typeof __webjob_host'), Function('return typeof __webjob_host')(),"
     " typeof __webjob_sandbox, typeof __webjob_channel,"
     " Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith('__'))];",
     {"warm": [U] * 6 + [[]]}),
    ("host-run-again", "try { __webjob_host.run('{\"params\":{}}', async () => 1); return 'ran'; }"
     " catch (e) { return String(e); }",
     {"fresh": "Error: A run is already started", "warm": NO_HOST.format("run")}),
    ("host-poll-from-job", "try { return __webjob_host.poll(); } catch (e) { return String(e); }",
     {"fresh": "", "warm": NO_HOST.format("poll")}),
    ("host-provide-after-start", "try { __webjob_host.provide('date-fns', {}) }"
     " catch (e) { return e.message }",
     {"fresh": "Modules are provided before the job starts",
      "warm": NO_HOST.format("provide").removeprefix("TypeError: ")}),
    ("host-reply-own-call", "try { const p = __webjob_host.bridge('db', {});"
     " __webjob_host.reply(1, true, '\"self\"'); return await p; }"
     " catch (e) { return String(e); }",
     # fresh: the reply path takes the worker's key; the call gets the hub's own answer
     {"fresh": "Error: 'db' is not available to jobs on this hub",
      "warm": NO_HOST.format("bridge")}),
    ("host-object-frozen", "'use strict'; const out = []; for (const f of ["
     "() => { __webjob_host.poll = () => 'x'; }, () => { __webjob_host.reply = () => 0; },"
     " () => Object.setPrototypeOf(__webjob_host, { bridge: () => 0 }),"
     " () => { globalThis.__webjob_host = {}; },"
     " () => Object.defineProperty(globalThis, '__webjob_host', { value: {} }),"
     " () => delete globalThis.__webjob_host, () => (0, eval)('function __webjob_host() {}'),"
     " () => (0, eval)('var __webjob_host = 1')]) { try { f(); out.push('no error'); }"
     " catch (e) { out.push(e.name); } } out.push(Object.isFrozen(__webjob_host),"
     " Object.getOwnPropertyNames(__webjob_host).join()); return out;",
     {"fresh": ["TypeError"] * 7 + ["no error", True, "arm,run,poll,reply,bridge,provide"]}),
]


@pytest.mark.parametrize(("source", "expected", "isolation"), by_isolation(ESCAPES))
def test_language_escape_finds_nothing(engine: EngineHarness, source: str, expected: Any,
                                       isolation: str) -> None:
    assert body_json(engine.run(source, limits=SHORT, isolation=isolation)) == expected


# Every object a job is handed leads to a Function constructor through .constructor.
CTOR_ROUTES = ["({})", "globalThis", "Date", "console.log", "Buffer", "crypto.hash",
               "response.json", "require", "sign", "setTimeout", "URL", "db.exec", "Math.max"]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_function_constructors_reached_from_shared_objects_find_nothing(
        engine: EngineHarness, isolation: str) -> None:
    source = (f"return [{', '.join(CTOR_ROUTES)}].map((o) => {{ try {{ return o.constructor"
              ".constructor('return [typeof process, typeof __webjob_host].join()')(); }"
              " catch (e) { return String(e); } });")
    expected = {"fresh": "undefined,object", "warm": INERT_CTOR}[isolation]
    assert body_json(engine.run(source, isolation=isolation)) == [expected] * len(CTOR_ROUTES)


HOST_NAMES = ["process", "global", "module", "exports", "__dirname", "__filename", "fetch",
              "XMLHttpRequest", "Deno", "Bun", "setImmediate", "SharedArrayBuffer", "Atomics",
              "WebAssembly", "__webjob_note", "__timer_manager", "importScripts",
              "__webjob_sandbox", "__webjob_channel", "FinalizationRegistry", "WeakRef"]


WEAK = ("FinalizationRegistry", "WeakRef")  # a fresh context has them: they die with it


@pytest.mark.parametrize(("name", "isolation"), [pytest.param(n, i, id=f"{n}-{i}")
                                                 for n in HOST_NAMES for i in ISOLATIONS
                                                 if i == "warm" or n not in WEAK])
def test_host_global_is_absent(engine: EngineHarness, name: str, isolation: str) -> None:
    source = (f'return [typeof {name}, typeof globalThis["{name}"], (0, eval)("typeof {name}"),'
              f' typeof (Function("return this")() ?? globalThis)["{name}"],'
              f' Function("return typeof {name}")()];')
    assert body_json(engine.run(source, isolation=isolation)) == [U] * 5


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_global_names_hold_no_host_object(engine: EngineHarness, isolation: str) -> None:
    source = """const names = Object.getOwnPropertyNames(globalThis);
return { names, fns: names.filter((n) => typeof globalThis[n] === 'function'),
  symbols: Object.getOwnPropertySymbols(globalThis).map((s) => [String(s), globalThis[s]]) }"""
    got = body_json(engine.run(source, isolation=isolation))
    forbidden = {"process", "SharedArrayBuffer", "Atomics", "WebAssembly", "__webjob_note",
                 "Compartment", "harden", "lockdown", "FinalizationRegistry", "WeakRef"}
    if isolation == "fresh":  # a fresh context keeps V8's weak references
        forbidden -= {"FinalizationRegistry", "WeakRef"}
    assert not forbidden & set(got["names"])
    host = {"fresh": {"__webjob_host", "__timer_manager"}, "warm": set()}[isolation]
    assert {n for n in got["names"] if n.startswith("__")} <= host
    assert "__timer_manager" not in got["fns"] and "__webjob_host" not in got["fns"]
    assert "require" in got["fns"]  # the job's require: JOB-002 below
    # A compartment's global has SES's Symbol.unscopables, holding nothing.
    assert got["symbols"] == {"fresh": [], "warm": [["Symbol(Symbol.unscopables)", None]]}[
        isolation]


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
    ("db-refused", "await db.exec('select * from secrets'); return 1;", "JOB-001",
     "'db.exec' is not available to jobs on this hub"),
    ("microtask-throws", "queueMicrotask(() => { throw new Error('mt'); }); return 1;", "JOB-001",
     "Error: mt"),
    ("microtask-throws-async", "queueMicrotask(() => { throw new Error('mt'); }); await null;"
     " return 1;", "JOB-001", "Error: mt"),
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


# Only a fresh job reaches the host object: a warm one reads it as undefined (above).
@pytest.mark.parametrize(("source", "code", "fragment", "isolation"),
                         [pytest.param(s, c, f, iso, id=f"{i}-{iso}") for i, s, c, f in FAILS
                          for iso in ISOLATIONS if iso == "fresh" or "__webjob_host" not in s])
def test_escape_fails_cleanly(engine: EngineHarness, source: str, code: str, fragment: str,
                              isolation: str) -> None:
    bomb = "memory" in fragment  # the memory bombs keep the harness' CPU budget
    limits: dict[str, Any] = {} if bomb else {"limits": SHORT}
    if "CPU limit" in fragment:  # the CPU must run out first, however busy the machine
        limits = {"limits": CPU_BOUND}
    elif "runtime limit" in fragment:
        limits = {"limits": HANGS}
    assert_failed(engine.run(source, isolation=isolation, **limits), code, fragment)
    assert_healthy(engine)


# ---- thrown values and results that fight back ----------------------------------
THROWS: list[tuple[str, str, Any]] = [
    ("null", "throw null;", "null"),
    ("undefined", "throw undefined;", "undefined"),
    ("symbol", "throw Symbol('s');", "Symbol(s)"),
    ("number", "throw 42;", "42"),
    ("null-prototype", "throw Object.create(null);", "cannot be shown"),
    ("throwing-tostring", "throw { toString() { throw new Error('x'); } };", "cannot be shown"),
    ("message-getter", "throw { get message() { throw new Error('m'); } };", "cannot be shown"),
    ("error-message-getter", "const e = new Error('x'); Object.defineProperty(e, 'message',"
     " { get() { throw 1; } }); throw e;", "cannot be shown"),
    # Warm: Error is frozen, so the rewrite is refused and the Error shows as itself.
    ("error-hasinstance", bends("Object.defineProperty(Error, Symbol.hasInstance,"
                                " { value: () => { throw 1; } });")
     + "throw new Error('real ' + refused);",
     {"fresh": "cannot be shown", "warm": "Error: real TypeError"}),
    ("proxy-every-trap-throws", "throw new Proxy({}, new Proxy({}, { get: () => () => {"
     " throw new Error('t'); } }));", ""),
    ("code-getter", "throw { message: 'has a code getter', get code() { throw new Error('cg'); }"
     " };", "has a code getter"),
]


@pytest.mark.parametrize(("source", "fragment", "isolation"), by_isolation(THROWS))
def test_non_error_throw_is_job_001(engine: EngineHarness, source: str, fragment: str,
                                    isolation: str) -> None:
    assert_failed(engine.run(source, limits=SHORT, isolation=isolation), "JOB-001", fragment)


RESULTS: list[tuple[str, str, Any]] = [
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


@pytest.mark.parametrize(("source", "fragment", "isolation"), by_isolation(RESULTS))
def test_hostile_result_is_job_001(engine: EngineHarness, source: str, fragment: str,
                                   isolation: str) -> None:
    assert_failed(engine.run(source, limits=SHORT, isolation=isolation), "JOB-001", fragment)


# ---- stack-trace machinery exposes no host object or path ------------------------
PREPARE = r"""const seen = [];
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
await db.exec('select 1', [{ toJSON() { grab(); return 1; } }]).catch(() => 0);
(0, eval)('new Error("e").stack'); new Function('return new Error("f").stack')();
return { toJSON() { grab(); return { seen, stack: grab() }; } };"""


def test_prepare_stack_trace_call_sites_expose_nothing_fresh(engine: EngineHarness) -> None:
    got = body_json(engine.run(PREPARE, isolation="fresh"))
    sites = got["seen"]
    assert len(sites) > 20 and got["stack"] == "x"
    assert {s[0] for s in sites} <= {"<anonymous>", "null", "undefined"}
    # The sandbox is one script (its sourceURL the host's): its frames are strict code.
    assert {s[1] for s in sites} == {"job.js", "webjobs:fresh-host", "null", "undefined"}
    assert all("/" not in s[2] and ".py" not in s[2] for s in sites)
    assert "native" not in {s[3] for s in sites}  # no host or builtin function handed out
    assert all(s[3] == "none" and s[4] == "none" for s in sites
               if s[1].startswith("webjobs:"))


def test_prepare_stack_trace_is_powerless_on_warm(engine: EngineHarness) -> None:
    # A compartment's Error.prepareStackTrace is SES's do-nothing stand-in: no call
    # site (and no function or receiver of the sandbox's frames) ever reaches the job.
    got = body_json(engine.run(PREPARE, isolation="warm"))
    assert got["seen"] == []
    assert got["stack"].startswith("Error: probe\n") and "job.js:" in got["stack"]
    assert "/" not in got["stack"] and ".py" not in got["stack"]


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_capture_stack_trace_shows_no_path(engine: EngineHarness, isolation: str) -> None:
    source = """const o = {}; Error.captureStackTrace(o);
const t = await new Promise((r) => setTimeout(() => r(new Error('t').stack), 1));
return [o.stack, t, new Error('x').stack];"""
    for stack in body_json(engine.run(source, isolation=isolation)):
        assert "job.js" in stack and "/" not in stack and ".py" not in stack, stack
