"""An engine (real worker processes, no HTTP) shared by the engine tests.

``engine.run(source, ...)`` runs a job body synchronously from a test and
returns the ``RunResult``; the engine lives on its own event-loop thread."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from hub.engine.engine import EngineConfig, RunRequest, RunResult
from hub.engine.threaded import ThreadedEngine
from shared.header import Limits
from shared.ndjson import LogLine

TEST_LIMITS = Limits(runtime_ms=5_000, memory_mb=128, cpu_ms=2_000)
_ids = itertools.count()


class EngineHarness(ThreadedEngine):
    """The engine for tests: job bodies in, ``RunResult`` out."""

    def request(self, source: str, **kw: Any) -> RunRequest:
        # Only a fresh context's job can reach the host object (a warm run's names are
        # all its own): the tests that call it directly get one unless they choose.
        if "__webjob_host" in source:
            kw.setdefault("isolation", "fresh")
        return RunRequest(job_id=f"test_{next(_ids)}", job_name=kw.pop("name", "test"),
                          source=source, limits=kw.pop("limits", TEST_LIMITS),
                          params=kw.pop("params", {}),
                          request=kw.pop("request", {"method": "GET",
                                                     "caller": {"kind": "anonymous"}}),
                          sign_key=kw.pop("sign_key", "c2lnbmluZyBrZXkgZm9yIHRlc3Rz"), **kw)

    def run(self, source: str, live: bool = False, **kw: Any) -> RunResult:
        """Run a job body. ``live=True`` collects console lines as they stream
        (into ``result.streamed``)."""
        streamed: list[LogLine] = []
        if live:
            kw["on_log"] = streamed.append
        result: RunResult = self.call(self.engine.run(self.request(source, **kw)))
        result.streamed = streamed  # type: ignore[attr-defined]
        return result


@pytest.fixture(scope="session")
def engine() -> Iterator[EngineHarness]:
    harness = EngineHarness(EngineConfig(max_concurrent=2, queue_timeout_ms=10_000))
    yield harness
    harness.close()


def body_json(result: RunResult) -> Any:
    import json

    assert result.ok, result.error and result.error.message
    return json.loads(result.body)


def pids(harness: EngineHarness) -> list[int]:
    """The engine's live worker processes."""
    return sorted(w.pid for w in harness.engine.pool._all if w.alive)


async def full_pool(harness: EngineHarness) -> None:
    pool = harness.engine.pool
    while pool._starting or sum(w.alive for w in pool._all) < pool.size:
        await asyncio.sleep(0.01)


@contextmanager
def workers(count: int, queue_timeout_ms: int = 10_000) -> Iterator[EngineHarness]:
    """An engine with exactly ``count`` workers (no spare): consecutive runs share
    their processes, and so their warm isolates."""
    harness = EngineHarness(EngineConfig(max_concurrent=count, spare_workers=0,
                                         queue_timeout_ms=queue_timeout_ms))
    try:
        yield harness
    finally:  # a replacement still spawning would make close() hang
        harness.call(asyncio.wait_for(full_pool(harness), 20))
        harness.close()
