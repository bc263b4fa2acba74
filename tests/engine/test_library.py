"""The polyfills' chunk bodies reach a hub context as shared memory (the library),
not as script text: V8 is never given them to scan, yet every API still works."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hub.engine import sandbox

USES_EVERY_CHUNK = """
const u = new URL('https://example.org/a?b=1#c');
const sp = new URLSearchParams('x=1&x=2');
const ab = new AbortController(); ab.abort('why');
return [u.searchParams.get('b'), sp.getAll('x'), Buffer.from('hé').toString('hex'),
        new TextDecoder().decode(new TextEncoder().encode('ünï')), atob(btoa('ok')),
        structuredClone(new Map([[1, {d: 2}]])).get(1).d, ab.signal.reason,
        new DOMException('m', 'AbortError').code, typeof new EventTarget().addEventListener]
"""


def run(source: str) -> Any:
    async def go() -> Any:
        prepared = await sandbox.prepare_context()
        try:
            spec: dict[str, Any] = {"params": {}, "request": {"method": "GET"}, "limits": {},
                                    "approved": [], "named": []}
            return await sandbox.run_in_context(prepared, source, spec, 64)
        finally:
            prepared.close()

    return asyncio.run(go())


def test_the_script_carries_no_chunk_body_and_the_library_has_them_all() -> None:
    library = sandbox.LIBRARY.decode("utf-16-le")
    assert len(library) > 50_000
    for name, (start, length) in sandbox._LIBRARY_INDEX.items():
        body = library[start:start + length]
        assert body.startswith("'use strict';"), name
        assert body[:400] not in sandbox._SANDBOX, name
    assert sorted(sandbox._LIBRARY_INDEX) == [
        "base", "buffer", "bytes", "clone", "crypto", "events", "prelude", "url"]
    assert "/*@library" not in sandbox._SANDBOX and "0/*@" not in sandbox._SANDBOX


def test_the_script_v8_is_given_is_ascii() -> None:
    # One character past Latin-1 and V8 decodes the whole script into a two-byte
    # string, and Python re-encodes it on every eval: ~10% of a context's set-up.
    assert sandbox._SANDBOX.isascii(), [c for c in sandbox._SANDBOX if not c.isascii()]


def test_only_a_debug_run_compiles_the_debugger_runtime() -> None:
    assert "__webjob_debug_runtime = (bridge)" not in sandbox._SANDBOX
    outcome = run("return [typeof __dbg, typeof globalThis.__webjob_debug_runtime]")
    assert json.loads(outcome.body) == ["undefined", "undefined"]


def test_every_polyfill_works_from_the_library() -> None:
    outcome = run(USES_EVERY_CHUNK)
    assert outcome.meta["ok"], outcome.meta
    assert json.loads(outcome.body) == ["1", ["1", "2"], "68c3a9", "ünï", "ok", 2, "why", 20,
                                        "function"]


def test_the_library_hook_is_gone_before_the_job_runs() -> None:
    outcome = run("return typeof globalThis.__webjob_library")
    assert json.loads(outcome.body) == "undefined"
    outcome = run("return typeof globalThis.__webjob_library_text")
    assert json.loads(outcome.body) == "undefined"


def test_crypto_is_compiled_from_the_library() -> None:
    library = sandbox.LIBRARY.decode("utf-16-le")
    start, length = sandbox._LIBRARY_INDEX["crypto"]
    body = library[start:start + length]
    assert "function sha512(" in body and "function randomUUID(" in body
    assert "function sha512(" not in sandbox._SANDBOX
    assert "SRC.crypto = () => {/**/};" in sandbox._SANDBOX
    outcome = run("return [crypto.hash('sha256', 'abc'), crypto.hash('sha1', 'abc'), "
                  "crypto.hmac('sha512', 'k', 'd').length, crypto.randomUUID().length]")
    assert outcome.meta["ok"], outcome.meta
    assert json.loads(outcome.body) == [
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "a9993e364706816aba3e25717850c26c9cd0d89d", 128, 36]


def test_crypto_js_on_its_own_reads_its_comment() -> None:
    from importlib import resources

    from py_mini_racer import MiniRacer

    js = resources.files("hub.engine") / "js"
    with MiniRacer() as mr:
        mr.eval((js / "bytes.js").read_text(encoding="utf-8"))
        mr.eval((js / "crypto.js").read_text(encoding="utf-8"))
        got = mr.eval("globalThis.__webjob_crypto.crypto.hash('sha1', 'abc')")
    assert got == "a9993e364706816aba3e25717850c26c9cd0d89d"
