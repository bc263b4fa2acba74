"""The isolation battery (issue 18): the runs of one worker cannot see or steer each
other. Job A tries to leave state in the intrinsics, the globals and the run's own
functions; job B, run after A on the same worker again and again (and beside A on a
second worker), must answer exactly what a pristine run answers, log exactly its own
lines, and reach a world (every object, key, descriptor, prototype and function source
it can get to) equal to the one before A. ``test_the_probe_sees_each_step``
proves each probe would catch its step had the step landed. Under the warm engine A's
writes to shared objects throw: only B is asserted here (A: test_isolation_graph.py)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.engine import RunResult
from tests.engine import isolation as iso
from tests.engine.conftest import EngineHarness, workers
from tests.engine.isolation import OneOf, Pair, inert, residue

# Each value is (A's steps, B's probe, B's answer): the marker is always 'LEAK'.
CASES: dict[str, Pair] = {
    "object-prototype": Pair((
        "Object.prototype.leak = 'LEAK';",
        "Object.defineProperty(Object.prototype, 'leak2', { get() { return 'LEAK'; },"
        " configurable: true });",
        "Object.prototype.toString = () => 'LEAK';",
        "Object.prototype.hasOwnProperty = () => true;",
        "Object.prototype[Symbol.toPrimitive] = () => 'LEAK';",
        "Object.prototype.__defineGetter__('leak3', () => 'LEAK');",
        "delete Object.prototype.valueOf;",
        "Object.prototype.then = function (resolve) { resolve('LEAK'); };",
        inert("Object.setPrototypeOf(Object.prototype, { leak4: 'LEAK' });"),
    ), """const o = { a: 1 };
return [o.leak, o.leak2, o.leak3, o.leak4, String(o), o.hasOwnProperty('x'), `${o}`,
  typeof Object.prototype.valueOf, 'leak' in o, Object.keys(Object.prototype).length, await o];""",
        [None, None, None, None, "[object Object]", False, "[object Object]", "function", False, 0,
         {"a": 1}]),
    "object-statics": Pair((
        "Object.keys = () => ['LEAK'];", "Object.assign = () => 'LEAK';",
        "Object.freeze = (x) => x;", "Object.defineProperty(Object, 'leak', { value: 'LEAK' });",
        "Object.entries = null;", "Object.groupBy = null;",
        "Object.prototype.constructor = function Evil() {};",
        "Object.setPrototypeOf(Object, { leak5: 'LEAK' });",
    ), """return [Object.keys({ a: 1 }), Object.assign({}, { b: 2 }),
  Object.isFrozen(Object.freeze({})),
  Object.leak, Object.leak5, Object.entries({ c: 3 }), typeof Object.groupBy,
  ({}).constructor === Object, Object.getPrototypeOf(Object) === Function.prototype];""",
        [["a"], {"b": 2}, True, None, None, [["c", 3]], "function", True, True]),
    "array": Pair((
        "Array.prototype.push = function () { return 'LEAK'; };",
        "Array.prototype.map = () => ['LEAK'];",
        "Array.prototype[Symbol.iterator] = function* () { yield 'LEAK'; };",
        "Array.prototype.leak = 'LEAK';", "Array.from = () => ['LEAK'];",
        "Array.isArray = () => false;",
        "Object.defineProperty(Array, Symbol.species, { get: () => function () { return"
        " Object.assign([], { leak: 'LEAK' }); } });",
        "Array.prototype[Symbol.unscopables].leak = 'LEAK';", "Array.prototype.length = 5;",
        "Object.defineProperty(Array.prototype, '0', { get() { return 'LEAK'; } });",
        "Array.prototype.toSorted = () => 'LEAK';", "Array.of = () => 'LEAK';",
    ), """const a = [3, 1, 2]; a.push(4);
return [a, a.map((x) => x * 2), [...a], a.leak, Array.from('ab'), Array.isArray(a),
  a.filter(Boolean).leak, Array.prototype[Symbol.unscopables].leak,
  Array.prototype.length, [, 1][0], a.toSorted(), Array.of(7)];""",
        [[3, 1, 2, 4], [6, 2, 4, 8], [3, 1, 2, 4], None, ["a", "b"], True, None, None, 0, None,
         [1, 2, 3, 4], [7]]),
    "function": Pair((
        "Function.prototype.call = function () { return 'LEAK'; };",
        "Function.prototype.apply = function () { return 'LEAK'; };",
        "Function.prototype.bind = function () { return () => 'LEAK'; };",
        "Function.prototype.toString = () => 'LEAK';", "Function.prototype.leak = 'LEAK';",
        "Function.prototype.constructor = function Evil() {};",
        inert("Object.defineProperty(Function.prototype, Symbol.hasInstance, { value: () => true"
              " });"),
    ), """function f(a, b) { return [this && this.k, a, b]; }
return [f.call({ k: 1 }, 2, 3), f.apply({ k: 4 }, [5, 6]), f.bind({ k: 7 }, 8)(9),
  String(f).startsWith('function f('), (() => 0).leak, ({}) instanceof f,
  (function () {}).constructor.name, Object.getPrototypeOf(function () {}) === Function.prototype,
  Math.max.call(null, 1, 2)];""",
        [[1, 2, 3], [4, 5, 6], [7, 8, 9], True, None, False, "Function", True, 2]),
    "string": Pair((
        "String.prototype.split = () => ['LEAK'];", "String.prototype.replace = () => 'LEAK';",
        "String.prototype.trim = () => 'LEAK';", "String.prototype.leak = 'LEAK';",
        "String.fromCharCode = () => 'LEAK';", "String.raw = () => 'LEAK';",
        "String.prototype[Symbol.iterator] = function* () { yield 'LEAK'; };",
        "String.prototype.toUpperCase = () => 'LEAK';", "String.prototype.at = () => 'LEAK';",
        "String.prototype.replaceAll = () => 'LEAK';",
        inert("Object.defineProperty(String.prototype, 'length', { value: 99 });"),
    ), """const s = ' a,b ';
return [s.split(','), s.replace('a', 'x'), s.trim(), s.leak, String.fromCharCode(104, 105),
  String.raw`x${1}y`, [...'ab'], 'q'.toUpperCase(), ''.length, 'abc'.at(-1),
  'a-b'.replaceAll('-', '+')];""",
        [[" a", "b "], " x,b ", "a,b", None, "hi", "x1y", ["a", "b"], "Q", 0, "c", "a+b"]),
    "number-boolean-bigint-math": Pair((
        "Number.prototype.toFixed = () => 'LEAK';", "Number.parseFloat = () => 666;",
        "Number.prototype.toString = () => 'LEAK';", "Number.prototype.leak = 'LEAK';",
        "Boolean.prototype.toString = () => 'LEAK';", "Boolean.prototype.valueOf = () => 'LEAK';",
        "BigInt.prototype.toString = () => 'LEAK';", "Math.max = () => 666;",
        "Math.random = () => 0.5;", "Math.floor = () => 666;", "Math.leak = 'LEAK';",
        inert("Object.defineProperty(Math, 'PI', { value: 3 });"),
        inert("Number.MAX_SAFE_INTEGER = 1;"),
    ), """const r = [Math.random(), Math.random(), Math.random()];
return [(1.005).toFixed(1), Number.parseFloat('1.5'), (255).toString(16), (1).leak, true.toString(),
  true.valueOf(), (12n).toString(), Math.max(1, 2), Math.floor(2.7), Math.leak, Math.PI,
  Number.MAX_SAFE_INTEGER, r.every((x) => x >= 0 && x < 1 && x !== 0.5), new Set(r).size];""",
        ["1.0", 1.5, "ff", None, "true", True, "12", 2, 2, None, 3.141592653589793,
         9007199254740991, True, 3]),
    "symbol": Pair((
        "Symbol.prototype.toString = () => 'LEAK';",
        "Object.defineProperty(Symbol.prototype, 'description', { get() { return 'LEAK'; } });",
        "Symbol.prototype.leak = 'LEAK';", "Symbol.keyFor = () => 'LEAK';",
        "Symbol.for = () => Symbol('LEAK');", "Symbol.leak = 'LEAK';",
        inert("Symbol.iterator = 'LEAK';"),
    ), """const s = Symbol('mine');
return [s.toString(), s.description, s.leak, typeof Symbol.iterator,
  Symbol.keyFor(Symbol.for('b-key')),
  Symbol.for('b-key') === Symbol.for('b-key'), Symbol.leak, [][Symbol.iterator] === [].values];""",
        ["Symbol(mine)", "mine", None, "symbol", "b-key", True, None, True]),
    # A registered symbol is the same in every run of an isolate: nothing may be keyed by it.
    "symbol-for-registry": Pair((
        "Object.prototype[Symbol.for('webjobs.mailbox')] = 'LEAK';",
        "globalThis[Symbol.for('webjobs.mailbox')] = 'LEAK';",
        "Object.defineProperty(Symbol.prototype, Symbol.for('webjobs.mailbox'), { value: 'LEAK'"
        " });",
        "Array.prototype[Symbol.for('webjobs.mailbox')] = 'LEAK';",
        "Function.prototype[Symbol.for('webjobs.mailbox')] = 'LEAK';",
        "JSON[Symbol.for('webjobs.mailbox')] = 'LEAK';",
    ), """const s = Symbol.for('webjobs.mailbox');
return [({})[s], globalThis[s], s[s], [][s], (() => 0)[s], JSON[s], Symbol.keyFor(s)];""",
        [None, None, None, None, None, None, "webjobs.mailbox"]),
    "regexp": Pair((
        "RegExp.prototype.exec = () => ['LEAK'];", "RegExp.prototype.test = () => true;",
        "RegExp.prototype[Symbol.replace] = () => 'LEAK';",
        "RegExp.prototype[Symbol.split] = () => ['LEAK'];",
        "Object.defineProperty(RegExp.prototype, 'flags', { get: () => 'LEAK' });",
        "RegExp.prototype.leak = 'LEAK';", "RegExp.escape = () => 'LEAK';",
        "Object.defineProperty(RegExp, Symbol.species, { get() { return function () { return"
        " /LEAK/; }; } });",
        "RegExp.prototype[Symbol.matchAll] = function* () { yield ['LEAK']; };",
    ), """const r = /(b)(c)?/g;
return [r.exec('abc')?.slice(), /x/.test('y'), 'a-b'.replace(/-/, '+'), 'a1b2'.split(/\\d/),
  /q/gi.flags, r.leak, [...'a1b22'.matchAll(/\\d+/g)].map((m) => m[0]), 'xAx'.search(/A/),
  typeof RegExp.escape === 'function' ? RegExp.escape('.') : 'none'];""",
        [["bc", "b", "c"], False, "a+b", ["a", "b", ""], "gi", None, ["1", "22"], 1,
         OneOf("\\.", "none")]),
    # A's last match must not be B's RegExp.$1 (SES removes the statics: undefined).
    "regexp-legacy-statics": Pair((
        "/(LEAK-\\w+)/.exec('x LEAK-alice y');", "'x LEAK-a y'.replace(/(LEAK)-(\\w+)/, '$2');",
        "RegExp.input = 'LEAK-input';", "new RegExp('(LEAK)').test('LEAK');",
    ), """const R = RegExp;
return ['$1', '$2', 'lastMatch', 'lastParen', 'leftContext', 'rightContext', 'input', '$_', '$&']
  .map((n) => R[n] === undefined ? null : R[n]);""",
        [OneOf("", None)] * 9),
    "date": Pair((
        "Date.now = () => 0;", "Date.prototype.getTime = () => 0;",
        "Date.prototype.toISOString = () => 'LEAK';", "Date.UTC = () => 0;",
        "Date.parse = () => 0;",
        "Date.prototype.leak = 'LEAK';", "Date.prototype.getTimezoneOffset = () => 666;",
        "Date.prototype.toLocaleString = () => 'LEAK';",
        "globalThis.Date = function () { return 'LEAK'; };",
    ), """const d = new Date(Date.UTC(2026, 0, 2, 3, 4, 5)); const now = Date.now();
return [d.getTime(), d.toISOString(), Date.parse('2026-01-02T03:04:05Z'), d.leak,
  d.getTimezoneOffset() !== 666,
  d.toLocaleString('en-US', { timeZone: 'UTC' }), Math.abs(now - new Date().getTime()) < 60000,
  now > 1.7e12, typeof Date(), new Date(0).toISOString(), typeof globalThis.Date.now()];""",
        [1767323045000, "2026-01-02T03:04:05.000Z", 1767323045000, None, True,
         "1/2/2026, 3:04:05 AM", True, True, "string", "1970-01-01T00:00:00.000Z", "number"]),
    "promise": Pair((
        "Promise.prototype.then = function () { return 'LEAK'; };",
        "Promise.resolve = () => 'LEAK';",
        "Promise.all = () => 'LEAK';", "Promise.prototype.leak = 'LEAK';",
        "Object.defineProperty(Promise, Symbol.species, { get() { return function () { throw new"
        " Error('LEAK'); }; } });",
        "Promise.withResolvers = null;", "Promise.prototype.finally = null;",
        "Promise.race = null;", "Promise.allSettled = () => 'LEAK';",
    ), """const r = await Promise.all([1, Promise.resolve(2), (async () => 3)()]);
const w = Promise.withResolvers(); w.resolve(4);
return [r, await w.promise, Promise.prototype.leak,
  await Promise.resolve(5).then((x) => x + 1).finally(() => 0),
  await Promise.race([new Promise((res) => setTimeout(() => res(7), 1))]),
  await Promise.allSettled([Promise.reject(new Error('e'))]).then((s) => s[0].status)];""",
        [[1, 2, 3], 4, None, 6, 7, "rejected"]),
    "collections": Pair((
        "Map.prototype.get = () => 'LEAK';", "Map.prototype.set = function () { return this; };",
        "Set.prototype.has = () => true;", "Set.prototype.add = function () { return this; };",
        "WeakMap.prototype.get = () => 'LEAK';", "WeakSet.prototype.has = () => true;",
        "Map.prototype.leak = 'LEAK';", "Map.groupBy = () => 'LEAK';",
        "Object.defineProperty(Map.prototype, 'size', { get: () => 666 });",
        "Set.prototype.union = () => new Set(['LEAK']);",
        "Map.prototype[Symbol.iterator] = function* () { yield ['LEAK', 1]; };",
    ), """const m = new Map([['k', 1]]); const s = new Set([1]); const key = {};
const wm = new WeakMap(); wm.set(key, 'v'); const ws = new WeakSet([key]);
return [m.get('k'), m.set('j', 2).size, s.has(2), s.add(3).size, wm.get(key), wm.get({}),
  ws.has({}), m.leak, [...Map.groupBy([1, 2, 3], (x) => x % 2).keys()], [...m],
  typeof s.union === 'function' ? [...s.union(new Set([9]))] : 'none'];""",
        [1, 2, False, 2, "v", None, False, None, [1, 0], [["k", 1], ["j", 2]],
         OneOf([1, 3, 9], "none")]),
    "errors": Pair((
        "Error.prototype.toString = () => 'LEAK';", "Error.prototype.message = 'LEAK';",
        "Error.prototype.name = 'LEAK';", "TypeError.prototype.name = 'LEAK';",
        "RangeError.prototype.leak = 'LEAK';", "AggregateError.prototype.message = 'LEAK';",
        "Error.leak = 'LEAK';", "Error.prototype.cause = 'LEAK';", "Error.isError = () => 'LEAK';",
        "Object.defineProperty(Error.prototype, 'stack', { get: () => 'LEAK', configurable: true"
        " });",
    ), """const e = new Error(); const t = new TypeError('t'); let caught;
try { null.x; } catch (x) { caught = x; }
return [String(e), e.message, e.name, t.name, String(t), caught.name, caught instanceof TypeError,
  new RangeError('r').leak, new AggregateError([]).message, 'cause' in e, Error.leak,
  ({ __proto__: Error.prototype }).stack,
  typeof new Error('s').stack, typeof Error.isError === 'function' ? Error.isError(e) : 'none'];""",
        ["Error", "", "Error", "TypeError", "TypeError: t", "TypeError", True, None, "", False,
        None, OneOf(None, ""),
         "string", OneOf(True, "none")]),
    "stack-trace-machinery": Pair((
        "Object.defineProperty(Error, 'prepareStackTrace', { get: () => () => 'LEAK',"
        " configurable: true });",
        "Error.prepareStackTrace = (e, sites) => { globalThis.sites = sites; return 'LEAK'; };",
        "Error.stackTraceLimit = 0;", "Error.captureStackTrace = (o) => { o.stack = 'LEAK'; };",
    ), """const e = new Error('x'); const o = {}; Error.captureStackTrace(o);
const inner = () => new Error('deep').stack;
return [String(Error.prepareStackTrace), Error.stackTraceLimit, e.stack.startsWith('Error: x'),
  e.stack.includes('LEAK'), e.stack.split('\\n').length > 1, typeof o.stack,
  String(o.stack).includes('LEAK'),
  inner().split('\\n').length > 2, e.stack.includes('job.js'), typeof globalThis.sites];""",
        # SES gives Error a prepareStackTrace of its own, and no stackTraceLimit
        [OneOf("undefined", '()=>""'), OneOf(10, None), True, False, True, "string", False, True,
         True, "undefined"]),
    "json-reflect": Pair((
        "JSON.stringify = () => '\"LEAK\"';", "JSON.parse = () => 'LEAK';", "JSON.leak = 'LEAK';",
        "Object.defineProperty(JSON, Symbol.toStringTag, { value: 'LEAK' });",
        "Reflect.apply = () => 'LEAK';",
        "Reflect.ownKeys = () => ['LEAK'];", "Reflect.leak = 'LEAK';",
        "Reflect.defineProperty = () => false;", "JSON.rawJSON = () => 'LEAK';",
    ), """return [JSON.stringify({ a: [1] }), JSON.parse('{"b":2}'), JSON.leak, String(JSON),
  Reflect.apply(Math.max, null, [1, 2]), Reflect.ownKeys({ k: 1 }), Reflect.leak,
  Reflect.defineProperty({}, 'x', { value: 1 }),
  typeof JSON.rawJSON === 'function' ? typeof JSON.rawJSON('1') : 'none'];""",
        ['{"a":[1]}', {"b": 2}, None, "[object JSON]", 2, ["k"], None, True,
         OneOf("object", "none")]),
    "typed-arrays-buffers": Pair((
        "const TA = Object.getPrototypeOf(Uint8Array.prototype); TA.set = () => {};",
        "Object.getPrototypeOf(Uint8Array.prototype).fill = () => {};",
        "Object.getPrototypeOf(Uint8Array.prototype).leak = 'LEAK';",
        "Uint8Array.prototype.toBase64 = () => 'LEAK';",
        "Uint8Array.from = () => new Uint8Array([6]);",
        "ArrayBuffer.prototype.slice = () => new ArrayBuffer(0);",
        "Object.defineProperty(ArrayBuffer.prototype, 'byteLength', { get: () => 666 });",
        "DataView.prototype.getUint8 = () => 66;",
        "Object.defineProperty(Object.getPrototypeOf(Uint8Array.prototype), 'length', { get: ()"
        " => 666 });",
        "Object.getPrototypeOf(Uint8Array.prototype)[Symbol.iterator] = function* () { yield"
        " 'LEAK'; };",
        "Object.getPrototypeOf(Uint8Array.prototype).subarray = () => new Uint8Array(9);",
        inert("Uint16Array.BYTES_PER_ELEMENT = 9;"),
    ), """const u = new Uint8Array(4); u.set([1, 2], 1); u.fill(9, 3);
const buf = new ArrayBuffer(8);
return [Array.from(u), [...u], u.length, buf.byteLength, buf.slice(2).byteLength,
  new DataView(new Uint8Array([5, 6]).buffer).getUint8(1), Array.from(Uint8Array.from([7, 8])),
  u.leak, typeof u.toBase64 === 'function' ? u.toBase64() : 'none', Array.from(u.subarray(1, 3)),
  new Float64Array([1.5]).length, Uint16Array.BYTES_PER_ELEMENT];""",
        [[0, 1, 2, 9], [0, 1, 2, 9], 4, 8, 6, 6, [7, 8], None, OneOf("AAECCQ==", "none"), [1, 2], 1,
         2]),
    "iterators-generators": Pair((
        "Iterator.prototype.map = () => 'LEAK';", "Iterator.prototype.toArray = () => ['LEAK'];",
        "Iterator.from = null;",
        "Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true });",
        "Object.getPrototypeOf(function* () {}).prototype.next = () => ({ value: 'LEAK', done:"
        " false });",
        "Object.getPrototypeOf(async function () {}).leak = 'LEAK';",
        "Object.getPrototypeOf(function* () {}).constructor.leak = 'LEAK';",
        "Object.getPrototypeOf(new Map().entries()).next = () => ({ done: true });",
        "Object.getPrototypeOf(''[Symbol.iterator]()).next = () => ({ done: true });",
    ), """function* g() { yield 1; yield 2; } const af = async function () {};
return [[1, 2, 3].values().map((x) => x * 2).toArray(), [...g()], Array.from(new Map([[1,
  2]]).entries()),
  [...'hi'], typeof Iterator.from, Iterator.from([4, 5]).toArray(), Object.getPrototypeOf(af).leak,
  Object.getPrototypeOf(g).constructor.leak, g().next(), [...[7, 8]]];""",
        [[2, 4, 6], [1, 2], [[1, 2]], ["h", "i"], "function", [4, 5], None, None,
         {"value": 1, "done": False}, [7, 8]]),
    "intl-temporal-proxy-globals": Pair((
        inert("Intl.DateTimeFormat.prototype.format = () => 'LEAK';"),  # an accessor
        "Object.defineProperty(Intl.DateTimeFormat.prototype, 'format', { get: () => () => 'LEAK'"
        " });",
        "Intl.NumberFormat = function () { return { format: () => 'LEAK' }; };",
        "Intl.leak = 'LEAK';", "String.prototype.localeCompare = () => 666;",
        "Number.prototype.toLocaleString = () => 'LEAK';",
        "Object.defineProperty(Intl.Collator.prototype, 'compare', { get: () => () => 0 });",
        "Temporal.Now.instant = () => 'LEAK';",
        "Proxy.revocable = () => 'LEAK';", "globalThis.parseInt = () => 666;",
        "parseInt.leak = 'LEAK';", "globalThis.encodeURIComponent = () => 'LEAK';",
    ), """const d = new Date(Date.UTC(2026, 0, 2));
return [new Intl.DateTimeFormat('en-US', { timeZone: 'UTC' }).format(d),
  new Intl.NumberFormat('en-US').format(1234.5),
  Intl.leak, (1234.5).toLocaleString('en-US'), 'a'.localeCompare('b'), ['b',
  'a'].sort(new Intl.Collator('en').compare),
  parseInt('42'), parseInt.leak, typeof Proxy.revocable({}, {}),
  typeof Temporal?.Now?.instant === 'function' ? typeof Temporal.Now.instant() : 'none',
  encodeURIComponent('a b')];""",
        ["1/2/2026", "1,234.5", None, "1,234.5", -1, ["a", "b"], 42, None, "object",
         OneOf("object", "none"), "a%20b"]),
    # Reached only through an instance: lockdown() must freeze these prototypes too.
    "intl-segmenter-prototypes": Pair((
        "Object.getPrototypeOf(new Intl.Segmenter().segment('a')).containing = () => ({ segment:"
        " 'LEAK' });",
        "Object.getPrototypeOf(new Intl.Segmenter().segment('a')[Symbol.iterator]()).next = () =>"
        " ({ done: true });",
        "Object.getPrototypeOf(new Intl.Segmenter().segment('a')).leak = 'LEAK';",
    ), """const s = new Intl.Segmenter('en', { granularity: 'word' }).segment('hi there');
return [[...s].map((x) => x.segment), s.containing(0).segment, s.leak];""",
        [["hi", " ", "there"], "hi", None]),
    "global-this": Pair((
        "globalThis.leaked = 'LEAK';",
        "Object.defineProperty(globalThis, 'leakedGetter', { get: () => 'LEAK', configurable:"
        " true });",
        "globalThis.Buffer = 'LEAK';", "delete globalThis.URL;",
        "globalThis.JSON = { parse: () => 'LEAK' };",
        "Object.setPrototypeOf(globalThis, { leakedProto: 'LEAK' });",
        "globalThis[Symbol.for('leak')] = 'LEAK';",
        "globalThis.globalThis = 'LEAK';", "Object.preventExtensions(globalThis);",
        inert("Object.defineProperty(globalThis, 'undefined', { value: 'LEAK' });"),
    ), """const names = Object.getOwnPropertyNames(globalThis); globalThis.mine = 1; let read;
try { leaked; read = 'read'; } catch (e) { read = e.name; }
return [typeof leaked, read, typeof globalThis.leaked, typeof globalThis.leakedGetter,
  typeof Buffer, typeof globalThis.Buffer, typeof URL, typeof globalThis.URL, JSON.parse('1'),
  typeof globalThis.leakedProto,
  globalThis[Symbol.for('leak')], globalThis.globalThis === globalThis, names.includes('leaked'),
  globalThis.mine, Object.isExtensible(globalThis)];""",
        ["undefined", "ReferenceError", "undefined", "undefined", "function", "function",
         "function", "function", 1, "undefined", None, True, False, 1, True]),
    "top-level-declarations": Pair((
        "(0, eval)('var leakedVar = \"LEAK\"; function leakedFn() { return \"LEAK\"; }');",
        "new Function('leakedSloppy = \"LEAK\"')();", "eval('var leakedDirect = \"LEAK\"');",
        "leakedAssign = 'LEAK';",
    ), """const names = ['leakedVar', 'leakedFn', 'leakedSloppy', 'leakedDirect', 'leakedAssign',
  'leakedTop', 'leakedTopFn', 'leakedLet', 'LeakedClass'];
const read = (n) => { try { return (0, eval)(n); } catch (e) { return e.name; } };
return [typeof leakedTop, typeof leakedTopFn, typeof leakedDirect,
  ...names.map((n) => [typeof globalThis[n], (0, eval)(`typeof ${n}`), read(n)])];""",
        # eval'd code reads an undeclared name through SES's scope proxy: undefined
        ["undefined"] * 3 + [["undefined", "undefined", OneOf("ReferenceError", None)]] * 9,
        top="var leakedTop = 'LEAK'; function leakedTopFn() { return 'LEAK'; }\n"
            "let leakedLet = 'LEAK'; class LeakedClass {}"),
    # Nothing A left pending may fire into B: B waits long enough for all of it.
    "timers-and-pending-work": Pair((
        "setTimeout(() => { console.log('LATE timeout'); globalThis.lateMark = 1; }, 30);",
        "setInterval(() => console.log('LATE interval'), 10);",
        "new Promise((r) => setTimeout(r, 20)).then(() => console.log('LATE promise'));",
        "AbortSignal.timeout(25).addEventListener('abort', () => console.log('LATE abort'));",
        "(async () => { await new Promise((r) => setTimeout(r, 40)); console.log('LATE async');"
        " })();",
        "queueMicrotask(() => setTimeout(() => console.log('LATE microtask'), 30));",
        residue("Promise.resolve().then(() => new Promise(() => {}));"),
    ), """await new Promise((r) => setTimeout(r, 120)); console.log('b-only');
return [typeof lateMark, typeof globalThis.lateMark];""", ["undefined", "undefined"],
        logs=("b-only",)),
    # The warm engine removes both; today's keeps them (a finalizer may never run).
    "finalizers-weakrefs": Pair((
        residue("const fr = new FinalizationRegistry((held) => console.log('LATE finalizer',"
              " held));"
                " for (let i = 0; i < 300; i++) fr.register({ pad: new Array(1000).fill(i) }, i);"),
        "globalThis.keep = new FinalizationRegistry(() => console.log('LATE'));",
        "globalThis.ref = new WeakRef({ secret: 'LEAK' });",
        "FinalizationRegistry.prototype.register = () => 'LEAK';",
        "WeakRef.prototype.deref = () => 'LEAK';",
    ),
  """for (let i = 0; i < 40; i++) new Array(20000).fill(i);  // garbage, for a collection to run
await new Promise((r) => setTimeout(r, 30)); await new Promise((r) => setTimeout(r, 30));
const o = {};
return [typeof globalThis.keep, typeof globalThis.ref,
  typeof WeakRef === 'function' ? new WeakRef(o).deref() === o : 'none',
  typeof FinalizationRegistry === 'function'
    ? typeof new FinalizationRegistry(() => {}).register({}, 1) : 'none'];""",
        ["undefined", "undefined", OneOf(True, "none"), OneOf("undefined", "none")]),
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
    iso.battery(on, CASES[name])


@pytest.mark.parametrize("name", CASES)
def test_the_probe_sees_each_step(fresh: EngineHarness, name: str) -> None:
    iso.control(fresh, CASES[name])


# ---- what one run is given: never another's -------------------------------------
WHO = """const before = [({}).stash ?? null, globalThis.stash ?? null, typeof lastWho];
try { Object.prototype.stash = params.who; } catch (e) { /* frozen: the warm engine */ }
globalThis.stash = params.who;
console.log('I am', params.who, params.n);
await new Promise((r) => setTimeout(r, 10));  // the other run goes on meanwhile
console.info('still', params.who);
return { before, params, secret: secrets.get('hook'), path: request.path,
  header: request.headers['x-who'], caller: request.caller, userID };"""


def identity(who: str, n: int) -> dict[str, Any]:
    """The run's kw: its params, secret and request are its own."""
    return {"params": {"who": who, "n": n}, "secret_names": ("hook",),
            "secrets": {"hook": f"{who}-secret-{n}-value"},
            "request": {"method": "POST", "path": f"/api/webjobs/{who}", "headers": {"x-who": who},
                        "caller": {"kind": "user", "id": 100 + n, "name": who}}}


def assert_own(result: RunResult, who: str, n: int) -> None:
    me = identity(who, n)
    assert iso.answer(result) == {
        "before": [None, None, "undefined"], "params": me["params"],
        "secret": f"{who}-secret-{n}-value", "path": f"/api/webjobs/{who}", "header": who,
        "caller": me["request"]["caller"], "userID": 100 + n}
    assert [line.message for line in result.logs] == [f"I am {who} {n}", f"still {who}"]


def test_params_secrets_request_and_console_stay_with_their_run(on: iso.Bench) -> None:
    for n in range(6):  # alternately on one worker
        who = ("alice", "bob")[n % 2]
        assert_own(iso.run(on.solo, WHO, **identity(who, n)), who, n)
    for n in range(4):  # at the same time on two
        a, b = iso.together(on.duo, (WHO, identity("alice", n)), (WHO, identity("bob", n + 50)))
        assert_own(a, "alice", n)
        assert_own(b, "bob", n + 50)


KA = base64.b64encode(b"the signing key of run A, 32 b..").decode()
KB = base64.b64encode(b"the signing key of run B, 32 b..").decode()
SIGN = "return { token: sign({ who: params.who }), own: verify(sign({ x: 1 })) };"
VERIFY = "return [verify(params.token), verify(sign({ b: 1 }))];"


def test_a_token_signed_with_one_runs_key_does_not_verify_in_another(on: iso.Bench) -> None:
    for n in range(4):
        signed = iso.answer(iso.run(on.solo, SIGN, sign_key=KA, params={"who": f"alice{n}"}))
        assert signed["own"] == {"x": 1}
        token = {"token": signed["token"]}
        assert iso.answer(iso.run(on.solo, VERIFY, sign_key=KB, params=token)) == [None, {"b": 1}]
        # ...while the key it was signed with still verifies it: the token itself is good
        assert iso.answer(iso.run(on.solo, VERIFY, sign_key=KA, params=token)) == [
            {"who": f"alice{n}"}, {"b": 1}]
    for _ in range(3):
        a, b = (iso.answer(r) for r in iso.together(
            on.duo, (SIGN, {"sign_key": KA, "params": {"who": "a"}}),
            (SIGN, {"sign_key": KB, "params": {"who": "b"}})))
        crossed = iso.together(on.duo, (VERIFY, {"sign_key": KA, "params": {"token": b["token"]}}),
                           (VERIFY, {"sign_key": KB, "params": {"token": a["token"]}}))
        assert [iso.answer(r) for r in crossed] == [[None, {"b": 1}]] * 2
