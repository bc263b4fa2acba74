"""Tools of the escape battery (test_sandbox_battery.py, test_sandbox_pollution.py).

Each attack runs under both engines: ``warm`` (a strict job in a compartment of a
kept isolate, built-ins frozen) and ``fresh`` (``Isolation: fresh``: a sloppy job in
a context of its own, where a rewrite of a built-in takes effect). A rewrite that
the warm engine refuses is wrapped by ``bends`` so the rest of the job still checks
the sandbox's machinery, and the job tells how many rewrites were refused."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hub.engine.engine import RunResult
from shared.header import Limits
from tests.engine.conftest import EngineHarness, body_json, full_pool

ISOLATIONS = ("warm", "fresh")
U = "undefined"
# Runs that could hang get a short CPU limit and a bounded runtime, so a hang shows as
# JOB-003 without waiting out the default. The runtime is roomy: a fresh isolate's run on
# a machine the rest of the suite keeps busy has taken more than 1.5 s.
SHORT = Limits(runtime_ms=10_000, memory_mb=128, cpu_ms=400)
# What V8 says of a Function constructor reached from a warm job's objects: SES
# replaces every one but the compartment's own with one that always throws.
INERT_CTOR = "TypeError: Function.prototype.constructor is not a valid constructor."


def bends(*statements: str) -> str:
    """Job text that tries each rewrite on its own and counts the refused ones in
    ``refused`` (a TypeError on warm, where built-ins are frozen; none on fresh)."""
    tries = "".join(f" try {{ {s} }} catch (e) {{ refused.push(e.name); }}" for s in statements)
    return f"const refused = [];{tries}\n"


def per(isolation: str, expected: Any) -> Any:
    """``expected`` itself, or its entry for this engine when it is a dict by engine."""
    if isinstance(expected, dict) and set(expected) <= set(ISOLATIONS) and expected:
        return expected[isolation]
    return expected


def by_isolation(cases: list[tuple[str, str, Any]]) -> list[Any]:
    """pytest params (source, expected, isolation) for each case and each engine its
    expected value names (a plain value: both)."""
    params = []
    for ident, source, expected in cases:
        named = isinstance(expected, dict) and set(expected) <= set(ISOLATIONS) and expected
        for isolation in ISOLATIONS:
            if not named or isolation in expected:
                params.append(pytest.param(source, per(isolation, expected), isolation,
                                           id=f"{ident}-{isolation}"))
    return params


def assert_failed(result: RunResult, code: str, fragment: str) -> None:
    assert not result.ok and result.error is not None, result.body[:200]
    assert result.error.code == code and result.error.message, result.error.message
    assert fragment in result.error.message, result.error.message


def assert_healthy(harness: EngineHarness) -> None:
    for isolation in ISOLATIONS:
        got = harness.run("return [typeof leaked, 6 * 7]", isolation=isolation)
        assert body_json(got) == ["undefined", 42]


def wait_for_replacements(request: pytest.FixtureRequest) -> None:
    """After a test that got a worker killed, wait until its replacement has spawned: an
    engine closed while a spawn is in flight leaves that worker running and the harness'
    loop.close() then blocks forever (WorkerPool.close only kills the workers it knows)."""
    for name in ("engine", "solo"):
        if name in request.fixturenames:
            harness = request.getfixturevalue(name)
            harness.call(asyncio.wait_for(full_pool(harness), 20))
