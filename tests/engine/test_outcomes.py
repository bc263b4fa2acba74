"""How a run ends: results, responses and every failure kind, without HTTP."""

from __future__ import annotations

import json
import time

import pytest

from tests.engine.conftest import EngineHarness, body_json


def test_plain_value_is_json(engine: EngineHarness) -> None:
    result = engine.run('return { pong: String(params.who || "world") }', params={"who": "ann"})
    assert result.ok and result.meta["type"] == "json" and result.meta["status"] == 200
    assert body_json(result) == {"pong": "ann"}


def test_pretty_json_when_asked(engine: EngineHarness) -> None:
    result = engine.run("return { a: [1, 2] }", pretty=True)
    assert result.body.decode() == json.dumps({"a": [1, 2]}, indent=2)


@pytest.mark.parametrize(("source", "rtype", "fmt", "status"), [
    ('return response.html("<b>x</b>")', "html", "text/html; charset=utf-8", 200),
    ('return response.text("ok", 201)', "text", "text/plain; charset=utf-8", 201),
    ('return response.csv("a,b\\n1,2", "s.csv")', "csv", "text/csv; charset=utf-8", 200),
    ('return response.json({ status: "nf" }, 404)', "json", "application/json", 404),
    ('return response.redirect("/next")', "redirect", "text/plain; charset=utf-8", 302),
])
def test_response_builders(engine: EngineHarness, source: str, rtype: str, fmt: str,
                           status: int) -> None:
    result = engine.run(source)
    assert result.ok and result.error is None
    meta = result.meta
    assert (meta["type"], meta["format"], meta["status"]) == (rtype, fmt, status)


def test_binary_responses_arrive_as_bytes(engine: EngineHarness) -> None:
    result = engine.run('return response.file(new Uint8Array([0, 255, 7]), "x.bin", "image/png")')
    assert result.meta["encoding"] == "binary" and result.meta["filename"] == "x.bin"
    assert result.body == bytes([0, 255, 7])
    given = engine.run('return response.pdf("JVBERi0=", "r.pdf")')
    assert given.body == b"%PDF-"


def test_a_body_that_is_not_base64_is_a_clear_failure(engine: EngineHarness) -> None:
    result = engine.run('return response.pdf("not base64!!", "r.pdf")')
    assert result.error is not None and result.error.code == "JOB-001"
    assert "base64" in result.error.message


def test_no_return_is_job_004(engine: EngineHarness) -> None:
    result = engine.run("const x = 1")
    assert result.error is not None and result.error.code == "JOB-004"


def test_throw_is_job_001_with_line(engine: EngineHarness) -> None:
    result = engine.run('const a = 1\n\nthrow new Error("boom")')
    assert result.error is not None and result.error.code == "JOB-001"
    assert result.error.message == "Error: boom (line 3)" and result.error.line == 3


def test_syntax_error_has_line_and_column(engine: EngineHarness) -> None:
    result = engine.run("const a = 1\nlet b = ;")
    assert result.error is not None and result.error.code == "JOB-001"
    assert (result.error.line, result.error.column) == (2, 9)
    assert "SyntaxError" in result.error.message


def test_syntax_error_column_on_first_line_is_the_jobs_own(engine: EngineHarness) -> None:
    result = engine.run("let b = ;")
    assert result.error is not None and (result.error.line, result.error.column) == (1, 9)


def test_uncaught_rejection_fails_at_once(engine: EngineHarness) -> None:
    source = """
new Promise((_, reject) => setTimeout(() => reject(new Error("late")), 10))
await new Promise(r => setTimeout(r, 4000))
return 1"""
    result = engine.run(source)
    assert result.error is not None and result.error.code == "JOB-001"
    assert "late" in result.error.message
    assert result.runtime_ms < 2000  # not after the 4 s sleep


def test_caught_rejection_is_fine(engine: EngineHarness) -> None:
    source = """
const p = Promise.reject(new Error("x"))
try { await p } catch (e) { return { caught: e.message } }"""
    assert body_json(engine.run(source)) == {"caught": "x"}


def test_throw_in_timer_fails_at_once(engine: EngineHarness) -> None:
    source = """
setTimeout(() => { throw new Error("in timer") }, 10)
await new Promise(r => setTimeout(r, 4000))
return 1"""
    result = engine.run(source)
    assert result.error is not None and "in timer" in result.error.message
    assert result.runtime_ms < 2000


def test_success_false_fails_without_sending_the_payload(engine: EngineHarness) -> None:
    result = engine.run('return { success: false, error: "nope", secret: 1 }')
    assert result.error is not None and result.error.code == "JOB-001"
    assert result.error.message == "nope" and result.body == b""


@pytest.mark.parametrize("source", ["const a = {}; a.a = a; return a", "return 10n",
                                    "return { toJSON() { throw new Error('no') } }"])
def test_unserialisable_result_is_a_clear_job_001(engine: EngineHarness, source: str) -> None:
    result = engine.run(source)
    assert result.error is not None and result.error.code == "JOB-001"
    assert "cannot be sent as JSON" in result.error.message


def test_require_is_job_002(engine: EngineHarness) -> None:
    result = engine.run('const fs = require("fs")\nreturn 1')
    assert result.error is not None and result.error.code == "JOB-002"
    assert "'fs'" in result.error.message


def test_console_lines_are_timed_and_levelled(engine: EngineHarness) -> None:
    source = """
console.log("a", { x: 1 }); console.info("i"); console.debug("d"); console.warn("w")
console.error("e %s=%d", "n", 5)
return 1"""
    result = engine.run(source)
    assert [(ln.level, ln.message) for ln in result.logs] == [
        ("log", 'a {"x":1}'), ("info", "i"), ("debug", "d"), ("warn", "w"), ("error", "e n=5")]
    assert all(0 <= ln.t < 1000 for ln in result.logs)


def test_console_streams_live_before_the_run_ends(engine: EngineHarness) -> None:
    source = """
console.log("before the wait")
await new Promise(r => setTimeout(r, 300))
console.log("after")
return 1"""
    result = engine.run(source, live=True)
    streamed = result.streamed  # type: ignore[attr-defined]
    assert [ln.message for ln in streamed] == ["before the wait", "after"]
    assert streamed[0].t < 100 <= 300 <= streamed[1].t


def test_a_live_line_arrives_while_the_job_is_still_busy(engine: EngineHarness) -> None:
    # No await after the line: only the wake-up notifier can hand it on this early.
    arrived: list[float] = []
    source = """
console.log("before the busy loop")
const start = Date.now()
while (Date.now() - start < 600) {}
return typeof globalThis.__webjob_wake"""
    result = engine.run(source, on_log=lambda _line: arrived.append(time.monotonic()))
    ended = time.monotonic()
    assert body_json(result) == "undefined"  # the notifier itself stays out of reach
    assert [ln.message for ln in result.logs] == ["before the busy loop"]
    assert len(arrived) == 1 and arrived[0] < ended - 0.3


def test_job_globals(engine: EngineHarness) -> None:
    source = """
breakpoint(); debugger;
return { params, method: request.method, caller: request.caller, userID, isAuthenticated,
         limits, types: [typeof Buffer, typeof URL, typeof URLSearchParams, typeof TextEncoder,
         typeof TextDecoder, typeof atob, typeof btoa, typeof structuredClone,
         typeof AbortController, typeof setInterval, typeof clearInterval] }"""
    out = body_json(engine.run(source, params={"q": "1"}))
    assert out["params"] == {"q": "1"} and out["method"] == "GET"
    assert out["caller"] == {"kind": "anonymous"} and out["userID"] is None
    assert out["isAuthenticated"] is False
    assert out["limits"] == {"runtimeMs": 5000, "memoryMb": 128, "cpuMs": 2000}
    assert set(out["types"]) == {"function"}


def test_each_run_gets_a_fresh_context(engine: EngineHarness) -> None:
    engine.run("globalThis.leftover = 42; Object.prototype.polluted = 1; return 1")
    for _ in range(4):  # whichever worker serves it
        out = body_json(engine.run("return [typeof leftover, typeof ({}).polluted]"))
        assert out == ["undefined", "undefined"]


def test_sign_and_verify(engine: EngineHarness) -> None:
    source = """
const token = sign({ uid: 7 }, 60)
const tampered = token.slice(0, -2) + (token.endsWith("A") ? "BB" : "AA")
return { ok: verify(token), tampered: verify(tampered), junk: verify("x.y"), none: verify(5) }"""
    assert body_json(engine.run(source)) == {"ok": {"uid": 7}, "tampered": None, "junk": None,
                                             "none": None}


def test_tokens_verify_across_runs_with_the_same_key(engine: EngineHarness) -> None:
    token = body_json(engine.run('return sign({ step: "shifts" })'))
    assert body_json(engine.run("return verify(params.t)", params={"t": token})) == {
        "step": "shifts"}
    other = engine.run("return verify(params.t)", params={"t": token}, sign_key="b3RoZXI=")
    assert other.ok and other.body == b"null"


def test_expired_token_verifies_as_null(engine: EngineHarness) -> None:
    source = """
const token = sign({ a: 1 }, 1)
await new Promise(r => setTimeout(r, 1100))
return verify(token)"""
    assert engine.run(source).body == b"null"


def test_syntax_check_runs_nothing(engine: EngineHarness) -> None:
    good = engine.call(engine.engine.check_syntax("return 1"))
    # the worker's answer (its "t" and the check's "run" id ride along), with no problem in it
    assert good["ok"] is True and not {"message", "line", "column", "code"} & good.keys()
    bad = engine.call(engine.engine.check_syntax("const a = 1\nlet b = ;"))
    assert (bad["ok"], bad["line"], bad["column"]) == (False, 2, 9)
    breakout = engine.call(engine.engine.check_syntax("})(); (async () => {"))
    assert breakout["ok"] is False
