"""``db.exec`` streams and counts against the run: rows come in batches, and an answer
over ``WEBJOB_DB_MAX_ROWS`` or over the payload cap stops the fetch at once and fails
the run with ``JOB-003`` naming the cap. A job with ``Memory: 64`` selecting five
million rows fails within its runtime, while the hub grows by less than 400 MB and
``/health`` keeps answering within a second."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from hub.outside.database import Database
from shared.errors import LimitExceeded
from tests.hub.conftest import AUTH, HubProcess
from tests.hub.test_hostile_bodies_hold_no_loop import Watcher

FIVE_MILLION = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                "WHERE i < 5000000) SELECT i, 'row number ' || i AS label FROM n")


def _select(url: str, sql: str, **caps: int) -> None:
    async def main() -> None:
        db = Database(url, pool_size=1, **caps)
        try:
            await db.exec(sql, None, None, 60)
        finally:
            await db.close()

    asyncio.run(main())


def test_rows_past_the_cap_stop_the_fetch(tmp_path: Path) -> None:
    with pytest.raises(LimitExceeded) as over:
        _select(f"sqlite:///{tmp_path}/b.db", FIVE_MILLION, max_rows=1000)
    assert over.value.extra["limit"] == "rows" and "WEBJOB_DB_MAX_ROWS" in over.value.message


def test_bytes_past_the_payload_cap_stop_the_fetch(tmp_path: Path) -> None:
    with pytest.raises(LimitExceeded) as over:
        _select(f"sqlite:///{tmp_path}/b.db", FIVE_MILLION, max_value_mb=1)
    assert over.value.extra["limit"] == "payload"


def _rss_mb(pid: int) -> float:
    proc = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20


def test_five_million_rows_cost_the_run_not_the_hub(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={"rows": "/*\nMemory: 64\nCPU: 1 s\nRuntime: 30 s\n*/\n"
                                  f"const rows = await db.exec({json.dumps(FIVE_MILLION)})\n"
                                  "return rows.length"})
    before = _rss_mb(hub.proc.pid)
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak.append(_rss_mb(hub.proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with Watcher(hub.url) as watcher, hub.client() as client:
        resp = client.post("/api/webjobs/rows?raw=1", headers=AUTH)
    done.set()
    sampler.join(5)
    answer = resp.json()
    assert answer["code"] == "JOB-003" and answer["limit"] == "rows", answer
    assert max(peak) - before < 400, (before, max(peak))
    assert max(watcher.waits) < 1.0, sorted(watcher.waits)[-3:]
