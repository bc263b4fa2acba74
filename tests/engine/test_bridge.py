"""Calls from a job to the host: answered, refused as job errors, and cancelled when
the run that made them ends."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.engine import EngineConfig, RunRequest, RunState
from shared.errors import JobFailed
from tests.engine.conftest import EngineHarness, body_json


class FakeHost:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, str]] = []
        self.cancelled: asyncio.Event | None = None

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        self.calls.append((op, args, run.job_id))
        if op == "echo":
            return {"echoed": args}
        if op == "slow":
            self.cancelled = asyncio.Event()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        raise JobFailed(f"'{op}' is refused by policy", job_code="X-REFUSED")


@pytest.fixture(scope="module")
def bridged() -> Iterator[tuple[EngineHarness, FakeHost]]:
    host = FakeHost()
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=1), host)
    yield harness, host
    harness.close()


def test_an_answer_reaches_the_job(bridged: tuple[EngineHarness, FakeHost]) -> None:
    harness, host = bridged
    out = body_json(harness.run("return await __webjob_host.bridge('echo', { a: [1, 'x'] })"))
    assert out == {"echoed": {"a": [1, "x"]}}
    assert host.calls[-1][0] == "echo"


def test_a_refusal_is_a_job_error_with_its_code(bridged: tuple[EngineHarness, FakeHost]) -> None:
    harness, _ = bridged
    source = """
try { await __webjob_host.bridge('nope', {}) }
catch (e) { return { message: e.message, code: e.code } }"""
    assert body_json(harness.run(source)) == {"message": "'nope' is refused by policy",
                                              "code": "X-REFUSED"}
    uncaught = harness.run("await __webjob_host.bridge('nope', {}); return 1")
    assert uncaught.error is not None and "refused by policy" in uncaught.error.message


def test_a_call_in_flight_is_cancelled_when_the_run_ends(
        bridged: tuple[EngineHarness, FakeHost]) -> None:
    harness, host = bridged
    # The run goes on for 100 ms after making the call, so the call is surely in flight.
    result = harness.run("__webjob_host.bridge('slow', {}).catch(() => 0);\n"
                         "await new Promise(r => setTimeout(r, 100)); return 'done'")
    assert body_json(result) == "done"
    assert host.cancelled is not None
    harness.call(asyncio.wait_for(host.cancelled.wait(), 5))


def test_db_exec_and_http_go_through_the_bridge(bridged: tuple[EngineHarness, FakeHost]) -> None:
    harness, host = bridged
    source = """
const rows = await db.exec('SELECT ?', [1]).catch(e => e.message)
const body = new Uint8Array([1, 2, 255])
const sent = await http('https://example.org/x', { method: 'POST', body }).catch(e => e.message)
return { rows, sent, types: [typeof db.exec, typeof http] }"""
    out = body_json(harness.run(source))
    assert out["types"] == ["function", "function"]
    assert "refused by policy" in out["rows"] and "refused by policy" in out["sent"]
    ops = {op: args for op, args, _ in host.calls[-2:]}
    assert ops["db.exec"] == {"sql": "SELECT ?", "params": [1]}
    assert ops["http"] == {"url": "https://example.org/x",
                           "options": {"method": "POST", "body": {"base64": "AQL/"}}}


def test_http_answers_become_a_response_object(bridged: tuple[EngineHarness, FakeHost]) -> None:
    harness, host = bridged
    answer = {"status": 200, "ok": True, "statusText": "OK", "headers": {"a": "b"},
              "text": '{"n": 5}', "base64": "aGk=", "url": "https://x.example/"}
    original = host.call

    async def answering(op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        return answer if op == "http" else await original(op, args, run, state)

    host.call = answering  # type: ignore[method-assign]
    try:
        out = body_json(harness.run("const r = await http('https://x.example/')\n"
                                    "return [r.status, r.ok, r.json().n, r.bytes.toString()]"))
    finally:
        host.call = original  # type: ignore[method-assign]
    assert out == [200, True, 5, "hi"]
