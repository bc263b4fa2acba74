"""hub/engine/js/web/*.js: the web APIs a bare V8 context lacks.

Each test gets a fresh mini-racer context with the sandbox's API files evaluated as
production evaluates them (``scripts.web_apis_source()``), and checks known answers
(Python's own base64/hex/UTF-8 codecs for random data, WHATWG URL examples, browser
behaviour for the rest)."""

from __future__ import annotations

import base64
import json
import random
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from py_mini_racer import JSEvalException, MiniRacer

from hub.engine import scripts

SOURCE = scripts.web_apis_source()
GLOBALS = {"DOMException", "TextEncoder", "TextDecoder", "atob", "btoa", "Buffer", "URL",
           "URLSearchParams", "structuredClone", "Event", "EventTarget", "AbortSignal",
           "AbortController"}
HIDDEN = {"__webjob_bytes", "__webjob_responses", "__webjob_crypto"}  # the prelude's to take


class JS:
    def __init__(self) -> None:
        self.mr = MiniRacer()
        self.mr.eval(SOURCE)

    def eval(self, code: str) -> Any:
        return self.mr.eval(code)

    def json(self, expr: str) -> Any:
        """The value of a JS expression, through JSON."""
        return json_of(self.mr, expr)

    def error(self, code: str) -> str:
        """The JS error that ``code`` throws, as text."""
        with pytest.raises(JSEvalException) as info:
            self.mr.eval(code)
        return str(info.value)


@pytest.fixture
def js() -> Iterator[JS]:
    ctx = JS()
    yield ctx
    ctx.mr.close()


def json_of(mr: MiniRacer, expr: str) -> Any:
    return json.loads(str(mr.eval(f"JSON.stringify({expr})")))


def rand_bytes(seed: int, n: int) -> bytes:
    return random.Random(seed).randbytes(n)


# ---- the scripts themselves ----------------------------------------------------------------


@pytest.mark.parametrize("name", scripts.WEB_APIS)
def test_each_file_is_one_strict_function_named_by_its_source_url(name: str) -> None:
    text = scripts.file_text(name)
    code = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("//")]
    assert code[0] == "(() => {"
    assert code[1].strip() == "'use strict';"
    assert code[-1] == "})();"
    assert text.rstrip("\n").splitlines()[-1] == f"//# sourceURL=webjobs:{name[:-3]}"
    assert text.isascii()  # one character past Latin-1 and V8 keeps the script as UTF-16


def test_installs_exactly_the_api_as_builtin_like_globals() -> None:
    with MiniRacer() as mr:
        before = set(json_of(mr, "Object.getOwnPropertyNames(globalThis)"))
        mr.eval(SOURCE)
        after = set(json_of(mr, "Object.getOwnPropertyNames(globalThis)"))
        assert after - before == GLOBALS | HIDDEN
        assert before - after == set()
        descs = json_of(mr, f"""Object.fromEntries(
            {json.dumps(sorted(GLOBALS))}.map((k) => {{
                const d = Object.getOwnPropertyDescriptor(globalThis, k);
                return [k, [typeof d.value, d.writable, d.enumerable, d.configurable]];
            }}))""")
        for name, desc in descs.items():
            assert desc == ["function", True, False, True], name
        assert not set(json_of(mr, "Object.keys(globalThis)")) & GLOBALS
        # using every API adds no globals either
        mr.eval("""new URL('http://x/?a=1').searchParams.get('a'); Buffer.from('x').toString('hex');
            new TextDecoder().decode(new TextEncoder().encode('x')); atob(btoa('x'));
            structuredClone({}); new AbortController().abort(); new DOMException('x');""")
        final = set(json_of(mr, "Object.getOwnPropertyNames(globalThis)"))
        assert final == after


def test_the_functions_are_like_builtins(js: JS) -> None:
    assert js.json("""['atob', 'btoa', 'structuredClone'].map((k) => [globalThis[k].name,
        globalThis[k].length, 'prototype' in globalThis[k]])""") == [
        ["atob", 1, False], ["btoa", 1, False], ["structuredClone", 1, False]]
    assert "TypeError" in js.error("new atob('YQ==')")
    assert js.json("""Object.entries(__webjob_crypto.crypto).map(([k, f]) => [k, f.length,
        'prototype' in f])""") == [["hash", 3, False], ["hmac", 4, False],
                                   ["timingSafeEqual", 2, False], ["randomUUID", 0, False],
                                   ["getRandomValues", 1, False]]


def test_classes_behave_like_builtins(js: JS) -> None:
    assert js.json("""[typeof URL.prototype.toJSON, 'searchParams' in URL.prototype,
        typeof Buffer.prototype.readUInt32LE, URL.name, URL.length, Buffer.length,
        [DOMException, TextEncoder, TextDecoder, URLSearchParams, Event, EventTarget, AbortSignal,
         AbortController].map((C) => C.name + C.length).join()]""") == [
        "function", True, "function", "URL", 1, 3,
        "DOMException0,TextEncoder0,TextDecoder0,URLSearchParams0,Event1,EventTarget0,"
        "AbortSignal0,AbortController0"]
    assert js.json("""(() => {
        const u = new URL('http://x/'), b = Buffer.from('hi');
        class MyURL extends URL { get twice() { return this.href + this.href; } }
        class MyTarget extends EventTarget { constructor() { super(); this.n = 1; } }
        const t = new MyTarget();
        let got = 0;
        t.addEventListener('x', () => got++);
        t.dispatchEvent(new Event('x'));
        return [u instanceof URL, u.constructor === URL, b instanceof Buffer,
            b instanceof Uint8Array,
            b.constructor === Buffer, Object.getPrototypeOf(URL.prototype) === Object.prototype,
            Object.getPrototypeOf(Buffer.prototype) === Uint8Array.prototype,
            new MyURL('http://y/').twice, got, t.n, t instanceof EventTarget,
            Object.prototype.toString.call(u),
                Object.prototype.toString.call(new URLSearchParams()),
            Object.getOwnPropertyNames(URLSearchParams.prototype).includes('getAll'),
            Object.prototype.toString.call(Buffer.alloc(1)),
            Object.prototype.toString.call(new AbortController().signal),
            Object.getPrototypeOf(AbortSignal.prototype) === EventTarget.prototype,
            Object.getPrototypeOf(DOMException.prototype) === Error.prototype];
    })()""") == [True, True, True, True, True, True, True, "http://y/http://y/", 1, 1, True,
                 "[object URL]", "[object URLSearchParams]", True, "[object Uint8Array]",
                 "[object AbortSignal]", True, True]
    assert "TypeError" in js.error("URL('http://x')")
    assert "Illegal constructor" in js.error("new AbortSignal()")


def test_captured_intrinsics_survive_a_job_breaking_them(js: JS) -> None:
    js.eval("""
        String.fromCharCode = String.prototype.charCodeAt = String.prototype.slice = () => 'broken';
        String.prototype.indexOf = String.prototype.toLowerCase = String.prototype.split = () => -7;
        const boom = () => { throw new Error('x'); };
        Array.prototype.push = Array.prototype.join = Array.prototype.slice = boom;
        Array.prototype.indexOf = Array.prototype.splice = Array.prototype.sort = () => -7;
        Uint8Array.prototype.subarray = Uint8Array.prototype.set = boom;
        Object.getPrototypeOf(Uint8Array.prototype).subarray = boom;
        Map.prototype.get = Map.prototype.set = boom;
        Function.prototype.call = Function.prototype.apply = Function.prototype.bind = boom;
        Function.prototype.toString = () => 'broken';
        for (const k of ['Math', 'Object', 'Array', 'TypeError', 'RangeError', 'Error', 'String',
            'Map', 'Set', 'Date', 'RegExp', 'Uint8Array', 'Uint16Array', 'DataView', 'ArrayBuffer',
            'Reflect', 'Symbol', 'Number', 'WeakMap', 'Proxy', 'Function']) {
            globalThis[k] = undefined;
        }
    """)
    assert js.eval("Buffer.from('héllo', 'utf8').toString('base64')") == "aMOpbGxv"
    assert js.eval("new URL('../x?a b#c', 'https://EX.com/p/q/r').href") == (
        "https://ex.com/p/x?a%20b#c")
    assert js.eval("new URLSearchParams({a: 'b c', d: 'é'}).toString()") == "a=b+c&d=%C3%A9"
    assert js.eval("new TextDecoder().decode(new TextEncoder().encode('😀'))") == "😀"
    assert js.eval("atob(btoa('abc'))") == "abc"
    assert js.eval("(() => { const c = new AbortController(); c.abort();"
                   " return c.signal.reason.name })()") == "AbortError"
    assert js.eval("(() => { const o = {a: [1, {b: 2}]}; o.self = o; const c = structuredClone(o);"
                   " return c.self === c && c.a[1].b })()") == 2


# ---- TextEncoder / TextDecoder -----------------------------------------------------------


TEXTS = ["", "plain ascii", "héllo wörld", "€ ☃ ✓", "😀 emoji 👍🏽 family 👨‍👩‍👧",
         "日本語のテキスト", "\x00\x7f\x80\u07ff\u0800\uffff", "𝄞𐍈\U0010ffff"]


def test_utf8_encode_matches_python(js: JS) -> None:
    for text in TEXTS:
        got = js.json(f"Array.from(new TextEncoder().encode({json.dumps(text)}))")
        assert bytes(got) == text.encode("utf-8"), text
        round_trip = f"new TextDecoder().decode(new TextEncoder().encode({json.dumps(text)}))"
        assert js.eval(round_trip) == text
        assert js.eval(f"Buffer.byteLength({json.dumps(text)})") == len(text.encode("utf-8"))


def test_utf8_lone_surrogates_encode_as_replacement(js: JS) -> None:
    got = js.json(r"Array.from(new TextEncoder().encode('a\uD800b\uDC00'))")
    assert bytes(got) == "a\ufffdb\ufffd".encode()
    assert js.json(r"Array.from(Buffer.from('\uD83D'))") == [0xEF, 0xBF, 0xBD]


def test_utf8_decode_invalid_bytes_like_python_replace(js: JS) -> None:
    samples = [b"\xff", b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
               b"\xf0\x9f\x98A", b"abc\xc3", b"\xe2\x82", b"\x80\x80\xc3\xa9"]
    rng = random.Random(7)
    samples += [bytes(rng.choice([0x41, 0x80, 0xbf, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff, 0x9f])
                      for _ in range(rng.randint(1, 12))) for _ in range(150)]
    arrays = json.dumps([list(s) for s in samples])
    got = js.json(f"{arrays}.map((b) => new TextDecoder().decode(new Uint8Array(b)))")
    assert got == [s.decode("utf-8", "replace") for s in samples]


def test_text_decoder_options_and_labels(js: JS) -> None:
    fatal = "new TextDecoder('utf-8', {fatal: true})"
    assert "TypeError" in js.error(f"{fatal}.decode(new Uint8Array([0xff]))")
    assert js.eval(f"{fatal}.decode(new Uint8Array([0xe2, 0x82, 0xac]))") == "€"
    assert js.json("""[new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x68])),
        new TextDecoder('utf8', {ignoreBOM: true}).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x68])),
        new TextDecoder(' UTF-8 ').encoding, new TextDecoder('latin1').encoding,
        new TextDecoder('iso-8859-1').decode(new Uint8Array([0xe9, 0x80, 0x41])),
        new TextDecoder('utf-16le').decode(new Uint8Array([0x61, 0, 0x3d, 0xd8, 0, 0xde])),
        new TextDecoder().decode(new Uint16Array([0x6968])),
        new TextDecoder().decode(new Uint8Array([0x61, 0x62, 0x63]).buffer),
        new TextDecoder().decode(new DataView(new Uint8Array([0x61, 0x62, 0x63]).buffer, 1)),
        new TextDecoder().decode()]""") == ["h", "\ufeffh", "utf-8", "windows-1252", "é€A", "a😀",
                                            "hi", "abc", "bc", ""]
    assert "RangeError" in js.error("new TextDecoder('klingon')")


def test_text_decoder_streaming(js: JS) -> None:
    assert js.json("""(() => {
        const d = new TextDecoder(), out = [];
        for (const b of [[0xf0, 0x9f], [0x98], [0x80, 0xe2], [0x82], [0xac, 0x41]])
            out.push(d.decode(new Uint8Array(b), {stream: true}));
        out.push(d.decode(new Uint8Array([0xc3]), {stream: true}), d.decode());
        return out;
    })()""") == ["", "", "😀", "", "€A", "", "\ufffd"]


def test_encode_into(js: JS) -> None:
    assert js.json("""(() => {
        const u = new Uint8Array(5), r = new TextEncoder().encodeInto('a😀b', u);
        const v = new Uint8Array(4), s = new TextEncoder().encodeInto('ab€', v);
        return [r, Array.from(u), s, Array.from(v)];
    })()""") == [{"read": 3, "written": 5}, [0x61, 0xF0, 0x9F, 0x98, 0x80],
                 {"read": 2, "written": 2}, [0x61, 0x62, 0, 0]]


# ---- atob / btoa -----------------------------------------------------------------------------


def test_atob_btoa_match_python_base64(js: JS) -> None:
    datas = [rand_bytes(seed, n) for seed, n in enumerate([0, 1, 2, 3, 4, 5, 31, 64, 255, 1000])]
    latin1 = [d.decode("latin-1") for d in datas]
    encoded = js.json(f"{json.dumps(latin1)}.map(btoa)")
    assert encoded == [base64.b64encode(d).decode() for d in datas]
    assert js.json(f"{json.dumps(encoded)}.map(atob)") == latin1


def test_atob_is_forgiving_but_strict_like_browsers(js: JS) -> None:
    assert js.json("[atob('YQ'), atob('YWI='), atob(' YW\\tJj\\n'), atob('')]") == ["a", "ab",
        "abc", ""]
    for bad in ["YQ=", "Y", "YQ===", "YQ=a", "Y-E=", "YR$=", "\u00ff"]:
        assert js.json(f"""(() => {{ try {{ atob({json.dumps(bad)}); return null; }} catch (e) {{
            return [e.name, e.code, e instanceof DOMException,
                e instanceof Error]; }} }})()""") == [
            "InvalidCharacterError", 5, True, True], bad
    assert js.json("""(() => { try { btoa('\\u0100'); } catch (e) { return [e.name,
        e.code]; } })()""") == [
        "InvalidCharacterError", 5]


# Text for the decoders: both alphabets, padding, whitespace, junk, non-ASCII.
TRICKY = "ABCxyz019+/-_=  \t\n\r\f!$\u00e9\u0100Q"
B64_VALUE = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")} | {"-": 62, "_": 63}


def node_base64(text: str) -> bytes:
    """Node's lenient base64: up to the first '=', characters of either alphabet, the rest
    skipped; a dangling character's bits dropped."""
    values = [B64_VALUE[c] for c in text.split("=")[0] if c in B64_VALUE]
    bits = "".join(f"{v:06b}" for v in values)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8))


def forgiving_base64(text: str) -> str | None:
    """WHATWG's forgiving-base64 decode, as latin-1 text (None: an InvalidCharacterError)."""
    data = "".join(c for c in text if c not in " \t\n\f\r")
    if len(data) % 4 == 0 and data.endswith("="):
        data = data[:-2] if data.endswith("==") else data[:-1]
    if len(data) % 4 == 1 or any(c not in B64_VALUE or c in "-_" for c in data):
        return None
    return node_base64(data).decode("latin-1")


def test_base64_decoders_match_their_specs_for_random_text(js: JS) -> None:
    # V8's decoder takes the clean texts, a JavaScript loop the rest: both must agree.
    rng = random.Random(11)
    texts = ["".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 14))) for _ in range(2000)]
    texts += [base64.b64encode(rand_bytes(n, n)).decode() for n in range(40)]
    got = js.json(f"""{json.dumps(texts)}.map((s) => {{
        let a = null;
        try {{ a = atob(s); }} catch (e) {{ if (e.name !== 'InvalidCharacterError') throw e; }}
        return [Buffer.from(s, 'base64').toString('hex'),
            Buffer.from(s, 'base64url').toString('hex'), Buffer.byteLength(s, 'base64'), a];
    }})""")
    for text, (b64, b64url, length, decoded) in zip(texts, got, strict=True):
        assert b64 == b64url == node_base64(text).hex(), text
        assert length == len(node_base64(text)), text
        assert decoded == forgiving_base64(text), text


def test_hex_decoding_stops_at_the_first_pair_that_is_not_hex(js: JS) -> None:
    rng = random.Random(12)
    texts = ["".join(rng.choice("0123456789abcdefABCDEFxz ") for _ in range(rng.randint(0, 9)))
             for _ in range(1000)]
    got = js.json(f"{json.dumps(texts)}.map((s) => Buffer.from(s, 'hex').toString('hex'))")

    def node_hex(text: str) -> str:
        out = ""
        for i in range(0, len(text) - 1, 2):
            pair = text[i:i + 2]
            if not all(c in "0123456789abcdefABCDEF" for c in pair):
                break
            out += pair.lower()
        return out

    assert got == [node_hex(t) for t in texts]


# ---- Buffer ----------------------------------------------------------------------------------


def test_buffer_codecs_match_python_for_random_bytes(js: JS) -> None:
    datas = [rand_bytes(100 + i, n) for i, n in enumerate([0, 1, 2, 3, 4, 17, 100, 1023, 4096,
        70000])]
    got = js.json(f"""{json.dumps([list(d) for d in datas])}.map((a) => {{
        const b = Buffer.from(a);
        return [b.toString('base64'), b.toString('hex'), b.toString('base64url'),
            b.toString('latin1')];
    }})""")
    for d, (b64, hx, b64u, latin1) in zip(datas, got, strict=True):
        assert b64 == base64.b64encode(d).decode()
        assert hx == d.hex()
        assert b64u == base64.urlsafe_b64encode(d).decode().rstrip("=")
        assert latin1 == d.decode("latin-1")
    back = js.json(f"""{json.dumps(got)}.map(([b64, hx, b64u, l1]) =>
        [b64, hx, b64u, l1].map((s, i) => Buffer.from(s, ['base64', 'hex', 'base64url',
            'latin1'][i]).toString('hex')))""")
    for d, row in zip(datas, back, strict=True):
        assert row == [d.hex()] * 4


def test_buffer_from_and_to_strings(js: JS) -> None:
    assert js.json("""[Buffer.from('héllo ☃ 😀').toString('hex'), Buffer.from('aGk',
        'base64').toString(),
        Buffer.from('aG k=\\n', 'base64').toString(), Buffer.from('_-8', 'base64url').toJSON().data,
        Buffer.from('abz', 'hex').toJSON().data, Buffer.from('ÿĀ€', 'latin1').toJSON().data,
        Buffer.from('ÿĀ', 'binary').toJSON().data, Buffer.from([0xff, 0xc3,
            0x41]).toString('ascii'),
        Buffer.from('a😀', 'utf16le').toJSON().data, Buffer.from([0x61, 0, 0x62, 0,
            1]).toString('ucs2'),
        Buffer.from([0xe2, 0x82, 0xac, 0xff]).toString(), String(Buffer.from('abc')),
        Buffer.from('hello world').toString('utf8', 3, 8), Buffer.from('hello').toString('hex',
            -3, 100)]""") == [
        "68c3a96c6c6f20e2988320f09f9880", "hi", "hi", [255, 239], [171], [255, 0, 172], [255, 0],
        "\x7fCA", [0x61, 0, 0x3d, 0xd8, 0, 0xde], "ab", "€\ufffd", "abc", "lo wo", "68656c6c6f"]
    assert "Unknown encoding: bogus" in js.error("Buffer.from('x', 'bogus')")
    assert "TypeError" in js.error("Buffer.from(5)")


def test_buffer_from_binary_sources(js: JS) -> None:
    assert js.json("""(() => {
        const ab = new ArrayBuffer(8), view = Buffer.from(ab, 2, 3);
        view[0] = 9;
        const src = Buffer.from('xyz'), copy = Buffer.from(src);
        copy[0] = 65;
        return [view.length, new Uint8Array(ab)[2], src.toString(), copy.toString(),
            Buffer.from(new Uint16Array([1, 256, 513])).toJSON().data,
            Buffer.from({type: 'Buffer', data: [1, 2, 3]}).toJSON().data,
            Buffer.from(new String('str')).toString(), Buffer.from([257, -1]).toJSON().data];
    })()""") == [3, 9, "xyz", "Ayz", [1, 0, 1], [1, 2, 3], "str", [1, 255]]


def test_buffer_statics(js: JS) -> None:
    assert js.json("""[Buffer.alloc(5, 'ab').toString(), Buffer.alloc(4, 257).toJSON().data,
        Buffer.alloc(6, 'aGk=', 'base64').toString(), Buffer.alloc(3).toJSON().data,
        Buffer.allocUnsafe(3).length, Buffer.byteLength('héllo 😀'), Buffer.byteLength('aGVsbG8=',
            'base64'),
        Buffer.byteLength('abcd', 'hex'), Buffer.byteLength(new Uint32Array(2)),
        Buffer.concat([Buffer.from('ab'), new Uint8Array([99]), Buffer.from('de')]).toString(),
        Buffer.concat([Buffer.from('ab'), Buffer.from('cd')], 3).toString(),
        Buffer.concat([Buffer.from('ab')], 4).toJSON().data,
        [Buffer.isBuffer(Buffer.alloc(1)), Buffer.isBuffer(new Uint8Array(1)),
            Buffer.isBuffer('x')],
        [Buffer.isEncoding('UTF-8'), Buffer.isEncoding('base64url'), Buffer.isEncoding('nope')],
        [Buffer.compare(Buffer.from('a'), Buffer.from('b')), Buffer.compare(Buffer.from('b'),
            Buffer.from('a')),
         Buffer.compare(Buffer.from('ab'), Buffer.from('a')), Buffer.compare(Buffer.from('a'),
             Buffer.from('a'))],
        Buffer.of(1, 2).toString('hex')]""") == [
        "ababa", [1, 1, 1, 1], "hihihi", [0, 0, 0], 3, 11, 5, 2, 8, "abcde", "abc", [97, 98, 0, 0],
        [True, False, False], [True, True, False], [-1, 1, 1, 0], "0102"]
    assert "RangeError" in js.error("Buffer.alloc(-1)")
    assert "TypeError" in js.error("Buffer.alloc('3')")


def test_buffer_instance_methods(js: JS) -> None:
    assert js.json("""(() => {
        const b = Buffer.from('hello world'), s = b.slice(6), t = b.subarray(0, 5);
        s[0] = 87;
        const w = Buffer.alloc(10), n = w.write('héllo', 2);
        const x = Buffer.alloc(6), m = [x.write('abcdef', 1, 3), x.write('ffff', 4, 'hex')];
        const a = Buffer.from('abcdef'), tgt = Buffer.alloc(4, '.'), copied = a.copy(tgt, 1, 2);
        return [b.toString(), s.toString(), t.toString(), Buffer.isBuffer(s), b.slice(-5,
            -2).toString(),
            n, w.toJSON().data, m, x.toJSON().data, copied, tgt.toString(),
                JSON.stringify(Buffer.from('hi')),
            Buffer.from('abc').equals(Buffer.from('abc')),
                Buffer.from('abc').equals(Buffer.from('abd')),
            Buffer.from('abc').compare(Buffer.from('abd')), Buffer.alloc(5).fill('xy',
                1).toString('latin1')];
    })()""") == ["hello World", "World", "hello", True, "Wor", 6,
                 [0, 0, 104, 195, 169, 108, 108, 111, 0, 0], [3, 2], [0, 97, 98, 99, 255, 255], 3,
                 ".cde", '{"type":"Buffer","data":[104,105]}', True, False, -1, "\x00xyxy"]


def test_buffer_search(js: JS) -> None:
    assert js.json("""(() => {
        const b = Buffer.from('this is a buffer, is it');
        return [b.indexOf('is'), b.indexOf('is', 3), b.lastIndexOf('is'),
            b.indexOf(Buffer.from('buf')),
            b.indexOf(98), b.indexOf(98 + 256), b.indexOf('zz'), b.includes('it'),
                b.includes('xyz'),
            b.indexOf('is', -5), b.lastIndexOf('is', 10), b.indexOf(''), b.indexOf('6973', 0,
                'hex')];
    })()""") == [2, 5, 18, 10, 10, 10, -1, True, False, 18, 5, 0, 2]


def test_buffer_integers_match_python_struct(js: JS) -> None:
    got = js.json("""(() => {
        const b = Buffer.alloc(32);
        const ends = [b.writeUInt8(0xfe, 0), b.writeUInt16LE(0xbeef, 1), b.writeUInt16BE(0xbeef, 3),
            b.writeUInt32LE(0xdeadbeef, 5), b.writeUInt32BE(0xdeadbeef, 9),
                b.writeInt32LE(-123456, 13),
            b.writeInt32BE(-123456, 17), b.writeInt8(-2, 21), b.writeInt16LE(-300, 22),
                b.writeDoubleLE(1.5, 24)];
        return [b.toString('hex'), ends, b.readUInt8(0), b.readUInt16LE(1), b.readUInt16BE(3),
            b.readUInt32LE(5), b.readUInt32BE(9), b.readInt32LE(13), b.readInt32BE(17),
                b.readInt8(21),
            b.readInt16LE(22), b.readDoubleLE(24), b.readUint32LE(5), b.readUIntBE(9, 3),
                b.readIntLE(13, 3)];
    })()""")
    packed = struct.pack("<BH", 0xFE, 0xBEEF) + struct.pack(">H", 0xBEEF) + struct.pack(
        "<I", 0xDEADBEEF) + struct.pack(">I", 0xDEADBEEF) + struct.pack("<i",
            -123456) + struct.pack(
        ">i", -123456) + struct.pack("<bh", -2, -300) + struct.pack("<d", 1.5)
    assert got[0] == packed.hex()
    assert got[1] == [1, 3, 5, 9, 13, 17, 21, 22, 24, 32]
    assert got[2:] == [0xFE, 0xBEEF, 0xBEEF, 0xDEADBEEF, 0xDEADBEEF, -123456, -123456, -2, -300,
        1.5,
                       0xDEADBEEF, 0xDEADBE, int.from_bytes(struct.pack("<i", -123456)[:3],
                           "little",
                                                            signed=True)]
    for bad in ["Buffer.alloc(2).readUInt32LE(0)", "Buffer.alloc(2).readUInt8(2)",
                "Buffer.alloc(2).writeUInt8(256, 0)", "Buffer.alloc(4).writeInt16BE(40000)"]:
        assert "RangeError" in js.error(bad), bad


# ---- URL -----------------------------------------------------------------------------------------

URL_FIELDS = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port",
              "pathname", "search", "hash"]


def url_parts(js: JS, url: str, base: str | None = None) -> dict[str, str]:
    args = json.dumps(url) + (f", {json.dumps(base)}" if base is not None else "")
    fields = f"Object.fromEntries({URL_FIELDS}.map((k) => [k, u[k]]))"
    got: dict[str, str] = js.json(f"(() => {{ const u = new URL({args}); return {fields}; }})()")
    return got


@pytest.mark.parametrize(("url", "base", "href"), [
    ("../x?y#z", "https://a.b/c/d/e", "https://a.b/c/x?y#z"),
    ("g", "http://a/b/c/d;p?q", "http://a/b/c/g"),
    ("./g/", "http://a/b/c/d;p?q", "http://a/b/c/g/"),
    ("/g", "http://a/b/c/d;p?q", "http://a/g"),
    ("//g", "http://a/b/c/d;p?q", "http://g/"),
    ("?y", "http://a/b/c/d;p?q", "http://a/b/c/d;p?y"),
    ("#s", "http://a/b/c/d;p?q", "http://a/b/c/d;p?q#s"),
    ("", "http://a/b/c/d;p?q#f", "http://a/b/c/d;p?q"),
    ("../../../g", "http://a/b/c/d;p?q", "http://a/g"),
    ("g;x=1/../y", "http://a/b/c/d;p?q", "http://a/b/c/y"),
    ("%2e%2E/x", "http://a/b/c", "http://a/x"),
    ("\\\\x\\hello", "http://example.org/foo/bar", "http://x/hello"),
    ("http:foo.com", "http://example.org/foo/bar", "http://example.org/foo/foo.com"),
    ("https:x", "http://example.org/", "https://x/"),
    ("\t\n http://EXAMPLE.com:80/a b/./c/../d?q r#f g ", None,
        "http://example.com/a%20b/d?q%20r#f%20g"),
    ("https://example.com:443/", None, "https://example.com/"),
    ("https://example.com:444/", None, "https://example.com:444/"),
    ("ws://x:80/", None, "ws://x/"),
    ("ftp://x:21", None, "ftp://x/"),
    ("http://user:p@ss@host/", None, "http://user:p%40ss@host/"),
    ("http://a/x\"<>`{}|^", None, "http://a/x%22%3C%3E%60%7B%7D|%5E"),
    ("http://a/?x\"'<>`", None, "http://a/?x%22%27%3C%3E`"),
    ("foo://a/?x'", None, "foo://a/?x'"),
    ("http://x/é?é#é", None, "http://x/%C3%A9?%C3%A9#%C3%A9"),
    ("http://0x7f.1/", None, "http://127.0.0.1/"),
    ("http://4294967295", None, "http://255.255.255.255/"),
    ("http://[1:0:0:2:0:0:0:1]:8080/", None, "http://[1:0:0:2::1]:8080/"),
    ("http://[::ffff:1.2.3.4]", None, "http://[::ffff:102:304]/"),
    ("http://ex%41mple.com/", None, "http://example.com/"),
    ("http://münchen.de/", None, "http://xn--mnchen-3ya.de/"),
    ("mailto:a b@c.d?subject=x y", None, "mailto:a b@c.d?subject=x%20y"),
    ("data:text/plain,hi there", None, "data:text/plain,hi there"),
    ("foo://Host/p/../q", None, "foo://Host/q"),
    ("non-spec:/.//x", None, "non-spec:/.//x"),
    ("file:///C:/a/../../b", None, "file:///C:/b"),
    ("file://localhost/etc/hosts", None, "file:///etc/hosts"),
    ("/y", "file:///C:/a/b", "file:///C:/y"),
])
def test_url_parsing(js: JS, url: str, base: str | None, href: str) -> None:
    assert url_parts(js, url, base)["href"] == href


def test_url_components(js: JS) -> None:
    assert url_parts(js, "https://user:pw@Example.COM:8443/a/b?x=1&y=2#frag") == {
        "href": "https://user:pw@example.com:8443/a/b?x=1&y=2#frag",
            "origin": "https://example.com:8443",
        "protocol": "https:", "username": "user", "password": "pw", "host": "example.com:8443",
        "hostname": "example.com", "port": "8443", "pathname": "/a/b", "search": "?x=1&y=2",
            "hash": "#frag"}
    assert url_parts(js, "http://example.com:80")["port"] == ""
    assert url_parts(js, "foo:bar?q")["origin"] == "null"
    assert url_parts(js, "blob:https://a.b:8/uuid")["origin"] == "https://a.b:8"
    assert url_parts(js, "file:///x")["origin"] == "null"
    assert url_parts(js, "http://a/?")["search"] == ""
    assert url_parts(js, "http://a/?")["href"] == "http://a/?"


@pytest.mark.parametrize("bad", ["", "nope", "http://", "http://a b/", "http://[::1",
    "http://x:65536/",
                                 "http://x:b/", "http://1.2.3.256/", "//x", "http://a%/"])
def test_invalid_url_throws_type_error(js: JS, bad: str) -> None:
    assert js.json(f"""(() => {{ try {{ new URL({json.dumps(bad)}); return null; }}
        catch (e) {{ return [e instanceof TypeError, e.message, URL.canParse({json.dumps(bad)}),
                            URL.parse({json.dumps(bad)})]; }} }})()""") == [True, "Invalid URL",
                                False, None]


def test_url_statics_and_serialisation(js: JS) -> None:
    assert js.json("""[URL.canParse('x', 'http://y/'), URL.parse('/p', 'http://h').href,
        new URL('http://x/y').toJSON(), JSON.stringify({u: new URL('http://x/y?z')}),
            String(new URL('http://x')),
        (() => { try { new URL('/x',
            'nope'); } catch (e) { return e instanceof TypeError; } })()]""") == [
        True, "http://h/p", "http://x/y", '{"u":"http://x/y?z"}', "http://x/", True]


def test_url_setters(js: JS) -> None:
    assert js.json("""(() => {
        const u = new URL('https://user:pw@example.com:8080/a/b?x=1#frag'), out = [];
        const snap = () => out.push(u.href);
        u.protocol = 'http'; snap();
        u.protocol = 'foo'; snap();
        u.port = '80'; snap();
        u.port = '99999'; snap();
        u.host = 'other.org:81'; snap();
        u.hostname = 'EXAMPLE.net'; snap();
        u.username = 'a b'; u.password = 'p@ss'; snap();
        u.pathname = '/new path/./x/../y'; snap();
        u.search = 'q=1 2'; snap();
        u.hash = 'h i'; snap();
        u.hash = ''; u.search = ''; snap();
        u.href = 'wss://h:443/p'; snap();
        return out;
    })()""") == [
        "http://user:pw@example.com:8080/a/b?x=1#frag",
        "http://user:pw@example.com:8080/a/b?x=1#frag",
        "http://user:pw@example.com/a/b?x=1#frag",
        "http://user:pw@example.com/a/b?x=1#frag",
        "http://user:pw@other.org:81/a/b?x=1#frag",
        "http://user:pw@example.net:81/a/b?x=1#frag",
        "http://a%20b:p%40ss@example.net:81/a/b?x=1#frag",
        "http://a%20b:p%40ss@example.net:81/new%20path/y?x=1#frag",
        "http://a%20b:p%40ss@example.net:81/new%20path/y?q=1%202#frag",
        "http://a%20b:p%40ss@example.net:81/new%20path/y?q=1%202#h%20i",
        "http://a%20b:p%40ss@example.net:81/new%20path/y",
        "wss://h/p"]
    assert "Invalid URL" in js.error("new URL('http://x').href = 'nope'")


def test_url_search_params_are_live_both_ways(js: JS) -> None:
    assert js.json("""(() => {
        const u = new URL('https://x.y/p?a=1&b=2#h'), sp = u.searchParams, out = [];
        out.push(sp.get('a'), u.searchParams === sp);
        sp.append('c', 'd e&f=g'); out.push(u.href);
        sp.delete('a'); sp.set('b', 'é'); out.push(u.search);
        sp.delete('b'); sp.delete('c'); out.push(u.href);
        u.search = '?q=1&r=2'; out.push(sp.get('r'), sp.size);
        u.href = 'http://z/?k=v'; out.push(sp.get('k'), sp.has('q'));
        u.search = ''; out.push(sp.size, u.href);
        return out;
    })()""") == ["1", True, "https://x.y/p?a=1&b=2&c=d+e%26f%3Dg#h", "?b=%C3%A9&c=d+e%26f%3Dg",
                 "https://x.y/p#h", "2", 2, "v", False, 0, "http://z/"]


# ---- URLSearchParams -------------------------------------------------------------------------


def test_url_search_params_encoding(js: JS) -> None:
    assert js.json("""[new URLSearchParams({q: 'a b&c=d', u: 'é😀', s: "~!*()'-._",
        p: '+%'}).toString(),
        new URLSearchParams('?a=b+c%20d&e%3D=f%26&&=x&y=&z&%zz=%E9').toString(),
        [...new URLSearchParams('a=b+c%20d&e%3D=f%26&&=x&y=&z&bad=%zz&lat=%E9')],
        new URLSearchParams('a=\\uD800').toString()]""") == [
        "q=a+b%26c%3Dd&u=%C3%A9%F0%9F%98%80&s=%7E%21*%28%29%27-._&p=%2B%25",
        "a=b+c+d&e%3D=f%26&=x&y=&z=&%25zz=%EF%BF%BD",
        [["a", "b c d"], ["e=", "f&"], ["", "x"], ["y", ""], ["z", ""], ["bad", "%zz"], ["lat",
            "\ufffd"]],
        "a=%EF%BF%BD"]


def test_url_search_params_methods(js: JS) -> None:
    assert js.json("""(() => {
        const p = new URLSearchParams([['a', '1'], ['b', '2'], ['a', '3']]), out = [];
        out.push(p.get('a'), p.getAll('a'), p.get('zz'), p.has('b'), p.has('a', '3'), p.has('a',
            '9'), p.size);
        p.set('a', 'x'); out.push(p.toString());
        p.append('c', 'y z'); p.delete('b'); out.push(p.toString());
        p.append('a', 'w'); p.delete('a', 'x'); out.push(p.toString());
        const q = new URLSearchParams('z=1&b=2&a=3&b=1&a=0'); q.sort(); out.push(q.toString());
        const seen = []; q.forEach((v, k, self) => seen.push(k + v + (self === q)));
        out.push(seen, [...q.keys()], [...q.values()], [...q.entries()].length, [...q].length);
        out.push(URLSearchParams.prototype[Symbol.iterator] === URLSearchParams.prototype.entries);
        out.push(new URLSearchParams(new URLSearchParams('x=1&x=2')).getAll('x'));
        return out;
    })()""") == ["1", ["1", "3"], None, True, True, False, 3, "a=x&b=2", "a=x&c=y+z", "c=y+z&a=w",
                 "a=3&a=0&b=2&b=1&z=1", ["a3true", "a0true", "b2true", "b1true", "z1true"],
                 ["a", "a", "b", "b", "z"], ["3", "0", "2", "1", "1"], 5, 5, True, ["1", "2"]]
    assert "TypeError" in js.error("new URLSearchParams([['a', 'b', 'c']])")


# ---- structuredClone ----------------------------------------------------------------------------


def test_structured_clone_of_a_cyclic_graph(js: JS) -> None:
    assert js.json("""(() => {
        const shared = new ArrayBuffer(8), bytes = new Uint8Array(shared, 2, 4),
            words = new Uint16Array(shared);
        bytes[0] = 7;
        const o = {n: 1, s: 'x', big: 10n, nul: null, und: undefined, d: new Date(5), r: /x+/gi,
            m: new Map([[1, {x: 1}], ['k', 'v']]), set: new Set([1, 'a']), bytes, words,
                dv: new DataView(shared, 1, 2),
            arr: [1, , 3], err: new RangeError('bad'), boxed: [new Number(3), new String('s'),
                new Boolean(false)]};
        o.self = o; o.m.set('back', o); o.again = o.arr;
        const c = structuredClone(o);
        return [c !== o, c.self === c, c.m.get('back') === c, c.again === c.arr, typeof c.big,
            c.nul, 'und' in c,
            c.d instanceof Date && c.d.getTime(), String(c.r), c.m.get(1).x,
                c.m.get(1) !== o.m.get(1), [...c.set],
            c.bytes.buffer === c.words.buffer, c.bytes.buffer === c.dv.buffer,
                c.bytes.buffer !== shared,
            c.bytes.byteOffset, Array.from(c.bytes), c.dv.byteOffset, c.arr.length, 1 in c.arr,
            c.err instanceof RangeError, c.err.message, c.boxed.map((b) => [typeof b, String(b)])];
    })()""") == [True, True, True, True, "bigint", None, True, 5, "/x+/gi", 1, True, [1, "a"],
        True, True,
                 True, 2, [7, 0, 0, 0], 1, 3, False, True, "bad",
                 [["object", "3"], ["object", "s"], ["object", "false"]]]


def test_structured_clone_edges(js: JS) -> None:
    assert js.json("""(() => {
        class K { constructor() { this.a = 1; } get b() { return 2; } }
        const k = structuredClone(new K()),
            p = structuredClone(JSON.parse('{"__proto__": {"x": 1}}'));
        const ab = new ArrayBuffer(4), moved = structuredClone(ab, {transfer: [ab]});
        return [Object.getPrototypeOf(k) === Object.prototype, k.a, k.b, Object.keys(p),
            Object.getPrototypeOf(p) === Object.prototype, ab.byteLength, moved.byteLength,
            structuredClone(5), structuredClone('s'), structuredClone(null)];
    })()""") == [True, 1, None, ["__proto__"], True, 0, 4, 5, "s", None]


@pytest.mark.parametrize("value", ["() => 1", "function f() {}", "Symbol('s')",
    "{a: {b: [() => 1]}}",
                                   "new WeakMap()", "Promise.resolve()", "{s: Symbol.iterator}"])
def test_structured_clone_refuses_like_browsers(js: JS, value: str) -> None:
    assert js.json(f"""(() => {{ try {{ structuredClone({value}); return null; }}
        catch (e) {{ return [e.name, e.code, e instanceof DOMException,
            e instanceof Error]; }} }})()""") == [
        "DataCloneError", 25, True, True]


# ---- Event, EventTarget, AbortController, AbortSignal, DOMException -----------------------------


def test_abort_controller_events(js: JS) -> None:
    assert js.json("""(() => {
        const c = new AbortController(), s = c.signal, log = [];
        s.onabort = function (e) { log.push('on:' + e.type + ':' + (this === s)); };
        s.addEventListener('abort', (e) => log.push(['l', e.isTrusted, e.target === s,
            e.currentTarget === s]));
        s.addEventListener('abort', () => log.push('once'), {once: true});
        const gone = () => log.push('removed');
        s.addEventListener('abort', gone);
        s.removeEventListener('abort', gone);
        const before = [s.aborted, s.reason];
        c.abort();
        c.abort('again');
        let thrown;
        try { s.throwIfAborted(); } catch (e) { thrown = e === s.reason; }
        return [before, s.aborted, s.reason.name, s.reason.message,
            s.reason instanceof DOMException,
            s.reason.code, thrown, log];
    })()""") == [[False, None], True, "AbortError", "This operation was aborted", True, 20, True,
                 ["on:abort:true", ["l", True, True, True], "once"]]


def test_abort_signal_statics(js: JS) -> None:
    assert js.json("""(() => {
        const s = AbortSignal.abort('why'), d = AbortSignal.abort();
        const a = new AbortController(), b = new AbortController(),
            any = AbortSignal.any([a.signal, b.signal]);
        const log = [];
        any.onabort = () => log.push(any.reason);
        b.abort('B');
        a.abort('A');
        const c = new AbortController();
        c.abort(42);
        let thrown;
        try { c.signal.throwIfAborted(); } catch (e) { thrown = e; }
        return [s.aborted, s.reason, d.reason.name, any.aborted, any.reason, log, thrown,
            AbortSignal.any([s]).reason];
    })()""") == [True, "why", "AbortError", True, "B", ["B"], 42, "why"]


def test_abort_signal_timeout_uses_set_timeout(js: JS) -> None:
    promise = js.eval("""new Promise((resolve) => {
        const s = AbortSignal.timeout(5);
        const early = s.aborted;
        s.addEventListener('abort', () => resolve(JSON.stringify([early, s.aborted, s.reason.name,
            s.reason instanceof DOMException, s.reason.code])));
    })""")
    assert json.loads(promise.get(timeout=10)) == [False, True, "TimeoutError", True, 23]
    js.eval("globalThis.setTimeout = undefined")
    assert js.eval("AbortSignal.timeout(1).aborted") is False
    assert "TypeError" in js.error("AbortSignal.timeout(-1)")


def test_event_target(js: JS) -> None:
    assert js.json("""(() => {
        const t = new EventTarget(), log = [], c = new AbortController();
        t.addEventListener('x', (e) => { log.push(1); e.stopImmediatePropagation(); });
        t.addEventListener('x', () => log.push(2));
        const obj = {handleEvent(e) { log.push(this === obj ? 'obj' : 'no'); }};
        t.addEventListener('y', obj);
        t.addEventListener('y', () => log.push('sig'), {signal: c.signal});
        t.addEventListener('y', () => { throw new Error('reported, not thrown'); });
        const e = new Event('x', {cancelable: true});
        t.addEventListener('x', (ev) => ev.preventDefault());
        const r1 = t.dispatchEvent(e);
        t.dispatchEvent(new Event('y'));
        c.abort();
        const r2 = t.dispatchEvent(new Event('y'));
        const p = new Event('p');
        p.preventDefault();
        return [log, r1, e.defaultPrevented, e.eventPhase, e.currentTarget, e.target === t,
            e.isTrusted, r2,
            p.defaultPrevented, Event.AT_TARGET, new Event('q').type, typeof e.timeStamp];
    })()""") == [[1, "obj", "sig", "obj"], True, False, 0, None, True, False, True, False, 2,
        "q", "number"]
    assert "TypeError" in js.error("new EventTarget().dispatchEvent({type: 'x'})")
    assert "TypeError" in js.error("new Event()")


def test_dom_exception(js: JS) -> None:
    assert js.json("""(() => {
        const e = new DOMException('m', 'NotFoundError'), d = new DOMException();
        return [e.name, e.message, e.code, String(e), e instanceof Error,
            Object.prototype.toString.call(e),
            d.name, d.message, d.code, new DOMException('x', 'Custom').code, typeof e.stack,
            e.stack.split('\\n')[0], new DOMException('c', {name: 'DataCloneError',
                cause: 1}).cause];
    })()""") == ["NotFoundError", "m", 8, "NotFoundError: m", True, "[object DOMException]",
        "Error", "", 0, 0,
                 "string", "NotFoundError: m", 1]


# ---- cost ---------------------------------------------------------------------------------------


def test_measure_evaluation_cost(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints what evaluating the web APIs and helpers costs in a fresh context (once per
    warm isolate; once per run with Isolation: fresh); asserts nothing timed."""
    runs = 30

    def per_context(code: str) -> float:
        times = []
        for _ in range(runs):
            with MiniRacer() as mr:
                mr.eval("0")
                start = time.perf_counter()
                mr.eval(code)
                times.append(time.perf_counter() - start)
        return sorted(times)[runs // 2] * 1000

    bare, full = per_context("1"), per_context(SOURCE)
    with capsys.disabled():
        print(f"\nthe web APIs and helpers ({len(SOURCE.encode())} bytes): eval {full:.3f} ms per "
              f"fresh context, {full - bare:.3f} ms over a trivial eval (median of {runs})")
