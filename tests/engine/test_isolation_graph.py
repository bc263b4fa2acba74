"""The isolation battery, part two (issue 18): the shared endowments and the approved
modules, attacked by job A and probed by job B as in test_isolation_battery.py; then
the whole graph a job can reach, walked from inside a job:

- shared objects (reached from a name every run shares, an intrinsic, a module) must
  be frozen, and no mutable collection, buffer or date may hang off them;
- identity across runs, which no single run can see: run A tags everything mutable it
  reaches (a property keyed by a registered symbol, an entry in a Map or Set, bytes in
  a buffer, a date's time), run B on the same worker walks again and must find no tag.
  A run's own objects (its globalThis, params, console...) are fresh in B, so a tag B
  finds is state the two runs share, whatever its path.

Under the warm engine A's writes to shared objects throw; ``test_a_write_to_a_shared_
object_fails_in_the_writer`` holds it to that (today's engine lets them succeed)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from hub.engine.engine import RunResult
from tests.engine import isolation as iso
from tests.engine.conftest import EngineHarness, workers
from tests.engine.isolation import WALKER, OneOf, Pair, inert, residue

# Today's engine installs the web APIs as shells filled on first use, which would undo a
# write made before it: a step uses the API once first.
BUF, URL, SIG = "Buffer.alloc(1); ", "new URL('https://x/'); ", "AbortSignal.abort(); "
DFNS = "require('date-fns')"
PDF = "require('pdf-lib')"
CASES: dict[str, Pair] = {
    "buffer": Pair((
        "Buffer.prototype.toString = () => 'LEAK';", "Buffer.from = () => 'LEAK';",
        BUF + "Buffer.alloc = () => 'LEAK';", "Buffer.prototype.leak = 'LEAK';",
        "Buffer.prototype.write = () => 0;",
        BUF + "Object.setPrototypeOf(Buffer.prototype, Object.prototype);",
        BUF + "Buffer.isBuffer = () => false;", BUF + "Buffer.concat = () => 'LEAK';",
        "Buffer.leak = 'LEAK';", BUF + "Buffer.byteLength = () => 666;",
        BUF + "Buffer.compare = () => 666;", "Buffer.prototype.equals = () => true;",
        residue("Buffer.allocUnsafe(4096).fill('LEAK');"
                " Buffer.allocUnsafeSlow(4096).fill('LEAK');"),
    ), """const b = Buffer.from('héllo');
const u = Buffer.allocUnsafe(4096), s = Buffer.allocUnsafeSlow(4096);
return [b.toString(), b.toString('base64'), b.toString('hex'), b.length, b.leak,
  Buffer.isBuffer(b), Buffer.concat([Buffer.from('a'), Buffer.from('b')]).toString(),
  Buffer.alloc(3).toString('hex'), u.toString('latin1').includes('LEAK'),
  s.toString('latin1').includes('LEAK'), b instanceof Uint8Array, Buffer.byteLength('é'),
  Buffer.compare(Buffer.from('a'), Buffer.from('b')), Buffer.leak, b.write('J'), b.toString(),
  b.equals(Buffer.from('x'))];""",
        ["héllo", "aMOpbGxv", "68c3a96c6c6f", 6, None, True, "ab", "000000", False, False, True,
         2, -1, None, 1, "Jéllo", False]),
    "url": Pair((
        "URL.prototype.toString = () => 'LEAK';",
        "Object.defineProperty(URL.prototype, 'href', { get: () => 'LEAK' });",
        URL + "URL.canParse = () => false;", "URLSearchParams.prototype.get = () => 'LEAK';",
        "URLSearchParams.prototype.append = () => {};", "URL.leak = 'LEAK';",
        "URL.prototype.leak = 'LEAK';", URL + "URL.parse = () => 'LEAK';",
        "URLSearchParams.prototype[Symbol.iterator] = function* () { yield ['LEAK', '1']; };",
        "Object.defineProperty(URL.prototype, 'searchParams',"
        " { get: () => new URLSearchParams('q=LEAK') });",
    ), """const u = new URL('https://user@Example.com:8080/a/../b?q=1&q=2#h');
const p = new URLSearchParams('a=1&b=2');
p.append('c', '3');
return [u.href, String(u), u.host, u.pathname, u.searchParams.getAll('q'), URL.canParse('nope'),
  URL.canParse('https://x'), p.get('b'), p.toString(), [...p], u.leak, URL.leak,
  new URL('/x', 'https://h.example/y').href,
  typeof URL.parse === 'function' ? URL.parse('https://p/').href : 'none'];""",
        ["https://user@example.com:8080/b?q=1&q=2#h", "https://user@example.com:8080/b?q=1&q=2#h",
         "example.com:8080", "/b", ["1", "2"], False, True, "2", "a=1&b=2&c=3",
         [["a", "1"], ["b", "2"], ["c", "3"]], None, None, "https://h.example/x",
         OneOf("https://p/", "none")]),
    "text-codecs-base64-clone": Pair((
        "TextEncoder.prototype.encode = () => new Uint8Array([6]);",
        "TextDecoder.prototype.decode = () => 'LEAK';",
        "Object.defineProperty(TextDecoder.prototype, 'encoding', { get: () => 'LEAK' });",
        "TextEncoder.prototype.leak = 'LEAK';",
        "TextEncoder.prototype.encodeInto = () => ({ read: 666 });",
        "atob.leak = 'LEAK';", "btoa.leak = 'LEAK';", "structuredClone.leak = 'LEAK';",
        "globalThis.atob = () => 'LEAK';", "globalThis.structuredClone = () => 'LEAK';",
        residue("new TextDecoder().decode(new Uint8Array([0xE2, 0x82]), { stream: true });"),
    ), """const te = new TextEncoder(), td = new TextDecoder(), into = new Uint8Array(4);
return [Array.from(te.encode('é')), td.decode(new Uint8Array([0xAC])), td.encoding, te.leak,
  atob('aGk='), btoa('hi'), atob.leak, btoa.leak,
  structuredClone({ a: [1, new Map([[1, 2]])] }).a[1].get(1), structuredClone.leak,
  new TextDecoder().decode(new Uint8Array([0xE2, 0x82, 0xAC])), te.encodeInto('ab', into).read,
  globalThis.atob('aGk='), globalThis.structuredClone(5)];""",
        [[195, 169], "\ufffd", "utf-8", None, "hi", "aGk=", None, None, 2, None, "€", 2, "hi", 5]),
    "events-abort-domexception": Pair((
        "Event.prototype.preventDefault = () => {};",
        "EventTarget.prototype.addEventListener = () => {};",
        "EventTarget.prototype.dispatchEvent = () => false;",
        "AbortController.prototype.abort = () => {};",
        SIG + "AbortSignal.abort = () => 'LEAK';", SIG + "AbortSignal.timeout = () => 'LEAK';",
        SIG + "AbortSignal.any = () => 'LEAK';",
        "Object.defineProperty(AbortSignal.prototype, 'aborted', { get: () => true });",
        "Object.defineProperty(DOMException.prototype, 'name', { get: () => 'LEAK' });",
        "Event.leak = 'LEAK';", "DOMException.leak = 'LEAK';", inert("DOMException.ABORT_ERR = 0;"),
    ), """const t = new EventTarget(), seen = [];
t.addEventListener('ping', (e) => { seen.push(e.type); e.preventDefault(); });
const ev = new Event('ping', { cancelable: true }), r = t.dispatchEvent(ev);
const c = new AbortController(); c.abort();
const s = AbortSignal.timeout(5);
await Promise.race([new Promise((res) => s.addEventListener('abort', res)),
  new Promise((res) => setTimeout(res, 60))]);
const d = new DOMException('m', 'AbortError');
return [seen, r, ev.defaultPrevented, c.signal.aborted, AbortSignal.abort().aborted, s.aborted,
  s.reason.name, d.name, d.message, d.code, DOMException.ABORT_ERR, Event.leak, DOMException.leak,
  new AbortController().signal.aborted,
  typeof AbortSignal.any === 'function' ? AbortSignal.any([AbortSignal.abort()]).aborted
    : 'none'];""",
        [["ping"], False, True, True, True, True, "TimeoutError", "AbortError", "m", 20,
         OneOf(20, None), None, None, False, OneOf(True, "none")]),
    # The run's own functions and objects: A's marks on them stay A's.
    "run-functions": Pair((
        "setTimeout.leak = 'LEAK';", "queueMicrotask.leak = 'LEAK';", "clearTimeout.leak = 'LEAK';",
        "setInterval.leak = 'LEAK';", "sign.leak = 'LEAK';", "verify.leak = 'LEAK';",
        "require.leak = 'LEAK';",
        "breakpoint.leak = 'LEAK';", inert("db.leak = 'LEAK';"), "http.leak = 'LEAK';",
        "globalThis.setTimeout = () => 'LEAK';", "globalThis.queueMicrotask = () => 'LEAK';",
        inert("secrets.leak = 'LEAK';"), inert("limits.runtimeMs = 1;"),
        inert("secrets.get = () => 'LEAK';"),
    ), """let got;
try { got = secrets.get('nope'); } catch (e) { got = e.name; }
return [setTimeout.leak, queueMicrotask.leak, clearTimeout.leak, setInterval.leak, sign.leak,
  verify.leak,
  require.leak, breakpoint.leak, db.leak, http.leak, typeof globalThis.setTimeout(() => {}, 0),
  typeof globalThis.queueMicrotask(() => {}), secrets.leak, limits.runtimeMs, got];""",
        [None] * 10 + ["number", "undefined", None, 2000, "Error"]),
    # response, crypto and console are frozen in every run today: A can only replace the name.
    "response": Pair((
        inert("response.json = () => 'LEAK';"), inert("response.leak = 'LEAK';"),
        inert("Object.setPrototypeOf(response, { leakP: 'LEAK' });"),
        "Object.getPrototypeOf(response.json(1)).leak = 'LEAK';",
        "globalThis.response = { json: () => 'LEAK' };",
    ), """return response.json({ keys: Object.keys(response).sort(), leak: response.leak ?? null,
  leakP: response.leakP ?? null, made: response.json(1).leak ?? null,
  text: typeof response.text('x'), redirect: typeof response.redirect('/'),
  global: typeof globalThis.response?.json }, 201);""",
        {"keys": ["csv", "file", "html", "json", "pdf", "raw", "redirect", "text"], "leak": None,
         "leakP": None, "made": None, "text": "object", "redirect": "object",
         "global": OneOf("function", "undefined")}, status=201),
    "crypto": Pair((
        inert("crypto.hash = () => 'LEAK';"), inert("crypto.randomUUID = () => 'LEAK';"),
        inert("crypto.getRandomValues = (a) => a.fill(7);"), inert("crypto.leak = 'LEAK';"),
        inert("Object.setPrototypeOf(crypto, { leakP: 'LEAK' });"),
        "globalThis.crypto = { hash: () => 'LEAK' };",
    ), """const r = crypto.getRandomValues(new Uint8Array(16));
return [crypto.hash('sha256', 'abc'), crypto.hmac('sha256', 'k', 'd', 'base64'),
  /^[0-9a-f-]{36}$/.test(crypto.randomUUID()), r.some((x) => x !== 7),
  crypto.timingSafeEqual('a', 'b'), crypto.leak, crypto.leakP, Object.keys(crypto).sort(),
  typeof globalThis.crypto?.hash];""",
        ["ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
         "5+ohw7y2Ok2jrXhQMWjTa9ygvmIjgupgoQj61OSWZnk=", True, True, False, None, None,
         ["getRandomValues", "hash", "hmac", "randomUUID", "timingSafeEqual"],
         OneOf("function", "undefined")]),
    "console": Pair((
        inert("console.log = () => {};"), inert("console.leak = 'LEAK';"),
        inert("Object.setPrototypeOf(console, { leakP: 'LEAK' });"), "console.log.leak = 'LEAK';",
        "globalThis.console = { log() {}, info() {}, warn() {}, error() {}, debug() {} };",
        "console.log('A line');",
    ), """console.log('b-log', 1); console.info('b-info'); console.warn({ w: 1 });
console.error('b-err'); console.debug('b-dbg');
return [console.leak, console.leakP, console.log.leak, typeof console.log,
  Object.keys(console).sort()];""",
        [None, None, None, "function", ["debug", "error", "info", "log", "trace", "warn"]],
        logs=("b-log 1", "b-info", '{"w":1}', "b-err", "b-dbg")),
    # Module state harden() cannot see: date-fns keeps its default options in a closure.
    "date-fns": Pair((
        f"{DFNS}.setDefaultOptions({{ weekStartsOn: 1, firstWeekContainsDate: 4 }});",
        f"{DFNS}.setDefaultOptions({{ locale: {{ code: 'LEAK', formatDistance: () => 'LEAK' }}"
        " });",
        f"{DFNS}.format = () => 'LEAK';",
        f"Object.defineProperty({DFNS}, 'addDays', {{ value: () => 'LEAK' }});",
        f"{DFNS}.leak = 'LEAK';", f"Object.setPrototypeOf({DFNS}, {{ leakP: 'LEAK' }});",
        inert(f"{DFNS}.getDefaultOptions().weekStartsOn = 1;"),  # a copy
    ), """const d = require('date-fns'), jan4 = new Date(2026, 0, 4);
return [d.getDefaultOptions(), d.format(d.startOfWeek(jan4), 'yyyy-MM-dd EEEE'), d.getWeek(jan4),
  d.format(d.addDays(jan4, 1), 'yyyy-MM-dd'), d.leak, d.leakP,
  d.formatDistance(new Date(2026, 0, 1), new Date(2026, 0, 3)), d.format(jan4, 'EEEE')];""",
        [{}, "2026-01-04 Sunday", 2, "2026-01-05", None, None, "2 days", "Sunday"]),
    # pdf-lib interns PDFName and PDFRef objects in module-level Maps: every run gets the
    # same instances, which harden() never reached.
    "pdf-lib": Pair((
        f"{PDF}.PDFDocument.prototype.save = async () => new Uint8Array([76]);",
        f"{PDF}.PDFDocument.create = async () => 'LEAK';",
        f"{PDF}.StandardFonts.Helvetica = 'Courier';", f"{PDF}.leak = 'LEAK';",
        f"{PDF}.PDFName.of('Type').encodedName = '/LEAK';",
        f"{PDF}.PDFName.of('Page').encodedName = '/LEAK';",
        f"{PDF}.PDFName.of('WebjobsMailbox').mailbox = 'LEAK';",
        f"{PDF}.PDFRef.of(1, 0).tag = 'LEAK';", f"{PDF}.PDFDocument.prototype.leak = 'LEAK';",
        f"{PDF}.rgb = () => 'LEAK';",
    ), """const P = require('pdf-lib'), pdf = await P.PDFDocument.create();
const font = await pdf.embedFont(P.StandardFonts.Helvetica);
pdf.addPage([200, 200]).drawText('B text', { x: 10, y: 10, size: 12, font, color: P.rgb(0, 0, 0) });
const bytes = await pdf.save({ useObjectStreams: false });
const text = Array.from(bytes, (c) => String.fromCharCode(c)).join('');
return [text.startsWith('%PDF-'), text.includes('LEAK'), text.includes('/Type /Page'),
  text.includes('/BaseFont /Helvetica'), P.StandardFonts.Helvetica, P.leak,
  P.PDFName.of('WebjobsMailbox').mailbox, P.PDFRef.of(1, 0).tag, P.PDFName.of('Type').encodedName,
  P.PDFName.of('Page').encodedName, typeof pdf.leak];""",
        [True, False, True, True, "Helvetica", None, None, "1 0 R", "/Type", "/Page", "undefined"]),
}


@pytest.fixture(scope="module")
def on() -> Iterator[iso.Bench]:
    with iso.bench() as b:
        yield b


@pytest.fixture(scope="module")
def fresh() -> Iterator[EngineHarness]:
    with workers(1) as harness:
        yield harness


@pytest.mark.parametrize("name", CASES)
def test_b_sees_a_pristine_world(on: iso.Bench, name: str) -> None:
    iso.battery(on, CASES[name], rounds=5, side_by_side=2)


@pytest.mark.parametrize("name", CASES)
def test_the_probe_sees_each_step(fresh: EngineHarness, name: str) -> None:
    iso.control(fresh, CASES[name])


# ---- a module named by one run only
NAMES_BOTH = """const d = require('date-fns'), p = require('pdf-lib');
globalThis.stashed = d;
try { d.leak = 'LEAK'; } catch (e) { /* frozen: the warm engine */ }
return [typeof d.format, typeof p.PDFDocument];"""
NAMES_NEITHER = """const out = [];
for (const name of [['date', 'fns'].join('-'), ['pdf', 'lib'].join('-')]) {
  try { out.push(['loaded', typeof require(name).leak]); }
  catch (e) { out.push([e.code, e.message.includes('approved but not installed')]); }
}
return [out, typeof dateFns, typeof PDFLib, typeof globalThis.stashed];"""


def test_a_module_named_by_a_is_not_given_to_b(on: iso.Bench) -> None:
    for _ in range(4):
        assert iso.answer(iso.run(on.solo, NAMES_BOTH)) == ["function", "function"]
        assert iso.answer(iso.run(on.solo, NAMES_NEITHER)) == [
            [["JOB-002", True], ["JOB-002", True]], "undefined", "undefined", "undefined"]
    for _ in range(2):
        a, b = iso.together(on.duo, (NAMES_BOTH, {}), (NAMES_NEITHER, {}))
        assert iso.answer(a) == ["function", "function"]
        assert iso.answer(b)[0] == [["JOB-002", True], ["JOB-002", True]]


# ---- the whole graph, walked from inside a job ----------------------------------
# What is the run's own by design (issue 18: "the run's own globals"), besides the run's
# globalThis and the instances the walker makes: these may be mutable.
RUN_OWN = ("setTimeout", "setInterval", "clearTimeout", "clearInterval", "queueMicrotask",
           "Promise", "params", "request", "userID", "isAuthenticated", "limits", "console",
           "response", "sign", "verify", "breakpoint", "require", "db", "http", "crypto", "secrets")
_ROOTS = """const { walk, hidden, made, klass, isFrozen, isView, apply, desc, G } = iso;
const runOwn = RUN_OWN;
const named = NAMES;
const instances = made();
const roots = [...named.filter(([n]) => !runOwn.includes(n)), ...hidden(),
  ['require(date-fns)', require('date-fns')], ['require(pdf-lib)', require('pdf-lib')],
  ...named.filter(([n]) => runOwn.includes(n)), ['globalThis', G], ...instances,
  // The detector's own control: one of each kind it must report, and two it must not.
  ['decoy', Object.freeze({ map: new Map(), set: new Set(), weakMap: new WeakMap(),
    weakSet: new WeakSet(), date: new Date(), buffer: new ArrayBuffer(1),
    view: new DataView(new ArrayBuffer(1)), bytes: new Uint8Array(1),
    empty: Object.freeze(new Uint8Array(0)), plain: Object.freeze({}) })]];
const ownRoot = (path) => !path.startsWith('require(') && (runOwn.includes(path.split(/[.[(<]/)[0])
  || path.startsWith('globalThis') || instances.some(([p]) => path.startsWith(p)));
const { order } = walk(roots, { getters: true });
// Brand checks (a class's prototype only claims its toStringTag): each throws for others.
const brand = (C, k, arg) => { const d = desc(C.prototype, k); const f = d.get || d.value;
  return (o) => { try { apply(f, o, arg); return true; } catch (e) { return false; } }; };
const MUTABLE = [['Map', brand(Map, 'size', [])], ['Set', brand(Set, 'size', [])],
  ['WeakMap', brand(WeakMap, 'has', [{}])], ['WeakSet', brand(WeakSet, 'has', [{}])],
  ['Date', brand(Date, 'getTime', [])], ['ArrayBuffer', brand(ArrayBuffer, 'byteLength', [])],
  ['FinalizationRegistry', typeof FinalizationRegistry === 'function'
    ? brand(FinalizationRegistry, 'unregister', [{}]) : () => false]];
const tags = ['[object Map]', '[object Set]', '[object WeakMap]', '[object WeakSet]',
  '[object Date]', '[object ArrayBuffer]', '[object FinalizationRegistry]'];
const mutableKind = (o) => {  // an ArrayBuffer even when empty: transfer() detaches it
  if (isView(o)) return o.byteLength > 0 ? 'bytes' : '';
  const c = klass(o);
  if (c === '[object SharedArrayBuffer]') return 'SharedArrayBuffer';
  if (!tags.includes(c)) return '';
  const hit = MUTABLE.find(([, is]) => is(o));
  return hit ? hit[0] : '';
};
""".replace("RUN_OWN", json.dumps(RUN_OWN)).replace("NAMES", iso.names_source(skip=()))

# Every reachable object that is not frozen or holds mutable state, with why.
STATIC = WALKER + _ROOTS + """const shared = [], decoy = [];
let own = 0;
for (const [o, path] of order) {
  const why = [];
  if (!isFrozen(o)) why.push('not frozen');
  const kind = mutableKind(o);
  if (kind) why.push(kind);
  if (!why.length) continue;
  if (path.startsWith('decoy.')) decoy.push(`${path.slice(6)}: ${kind}`);
  else if (ownRoot(path)) own++;
  else shared.push(`${path}: ${why.join(', ')}`);
}
return { shared, own, decoy, reached: order.length };"""


def test_nothing_shared_is_mutable(on: iso.Bench) -> None:
    got = iso.answer(iso.run(on.solo, STATIC))
    assert got["reached"] > 3000 and got["own"] > 0  # the walk went everywhere
    assert sorted(got["decoy"]) == [  # the detector sees each kind; the frozen empty array and
        # the frozen object pass
        "buffer: ArrayBuffer", "bytes.buffer: ArrayBuffer", "bytes: bytes", "date: Date",
        "empty.buffer: ArrayBuffer", "map: Map", "set: Set", "view.buffer: ArrayBuffer",
        "view: bytes", "weakMap: WeakMap", "weakSet: WeakSet"]
    shared = got["shared"]
    assert shared == [], f"{len(shared)} shared objects can change: {shared[:40]}"


# Find the tags an earlier run left, then tag everything mutable this run reaches (a
# property under a registered symbol, a Map or Set entry, a WeakMap/WeakSet entry for
# Object.prototype, a date's time, a buffer's first bytes), then find its own tags.
TAGS = WALKER + _ROOTS + """const TAG = Symbol.for('webjobs.isolation.tag');
const TIME = 86400000 * 4321 + 4321;
const MARK = [0x57, 0x4a, 0x54, 0x41, 0x47, 0x21, 0x21, 0x21];
const P = (C, k) => C.prototype[k];
const bytesOf = (o) => {
  try { return isView(o) ? new Uint8Array(o.buffer, o.byteOffset, o.byteLength)
    : new Uint8Array(o); }
  catch (e) { return new Uint8Array(0); }
};
function find(order) {
  const found = [];
  for (const [o, path] of order) {
    const kind = mutableKind(o);
    let hit = null;
    try {
      const d = desc(o, TAG);
      if (d && 'value' in d) hit = String(d.value);
      const has = (C, key) => kind === C.name && apply(P(C, 'has'), o, [key]);
      if (has(Map, TAG)) hit = String(apply(P(Map, 'get'), o, [TAG]));
      if (has(Set, TAG)) hit = 'a Set entry';
      if (has(WeakMap, Object.prototype)) hit = 'a WeakMap entry';
      if (has(WeakSet, Object.prototype)) hit = 'a WeakSet entry';
      if (kind === 'Date' && apply(P(Date, 'getTime'), o, []) === TIME) hit = 'a date';
      const b = bytesOf(o);
      if (b.length >= 8 && MARK.every((x, i) => b[i] === x)) hit = 'bytes';
    } catch (e) { /* a proxy that refuses: it holds no tag either */ }
    if (hit !== null) found.push(`${path} <- ${hit}`);
  }
  return found;
}
function tag(order) {
  let tagged = 0;
  for (const [o, path] of order) {
    const kind = mutableKind(o);
    let did = false;
    try { did = Reflect.defineProperty(o, TAG, { value: path, configurable: true }); }
    catch (e) { /* a proxy */ }
    try {
      if (kind === 'Map') apply(P(Map, 'set'), o, [TAG, path]);
      if (kind === 'Set') apply(P(Set, 'add'), o, [TAG]);
      if (kind === 'WeakMap') apply(P(WeakMap, 'set'), o, [Object.prototype, path]);
      if (kind === 'WeakSet') apply(P(WeakSet, 'add'), o, [Object.prototype]);
      if (kind === 'Date') apply(P(Date, 'setTime'), o, [TIME]);
      const b = bytesOf(o);
      if (b.length >= 8) b.set(MARK);
      did = did || kind !== '' && (kind !== 'bytes' && kind !== 'ArrayBuffer' || b.length >= 8);
    } catch (e) { /* frozen, detached... */ }
    if (did) tagged++;
  }
  return tagged;
}
const before = find(order);
const tagged = tag(order);
return { before, tagged, after: find(walk(roots, { getters: true }).order).length };"""


def assert_untagged(result: RunResult) -> None:
    got = iso.answer(result)
    assert got["before"] == [], f"found what an earlier run tagged: {got['before'][:20]}"
    assert got["tagged"] > 0 and got["after"] >= got["tagged"]  # the finder sees tags


# A tags everything it reaches, then waits in the isolate while B walks beside it.
_HOLD = "\nawait new Promise((r) => setTimeout(r, 40));"
TAGS_HOLDING = TAGS.replace("const tagged = tag(order);", "const tagged = tag(order);" + _HOLD)


def test_no_run_finds_what_an_earlier_run_tagged(on: iso.Bench) -> None:
    assert TAGS_HOLDING != TAGS
    for _ in range(4):
        assert_untagged(iso.run(on.solo, TAGS))
    for _ in range(3):
        for result in iso.together(on.duo, (TAGS, {}), (TAGS, {})):
            assert_untagged(result)
    for _ in range(3):  # interleaved in one isolate: B walks while A, tagged, waits
        late_walk = iso.waiting_first(TAGS, 20)
        for result in iso.together(on.solo, (TAGS_HOLDING, {}), (late_walk, {})):
            assert_untagged(result)


# ---- what A itself sees under the warm engine (today's engine lets these writes land) ----
# Objects every run shares: a new property on each, and a method replaced on some.
SHARED = (
    "Object.prototype", "Object", "Function.prototype", "Array.prototype", "String.prototype",
    "Number.prototype", "Boolean.prototype", "Symbol.prototype", "BigInt.prototype",
    "RegExp.prototype", "Date", "Date.prototype", "Map.prototype", "Set.prototype",
    "WeakMap.prototype", "WeakSet.prototype", "Error.prototype", "TypeError", "JSON", "Math",
    "Reflect", "Object.getPrototypeOf(Uint8Array.prototype)", "ArrayBuffer.prototype",
    "DataView.prototype", "Iterator.prototype", "Object.getPrototypeOf([].values())",
    "Object.getPrototypeOf(function* () {}).prototype", "Intl", "Intl.DateTimeFormat.prototype",
    "Buffer", "Buffer.prototype", "URL.prototype", "URLSearchParams.prototype",
    "TextEncoder.prototype", "TextDecoder.prototype", "atob", "btoa", "structuredClone",
    "Event.prototype", "EventTarget.prototype", "AbortController.prototype", "AbortSignal",
    "DOMException.prototype", "require('date-fns')", "require('pdf-lib').PDFDocument.prototype",
    "require('pdf-lib').StandardFonts",
)
REPLACED = ("Array.prototype.push", "String.prototype.split", "RegExp.prototype.exec", "Date.now",
            "Map.prototype.get", "JSON.parse", "Math.random", "Reflect.apply", "Buffer.from",
            "AbortSignal.timeout", "require('date-fns').format",
            "require('pdf-lib').PDFDocument.prototype.save")
SHARED_WRITES = [f"{o}.polluted = 1" for o in SHARED] + [f"{f} = () => 0" for f in REPLACED]


def test_a_write_to_a_shared_object_fails_in_the_writer(on: iso.Bench) -> None:
    """Strict mode against frozen built-ins: the write throws, in A, for every object runs share."""
    body = "const out = {};\n" + "\n".join(
        f"try {{ {w}; out[{w!r}] = 'no error'; }} catch (e) {{ out[{w!r}] = e.name; }}"
        for w in SHARED_WRITES) + "\nreturn out;"
    got = iso.answer(iso.run(on.duo, body))
    assert {k: v for k, v in got.items() if v != "TypeError"} == {}


def test_an_uncaught_write_to_a_built_in_fails_the_run_naming_it(on: iso.Bench) -> None:
    result = iso.run(on.duo, "Object.prototype.polluted = 1;\nreturn 'wrote';")
    assert result.error is not None and result.error.code == "JOB-001", result.body
    assert "polluted" in result.error.message


def test_date_fns_default_options_throw_or_stay_in_their_run(on: iso.Bench) -> None:
    source = """const d = require('date-fns');
try { d.setDefaultOptions({ weekStartsOn: 1 }); } catch (e) { return ['threw', e.message]; }
return ['set', d.getDefaultOptions(), d.format(d.startOfWeek(new Date(2026, 0, 7)), 'EEEE')];"""
    for _ in range(3):  # B's side is CASES["date-fns"]
        got = iso.answer(iso.run(on.duo, source))
        assert got == ["set", {"weekStartsOn": 1}, "Monday"] or (
            got[0] == "threw" and "setDefaultOptions" in got[1]), got


def test_every_worker_reaches_a_pristine_world_after_the_battery(on: iso.Bench) -> None:
    """Last in the module: whatever the attacks above left anywhere shows here."""
    for seen in iso.together(on.duo, (iso.world_source(True), {}), (iso.world_source(True), {})):
        iso.check_world(iso.answer(seen), on.world)
    iso.assert_world(on.solo, on.world, modules=True)
