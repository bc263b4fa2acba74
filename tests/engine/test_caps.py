"""A run's sizes are capped: its result, one bridge payload and its console. Past a
cap the run fails with JOB-003 naming the cap and its setting, whether the prelude
saw it first or the hub did (a worker can lie: here it is told larger caps)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

from hub.engine import protocol
from hub.engine.active_run import ActiveRun
from hub.engine.engine import EngineConfig, RunRequest, RunResult, RunState
from hub.engine.pool import read_rss_mb
from hub.settings import load_settings
from shared.errors import LimitExceeded
from shared.header import Limits
from tests.engine.conftest import EngineHarness, body_json

MB = 1024 * 1024
ROOMY = Limits(runtime_ms=20_000, memory_mb=512, cpu_ms=15_000)


class BigHost:
    """Answers ``big`` with ``args`` MB of text, refuses ``over`` with a cap of its own."""

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        if op == "over":
            raise LimitExceeded("The host's own cap", limit="rows")
        return "r" * int(args * MB) if op == "big" else args


@pytest.fixture(scope="module")
def capped() -> Iterator[EngineHarness]:
    harness = EngineHarness(EngineConfig(max_concurrent=2, spare_workers=1, max_result_mb=1,
                                         max_payload_mb=1, max_console_mb=1), BigHost())
    yield harness
    harness.close()


@pytest.fixture()
def lying(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker is told caps 100 times larger than the hub's: only the hub checks."""
    spec = ActiveRun._spec

    def larger(self: Any) -> dict[str, Any]:
        out = spec(self)
        out["caps"] = {k: v * 100 for k, v in out["caps"].items()}
        return out
    monkeypatch.setattr(ActiveRun, "_spec", larger)


def assert_over(result: RunResult, limit: str, setting: str) -> None:
    assert result.error is not None, result.body[:80]
    assert result.error.code == "JOB-003", result.error.message
    assert result.error.extra.get("limit") == limit
    assert setting in result.error.message and "1 MB" in result.error.message


RESULTS = {
    "text": "return 'x'.repeat(1.5 * 1024 * 1024)",
    "multibyte": "return response.text('é'.repeat(700 * 1024))",  # under in units, over in bytes
    "json": "return { a: 'y'.repeat(1.2 * 1024 * 1024) }",
    "bytes": "return response.file(new Uint8Array(1.5 * 1024 * 1024), 'f.bin')",
}


@pytest.mark.parametrize("source", RESULTS.values(), ids=RESULTS.keys())
@pytest.mark.parametrize("hub_only", [False, True], ids=["worker", "hub"])
def test_a_result_over_its_cap(capped: EngineHarness, request: pytest.FixtureRequest,
                               source: str, hub_only: bool) -> None:
    if hub_only:
        request.getfixturevalue("lying")
    assert_over(capped.run(source, limits=ROOMY), "result", "WEBJOB_MAX_RESULT_MB")
    assert body_json(capped.run("return 'x'.repeat(1000 * 1000)")) == "x" * 1_000_000


@pytest.mark.parametrize("hub_only", [False, True], ids=["worker", "hub"])
def test_a_console_over_its_cap(capped: EngineHarness, request: pytest.FixtureRequest,
                                hub_only: bool) -> None:
    if hub_only:
        request.getfixturevalue("lying")
    for live in (False, True):
        result = capped.run("for (let i = 0; i < 3000; i++) console.log('z'.repeat(1000));"
                            " return 1", live=live, limits=ROOMY)
        assert_over(result, "console", "WEBJOB_MAX_CONSOLE_MB")
        assert sum(len(line.message) for line in result.logs) <= 1.1 * MB


@pytest.mark.parametrize("hub_only", [False, True], ids=["worker", "hub"])
def test_a_bridge_call_over_its_cap(capped: EngineHarness, request: pytest.FixtureRequest,
                                    hub_only: bool) -> None:
    if hub_only:
        request.getfixturevalue("lying")
    result = capped.run("try { await db.exec('SELECT ' + 'q'.repeat(1.5 * 1024 * 1024)) }"
                        " catch (e) { return 'caught' }", limits=ROOMY)
    assert_over(result, "payload", "WEBJOB_MAX_PAYLOAD_MB")


def test_a_bridge_reply_over_its_cap(capped: EngineHarness) -> None:
    assert len(body_json(capped.run("return await __webjob_host.bridge('big', 0.5)"))) == MB // 2
    result = capped.run("try { await __webjob_host.bridge('big', 1.5) }"
                        " catch (e) { return 'caught' }", limits=ROOMY)
    assert_over(result, "payload", "WEBJOB_MAX_PAYLOAD_MB")


def test_a_limit_the_host_raises_ends_the_run(capped: EngineHarness) -> None:
    result = capped.run("try { await __webjob_host.bridge('over', 1) }"
                        " catch (e) { return 'caught' }")
    assert result.error is not None and result.error.code == "JOB-003"
    assert result.error.extra.get("limit") == "rows"


def test_the_line_limit_follows_the_caps() -> None:
    small = protocol.Caps(result_bytes=MB, payload_bytes=MB, console_chars=MB)
    assert small.line_limit < protocol.Caps().line_limit < 256 * MB
    assert small.line_limit >= 6 * MB  # a done line may carry the console, escaped


@pytest.mark.parametrize("hub_only", [False, True], ids=["worker", "hub"])
def test_many_big_results_do_not_swell_the_hub(capped: EngineHarness,
                                               request: pytest.FixtureRequest,
                                               hub_only: bool) -> None:
    """Four results far over the cap at once: the hub reads none of their bytes."""
    if hub_only:
        request.getfixturevalue("lying")
    before = read_rss_mb(os.getpid())
    assert before is not None

    async def four() -> list[RunResult]:
        reqs = [capped.request("return response.text('x'.repeat(60 * 1024 * 1024))",
                               limits=ROOMY) for _ in range(4)]
        return list(await asyncio.gather(*(capped.engine.run(r) for r in reqs)))
    for result in capped.call(four()):
        assert_over(result, "result", "WEBJOB_MAX_RESULT_MB")
    after = read_rss_mb(os.getpid())
    assert after is not None and after - before < 50


def test_the_settings_reach_the_engine_config(tmp_path: Any) -> None:
    env = {"WEBHUB_HOME": str(tmp_path), "WEBJOB_MAX_RESULT_MB": "7",
           "WEBJOB_MAX_PAYLOAD_MB": "8", "WEBJOB_MAX_CONSOLE_MB": "9"}
    settings = load_settings(env)
    assert (settings.max_result_mb, settings.max_payload_mb, settings.max_console_mb) == (7, 8, 9)
    defaults = load_settings({"WEBHUB_HOME": str(tmp_path)})
    assert (defaults.max_result_mb, defaults.max_payload_mb,
            defaults.max_console_mb) == (50, 64, 10)
    caps = EngineConfig(max_result_mb=7, max_payload_mb=8, max_console_mb=9).caps
    assert caps == protocol.Caps(7 * MB, 8 * MB, 9 * MB)
