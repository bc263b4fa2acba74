"""A job in a fresh context (``Isolation: fresh``) can reach ``__webjob_host`` — its
globals are the context's — but not the worker's entries to it: its own ``db.exec`` or
``http()`` calls are settled only with the hub's answers (history keeps those, so a
replay shows what the run saw), and it cannot take its own outcome from the host."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine.engine import EngineConfig, RunRequest, RunState
from tests.engine.conftest import EngineHarness, body_json


class LateHost:
    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        await asyncio.sleep(0.3)
        return "the hub's answer"


@pytest.fixture(scope="module")
def late() -> Iterator[EngineHarness]:
    harness = EngineHarness(EngineConfig(max_concurrent=1, spare_workers=1), LateHost())
    yield harness
    harness.close()


SPOOF = """
const pending = __webjob_host.bridge('db.exec', { sql: 'SELECT 1' })
const tried = []
for (let id = 0; id < 20; id++) {
  for (const args of [[id, true, '"spoofed"'], ['guess', id, true, '"spoofed"']]) {
    try { __webjob_host.reply(...args); tried.push('called') } catch (e) { tried.push(e.name) }
  }
}
let polled
try { polled = __webjob_host.poll() } catch (e) { polled = e.name }
let armed
try { __webjob_host.arm('mine'); armed = 'armed' } catch (e) { armed = e.message }
return { answer: await pending, polled, armed }
"""


def test_a_fresh_job_cannot_answer_its_own_calls(late: EngineHarness) -> None:
    out = body_json(late.run(SPOOF, isolation="fresh"))
    assert out == {"answer": "the hub's answer", "polled": "",
                   "armed": "The host is armed already"}
