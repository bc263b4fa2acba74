"""Text that UTF-8 cannot carry (a lone UTF-16 surrogate) is never an error of the
engine: it crosses the worker protocol, both ways, as U+FFFD.

A lone surrogate is valid JSON (``"\\ud800"``) and a valid JavaScript string, so it
arrives from a request and a job makes one as easily (``'😀'.slice(0, 1)``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine import protocol
from hub.engine.engine import EngineConfig, RunRequest, RunResult, RunState
from shared.text import clean_json, clean_text
from tests.engine.conftest import EngineHarness, body_json

LONE = "\ud800"
FFFD = "\ufffd"


class EchoHost:
    """Answers every bridge call with what it was sent, and keeps it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        self.calls.append((op, args))
        return {"echoed": args, "made": "r\udc00"}


@pytest.fixture(scope="module")
def echo() -> Iterator[tuple[EngineHarness, EchoHost]]:
    host = EchoHost()
    harness = EngineHarness(EngineConfig(max_concurrent=2, spare_workers=1), host)
    yield harness, host
    harness.close()


def assert_pool_full(harness: EngineHarness) -> None:
    """A run works, no run that is over keeps its place, a run could be placed now, and
    every worker is there (or its replacement starting)."""
    assert body_json(harness.run("return 'still here'")) == "still here"
    pool = harness.engine.pool

    async def places_back() -> None:
        async with asyncio.timeout(5):  # a worker's last report is read within this
            while pool.counts()["runs"]:
                await asyncio.sleep(0.01)
    harness.call(places_back())
    assert harness.call(pool.wait_placeable(5))
    assert len(pool._all) + pool._starting == pool.size


def test_the_reported_attack_leaks_no_place(engine: EngineHarness) -> None:
    # More runs than the pool has places: each used to leak one (a whole worker, when a
    # worker held one run), then runs hung.
    pool = engine.engine.pool
    for _ in range(pool.busy_limit * pool.runs_per_worker + 1):
        result = engine.run("return { who: params.who }", params={"who": LONE})
        assert body_json(result) == {"who": FFFD}
    assert_pool_full(engine)


def test_request_and_spec_text_reach_the_job_as_fffd(engine: EngineHarness) -> None:
    request = {"method": "POST", "path": "/x\udfff", "headers": {"x-h": "a\ud800b"},
               "caller": {"kind": "anonymous", "name": LONE}}
    result = engine.run("return [request.path, request.headers['x-h'], request.caller.name,"
                        " params[Object.keys(params)[0]]]",
                        request=request, params={"k\udc00": ["\ud83d"]})
    assert body_json(result) == ["/x" + FFFD, "a" + FFFD + "b", FFFD, [FFFD]]


@pytest.mark.parametrize("source, body", [
    ("return 'x\\ud800y'", '"x\ufffdy"'),
    ("return { ['k\\udc00']: '😀'.slice(0, 1) }", '{"k\ufffd":"\ufffd"}'),
    ("return response.json(['\\\\ud800', '\\ud800'])", '["\\\\ud800","\ufffd"]'),
    ("return response.text('a\\ud800')", "a\ufffd"),
    # Long enough to come back through V8 rather than the outcome's shared memory.
    ("return response.html('<p>\\udc00</p>'.repeat(2000))", "<p>\ufffd</p>" * 2000),
], ids=["json", "key", "escaped-backslash", "text", "long-html"])
def test_what_a_job_makes_comes_back_as_fffd(engine: EngineHarness, source: str,
                                             body: str) -> None:
    result = engine.run(source)
    assert result.ok, result.error
    assert result.body.decode("utf-8") == body


@pytest.mark.parametrize("live", [False, True], ids=["kept", "live"])
def test_console_lines_carry_fffd(engine: EngineHarness, live: bool) -> None:
    result = engine.run("console.log('😀😀'.slice(0, 3)); console.warn('%s!', '\\udc00'); "
                        "return 1", live=live)
    assert body_json(result) == 1
    assert [line.message for line in result.logs] == ["😀" + FFFD, FFFD + "!"]
    if live:
        assert [line.message for line in result.streamed] == ["😀" + FFFD, FFFD + "!"]


def test_a_thrown_message_carries_fffd_and_ends_at_once(engine: EngineHarness) -> None:
    result = engine.run("await null; throw new Error('bad \\ud800 news')")
    assert result.error is not None and result.error.code == "JOB-001"
    assert "bad \ufffd news" in result.error.message
    assert result.runtime_ms < 1000


def test_raw_response_headers_carry_fffd(engine: EngineHarness) -> None:
    result = engine.run("return response.raw('x', { 'X-Note': 'a\\udc00' }, 201)")
    assert result.ok and result.meta["headers"] == {"X-Note": "a" + FFFD}
    assert result.meta["status"] == 201


def test_bridge_calls_and_replies_carry_fffd(echo: tuple[EngineHarness, EchoHost]) -> None:
    harness, host = echo
    result = harness.run("const r = await db.exec('SELECT \\ud800', ['p\\udc00']); "
                         "return [r.echoed.sql, r.made]")
    assert body_json(result) == ["SELECT " + FFFD, "r" + FFFD]
    assert host.calls[-1] == ("db.exec", {"sql": "SELECT " + FFFD, "params": ["p" + FFFD]})
    harness.run("try { await http('https://example.org/\\ud800') } catch (e) {} return 1")
    assert host.calls[-1][1]["url"] == "https://example.org/" + FFFD


def test_a_syntax_check_of_such_text_works(engine: EngineHarness) -> None:
    assert engine.call(engine.engine.check_syntax(f"return '{LONE}'"))["ok"] is True
    bad = engine.call(engine.engine.check_syntax(f"return '{LONE}' +"))
    assert bad["ok"] is False
    assert_pool_full(engine)


_ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=12)


@settings(max_examples=40, deadline=None)
@given(params=st.dictionaries(_ANY_TEXT, _ANY_TEXT | st.lists(_ANY_TEXT, max_size=3), max_size=3))
def test_any_text_in_params_comes_back_clean(engine: EngineHarness, params: dict[str, Any]) -> None:
    result: RunResult = engine.run("console.log(JSON.stringify(params)); return params",
                                   params=params)
    assert body_json(result) == clean_json(params)
    assert json.loads(result.logs[0].message) == clean_json(params)


@given(text=_ANY_TEXT)
def test_the_protocol_encodes_any_text(text: str) -> None:
    line = protocol.encode({"t": "log", "lines": [["log", text, 0]], "x": {text: [text]}})
    clean = clean_text(text)
    assert protocol.decode(line) == {"t": "log", "lines": [["log", clean, 0]],
                                     "x": {clean: [clean]}}


@given(text=_ANY_TEXT)
def test_a_lying_peer_cannot_send_a_lone_surrogate(text: str) -> None:
    # json.dumps escapes (ASCII): a lone surrogate arrives as "\udXXX".
    line = json.dumps({"m": text}).encode() + b"\n"
    assert protocol.decode(line) == {"m": clean_text(text)}


def js_stringify(value: Any) -> bytes:
    """JSON as V8's JSON.stringify writes it: a surrogate pair as its character,
    only a lone surrogate as an escape."""
    text = json.dumps(value, ensure_ascii=False)
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) < 0xE000 else c
                   for c in joined).encode()


@given(text=_ANY_TEXT)
def test_stringified_json_is_cleaned_of_lone_escapes(text: str) -> None:
    cleaned = protocol.clean_json_text(js_stringify([text, "\\" + text, {text: "\\\\"}]))
    clean = clean_text(text)
    assert json.loads(cleaned) == [clean, "\\" + clean, {clean: "\\\\"}]
