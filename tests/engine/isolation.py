"""The isolation battery's tools: job A attacks, job B probes, on the same workers.

A ``Pair`` is one attack: A's ``steps`` (each tried on its own, so one refused write
does not stop the rest) and B's ``probe``, whose answer must be exactly ``pristine``
and whose console exactly ``logs``. ``battery`` runs A then B many times on one worker
and A beside B on two, then compares everything B can reach (the *world*: every
object, its keys, descriptors, prototypes and function sources) with what it was
before A's first attack. ``control`` runs each step and the probe in ONE fresh run,
where the step does take effect, and checks that the probe notices it: a probe that
could not fail proves nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hub.engine.engine import RunResult
from hub.engine.modules import installed_builds, mentioned
from shared.header import Limits
from tests.engine.conftest import EngineHarness, pids, workers

APPROVED = ["date-fns", "pdf-lib"]
BUILDS = installed_builds(APPROVED)
# An attack that hangs shows as JOB-003 within this, not after the default 5 s.
SHORT = Limits(runtime_ms=2_000, memory_mb=128, cpu_ms=1_500)
# A step can make the probe wait forever (a rewritten ``then``): that shows sooner.
CONTROL = Limits(runtime_ms=1_200, memory_mb=128, cpu_ms=1_000)
# A step that takes effect nowhere (a non-writable property, a frozen object):
INERT = "/* inert */ "
# A step that leaves something behind (data in a buffer, a finalizer) that only shared
# state would hand on: the same run cannot show it, so the control leaves it out.
RESIDUE = "/* residue */ "
# Globals whose values differ from run to run by design: the world leaves them out.
PER_RUN_VALUES = ("params", "request", "userID", "isAuthenticated")
# Every name a job sees, read as a free variable: under the warm engine a job's
# globals are parameters, not all of them properties of its globalThis. (Not the host
# object: a warm run's is undefined, and the test harness runs a job naming it fresh.)
JOB_NAMES = (
    "Object", "Function", "Array", "String", "Number", "Boolean", "Symbol", "BigInt", "Error",
    "Promise", "RegExp", "Date", "Map", "Set", "WeakMap", "WeakSet", "Math", "JSON", "Reflect",
    "Proxy", "Intl", "Iterator", "ArrayBuffer", "DataView", "Uint8Array", "Int8Array",
    "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
    "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
    "AggregateError", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError",
    "URIError", "SuppressedError", "DisposableStack", "AsyncDisposableStack",
    "FinalizationRegistry", "WeakRef", "Temporal", "Buffer", "URL", "URLSearchParams",
    "TextEncoder", "TextDecoder", "Event", "EventTarget", "AbortController", "AbortSignal",
    "DOMException", "atob", "btoa", "structuredClone", "response", "crypto", "console",
    "secrets", "limits", "sign", "verify", "require", "db", "http", "breakpoint", "setTimeout",
    "clearTimeout", "setInterval", "clearInterval", "queueMicrotask",
    "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape",
    "eval", "isFinite", "isNaN", "parseFloat", "parseInt", "globalThis",
)


class OneOf:
    """Equal to any of ``values``: what an engine may legitimately differ in (SES removes
    ``RegExp.$1``; today's engine keeps it empty)."""

    def __init__(self, *values: Any) -> None:
        self.values = values

    def __eq__(self, other: object) -> bool:
        return any(other == v for v in self.values)

    def __repr__(self) -> str:
        return f"OneOf{self.values!r}"

    __hash__ = None  # type: ignore[assignment]


@dataclasses.dataclass(frozen=True)
class Pair:
    steps: tuple[str, ...]          # what A tries, each on its own
    probe: str                      # B's body: returns what it sees
    pristine: Any                   # what B must return, exactly
    logs: tuple[str, ...] = ()      # B's console lines, exactly
    top: str = ""                   # A's top-level statements (declarations)
    a_kw: dict[str, Any] = dataclasses.field(default_factory=dict)
    b_kw: dict[str, Any] = dataclasses.field(default_factory=dict)
    status: int = 200               # B's answer's status

    def attack(self, linger_ms: int = 0) -> str:
        return attempts(self.steps, self.top, linger_ms)


def attempts(steps: tuple[str, ...], top: str = "", linger_ms: int = 0) -> str:
    """A job body that tries each step and answers, per step, 'ok' or what it threw.
    Only steps that await are awaited, and A lingers (to overlap B) before it attacks:
    a step that rewrote ``then`` must not hang A."""
    fns = ",\n".join(f"{'async ' if 'await' in s else ''}() => {{ {s}\n}}" for s in steps)
    linger = f"await new Promise((r) => setTimeout(r, {linger_ms}));" if linger_ms else ""
    return f"""{top}
{linger}
const steps = [{fns}];
const tried = [];
for (let i = 0; i < steps.length; i++) {{
  let got = 'ok';
  try {{ const p = steps[i](); if (p) await p; }}
  catch (e) {{ try {{ got = String(e && e.name); }} catch (x) {{ got = '?'; }} }}
  tried[i] = got;
}}
return tried;"""


def inert(step: str) -> str:
    return INERT + step


def residue(step: str) -> str:
    return RESIDUE + step


def module_kw(source: str, **kw: Any) -> dict[str, Any]:
    """The run's modules, as the hub gives them: the approved ones the source names."""
    kw.setdefault("approved_modules", APPROVED)
    kw.setdefault("modules", [b.as_message() for b in mentioned(source, BUILDS)])
    kw.setdefault("limits", SHORT)
    return kw


@dataclasses.dataclass
class Bench:
    """One worker for A-then-B, two for A-beside-B, the world of the first run and the
    world the last battery left (each battery reports only what its own A changed)."""

    solo: EngineHarness
    duo: EngineHarness
    world: dict[str, Any]
    last: dict[str, Any] = dataclasses.field(default_factory=dict)


@contextmanager
def bench() -> Iterator[Bench]:
    with workers(1) as solo, workers(2) as duo:
        first = world(solo, modules=True)  # before any attack
        yield Bench(solo, duo, first, first)


def run(harness: EngineHarness, source: str, **kw: Any) -> RunResult:
    return harness.run(source, **module_kw(source, **kw))


async def _both(harness: EngineHarness, a: tuple[str, dict[str, Any]],
                b: tuple[str, dict[str, Any]]) -> list[RunResult]:
    runs = [harness.engine.run(harness.request(src, **module_kw(src, **kw))) for src, kw in (a, b)]
    return list(await asyncio.gather(*runs))


def together(harness: EngineHarness, a: tuple[str, dict[str, Any]],
             b: tuple[str, dict[str, Any]]) -> list[RunResult]:
    """A and B at the same time: on two workers (``duo``), or interleaved in one
    worker's isolate (``solo``, which serves several runs at once)."""
    return harness.call(_both(harness, a, b))


def waiting_first(probe: str, wait_ms: int = 30) -> str:
    """B's probe after B has waited in the isolate while A attacks beside it."""
    return f"await new Promise((r) => setTimeout(r, {wait_ms}));\n{probe}"


def answer(result: RunResult) -> Any:
    assert result.ok, result.error and f"{result.error.code}: {result.error.message}"
    return json.loads(result.body)


def assert_pristine(result: RunResult, pair: Pair) -> None:
    # (pytest does not rewrite a helper module's asserts: each says what it saw)
    seen = answer(result)
    assert seen == pair.pristine, f"B saw {seen!r}, a pristine run {pair.pristine!r}"
    assert result.meta["status"] == pair.status, result.meta
    logs = [line.message for line in result.logs]
    assert logs == list(pair.logs), f"B logged {logs!r}"


def assert_a_finished(result: RunResult) -> None:
    """A may break itself (today's engine lets it), never the worker or the clock."""
    assert result.ok or (result.error is not None and result.error.code == "JOB-001"), (
        result.error and f"{result.error.code}: {result.error.message}")


def battery(on: Bench, pair: Pair, rounds: int = 6, side_by_side: int = 3) -> None:
    solo, duo = on.solo, on.duo
    before, before_a = pids(solo), on.last
    modules = "require(" in pair.attack()
    try:
        for _ in range(rounds):
            assert_a_finished(run(solo, pair.attack(), **pair.a_kw))
            assert_pristine(run(solo, pair.probe, **pair.b_kw), pair)
    finally:  # what A left is where the next battery starts, even when B saw it here
        seen = world(solo, modules)
        kept = {} if modules else {k: v for k, v in before_a.items() if k.startswith("require(")}
        on.last = {**kept, **seen}
    check_world(seen, before_a, modules)
    assert pids(solo) == before, "the worker was replaced"  # one worker served every run
    for _ in range(side_by_side):
        a, b = together(duo, (pair.attack(linger_ms=15), pair.a_kw), (pair.probe, pair.b_kw))
        assert_a_finished(a)
        assert_pristine(b, pair)
        # interleaved in one isolate: B starts, waits; A attacks while B waits; B probes
        a, b = together(solo, (pair.attack(linger_ms=5), pair.a_kw),
                        (waiting_first(pair.probe), pair.b_kw))
        assert_a_finished(a)
        assert_pristine(b, pair)


def control(harness: EngineHarness, pair: Pair) -> None:
    """Each step (and A's top level), then the probe, in one fresh run: the probe must
    see it. Steps marked ``inert`` can take effect nowhere and are left out."""
    # Isolation: fresh is sloppy mode against writable built-ins: there the step lands.
    kw: dict[str, Any] = {**pair.a_kw, **pair.b_kw, "limits": CONTROL, "isolation": "fresh"}
    tries = [f"try {{ {s}\n}} catch (e) {{}}" for s in pair.steps
             if not s.startswith((INERT, RESIDUE))]
    unseen = []
    for attack in [pair.top] * bool(pair.top) + tries:
        result = run(harness, f"{attack}\n{pair.probe}", **kw)
        seen = (json.loads(result.body) if result.ok else result.error,
                [line.message for line in result.logs])
        if seen == (pair.pristine, list(pair.logs)):
            unseen.append(attack)
    assert not unseen, f"the probe does not see: {unseen}"


# ---- the walker, evaluated inside a job -------------------------------------------
# `iso` captures what it uses before anything else runs, and walks breadth first from
# every name a job sees, the intrinsics only reachable through an instance (%TypedArray%,
# the iterator and generator prototypes...) and what the endowments make: each object
# once, named by its first path.
WALKER = r"""const iso = (() => {
  'use strict';
  const O = Object, G = globalThis, apply = Reflect.apply, ownKeys = Reflect.ownKeys;
  const { getOwnPropertyDescriptor: desc, getPrototypeOf: protoOf, isFrozen, isExtensible } = O;
  const toStr = O.prototype.toString, fnSource = Function.prototype.toString;
  const MapC = Map, mapGet = Map.prototype.get, mapSet = Map.prototype.set;
  const getterOf = (C, k) => desc(C.prototype, k).get;
  const mapSize = getterOf(Map, 'size'), setSize = getterOf(Set, 'size');
  const abLength = getterOf(ArrayBuffer, 'byteLength'), isView = ArrayBuffer.isView;
  const taBuffer = desc(Object.getPrototypeOf(Int8Array.prototype), 'buffer').get;
  const dvBuffer = getterOf(DataView, 'buffer');
  const U8 = Uint8Array, getTime = Date.prototype.getTime, StringC = String;
  const sortA = Array.prototype.sort, filterA = Array.prototype.filter, json = JSON.stringify;
  const imul = Math.imul, regTest = RegExp.prototype.test;
  const IDENT = /^[A-Za-z_$][\w$]*$/, INDEX = /^\d+$/;
  const isObj = (v) => (typeof v === 'object' && v !== null) || typeof v === 'function';
  const klass = (o) => { try { return apply(toStr, o, []); } catch (e) { return '?'; } };
  const keyText = (k) => typeof k === 'symbol' ? `[${StringC(k)}]`
    : apply(regTest, IDENT, [k]) ? `.${k}` : `[${json(k)}]`;
  const hash = (s) => {  // FNV-1a of the first 256 characters, and the length
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length && i < 256; i++) h = imul(h ^ s.charCodeAt(i), 0x01000193);
    return `${(h >>> 0).toString(36)}/${s.length}`;
  };
  const byText = (a, b) => {
    const x = StringC(a), y = StringC(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const keysOf = (o) => {
    let ks;
    try { ks = ownKeys(o); } catch (e) { return []; }
    // A typed array's elements are its bytes (hashed with its buffer), not keys.
    const notIndex = (k) => typeof k !== 'string' || !apply(regTest, INDEX, [k]);
    if (isView(o)) ks = apply(filterA, ks, [notIndex]);
    return apply(sortA, ks, [byText]);
  };
  function walk(roots, { skip = () => false, getters = false } = {}) {
    const paths = new MapC(), order = [];
    const add = (v, path) => {
      if (!isObj(v) || apply(mapGet, paths, [v]) !== undefined) return;
      apply(mapSet, paths, [v, path]); order[order.length] = [v, path];
    };
    for (let i = 0; i < roots.length; i++) add(roots[i][1], roots[i][0]);
    for (let i = 0; i < order.length; i++) {
      const [o, path] = order[i];
      const ks = keysOf(o);
      for (let j = 0; j < ks.length; j++) {
        const k = ks[j];
        if (skip(o, k)) continue;
        let d;
        try { d = desc(o, k); } catch (e) { continue; }
        if (!d) continue;
        const at = path + keyText(k);
        if ('value' in d) { add(d.value, at); continue; }
        add(d.get, `${at}<get>`); add(d.set, `${at}<set>`);
        if (getters && d.get) {
          // A getter that answers the same object twice shows state it keeps.
          try { const x = apply(d.get, o, []); if (x === apply(d.get, o, [])) add(x, `${at}()`); }
          catch (e) { /* a getter for instances only */ }
        }
      }
      try { add(protoOf(o), `${path}.__proto__`); } catch (e) { /* a revoked proxy */ }
      if (isView(o)) {  // its bytes' buffer is behind a getter of the prototype
        let buffer;
        try { buffer = apply(taBuffer, o, []); } catch (e) { buffer = apply(dvBuffer, o, []); }
        add(buffer, `${path}.buffer`);
      }
    }
    return { paths, order };
  }
  const P = protoOf;
  const hidden = () => {
    const seg = new Intl.Segmenter().segment('a');
    return [
      ['%TypedArray%', P(Int8Array)], ['%GeneratorFunction%', P(function* () {})],
      ['%AsyncFunction%', P(async function () {})],
      ['%AsyncGeneratorFunction%', P(async function* () {})],
      ['%ArrayIterator%', P([][Symbol.iterator]())], ['%MapIterator%', P(new Map().entries())],
      ['%SetIterator%', P(new Set().values())], ['%StringIterator%', P(''[Symbol.iterator]())],
      ['%RegExpStringIterator%', P(/a/g[Symbol.matchAll](''))],
      ['%IteratorHelper%', P([].values().map((x) => x))],
      ['%WrapForValidIterator%', P(Iterator.from({ next() { return { done: true }; } }))],
      // (a generator function's own prototype is new with each function: these are shared)
      ['%AsyncGeneratorPrototype%', P(P((async function* () {})()))],
      ['%GeneratorPrototype%', P(P((function* () {})()))],
      ['%Segments%', P(seg)], ['%SegmentIterator%', P(seg[Symbol.iterator]())],
      ['%ThrowTypeError%', desc(Function.prototype, 'caller')?.get],
      ['%StrictArguments%', P((function () { 'use strict'; return arguments; })())],
      ['%PromisePrototype%', P((async () => {})())],
    ];
  };
  const made = () => {  // instances of the endowments: their prototypes may be hidden
    const out = [];
    const make = (path, f) => { try { out[out.length] = [path, f()]; } catch (e) { /* absent */ } };
    make('response.json(1)', () => response.json(1));
    make('response.redirect("/")', () => response.redirect('/'));
    make('Buffer.from("b")', () => Buffer.from('b'));
    make('new URL("https://h/?q=1")', () => new URL('https://h/?q=1'));
    make('new AbortController()', () => new AbortController());
    make('AbortSignal.abort()', () => AbortSignal.abort());
    make('new Event("e")', () => new Event('e'));
    make('new EventTarget()', () => new EventTarget());
    make('new DOMException("m")', () => new DOMException('m'));
    make('new TextEncoder()', () => new TextEncoder());
    make('new TextDecoder()', () => new TextDecoder());
    make('crypto.subtle', () => crypto.subtle);
    return out;
  };
  return { walk, hidden, made, hash, klass, keysOf, keyText, isObj, desc, protoOf, isFrozen,
    isExtensible, fnSource, mapSize, setSize, abLength, getTime, U8, apply, mapGet, mapSet, isView,
    G };
})();
"""


def names_source(skip: tuple[str, ...] = PER_RUN_VALUES) -> str:
    """JS: [name, value] for every name a job sees (read as a free variable)."""
    pairs = [f"['{n}', typeof {n} === 'undefined' ? undefined : {n}]"
             for n in JOB_NAMES if n not in skip]
    return "[" + ",\n".join(pairs) + "]"


# Each object as text: its class, prototype, extensibility, function source, a
# collection's size, a buffer's bytes, and every own key with its descriptor (values
# as a primitive or as the path of the object they are).
_WORLD = r"""const { walk, hidden, made, hash, klass, keysOf, keyText, isObj, desc, protoOf,
  isFrozen, isExtensible, fnSource, mapSize, setSize, abLength, getTime, U8, apply, mapGet,
  G } = iso;
const perRun = PER_RUN;
const roots = [...NAMES, ['globalThis', G], ...hidden(), ...made(), ...MODULES];
const skip = (o, k) => o === G && perRun.includes(k);
const { paths, order } = walk(roots, { skip });
const ref = (v) => isObj(v) ? `@${apply(mapGet, paths, [v])}`
  : typeof v === 'string' ? `'${v.slice(0, 80)}'` : `${typeof v}:${String(v)}`;
const bytesOf = (o) => {
  const n = apply(abLength, o, []), b = new U8(o);
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(b[i]);
  return `bytes ${n} ${hash(s)}`;
};
const out = {};
for (let i = 0; i < order.length; i++) {
  const [o, path] = order[i];
  const c = klass(o);
  const e = [c, `proto ${ref(protoOf(o))}`,
    (isExtensible(o) ? 'extensible' : '') + (isFrozen(o) ? ' frozen' : '')];
  if (typeof o === 'function') {
    try { e.push(`src ${hash(apply(fnSource, o, []))}`); } catch (x) { e.push('src ?'); }
  }
  try {
    if (c === '[object Map]') e.push(`size ${apply(mapSize, o, [])}`);
    if (c === '[object Set]') e.push(`size ${apply(setSize, o, [])}`);
    if (c === '[object Date]') e.push(`time ${apply(getTime, o, [])}`);
    if (c === '[object ArrayBuffer]') e.push(bytesOf(o));
  } catch (x) { /* it only claims to be one */ }
  const ks = keysOf(o);
  for (let j = 0; j < ks.length; j++) {
    if (skip(o, ks[j])) continue;
    const d = desc(o, ks[j]);
    const flags = (d.writable ? 'w' : '') + (d.enumerable ? 'e' : '') + (d.configurable ? 'c' : '');
    e.push('value' in d ? `${keyText(ks[j])} ${flags} ${ref(d.value)}`
      : `${keyText(ks[j])} ${flags} get ${ref(d.get)} set ${ref(d.set)}`);
  }
  out[path] = e;
}
return out;"""

MODULE_ROOTS = ("[['require(date-fns)', require('date-fns')],"
                " ['require(pdf-lib)', require('pdf-lib')]]")


def world_source(modules: bool) -> str:
    return WALKER + (_WORLD.replace("PER_RUN", json.dumps(list(PER_RUN_VALUES)))
                     .replace("...NAMES", "..." + names_source())
                     .replace("...MODULES", "..." + (MODULE_ROOTS if modules else "[]")))


def world(harness: EngineHarness, modules: bool = False) -> dict[str, Any]:
    got: dict[str, Any] = answer(run(harness, world_source(modules)))
    return got


def assert_world(harness: EngineHarness, pristine: dict[str, Any], modules: bool) -> None:
    check_world(world(harness, modules), pristine, modules)


def check_world(seen: dict[str, Any], pristine: dict[str, Any], modules: bool = True) -> None:
    """Everything a run reached is as in ``pristine`` (a world taken with the modules)."""
    base = {k: v for k, v in pristine.items() if modules or not k.startswith("require(")}
    if seen != base:
        changed = sorted(k for k in seen.keys() | base.keys() if seen.get(k) != base.get(k))
        detail = [(k, sorted(set(seen.get(k) or []) ^ set(base.get(k) or []))) for k in changed[:8]]
        raise AssertionError(f"{len(changed)} objects differ from a pristine run: {detail}")
