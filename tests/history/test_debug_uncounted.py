"""Rollups an older hub wrote counted debug runs in: the first store opened on such a
database counts them out, once, whichever node gets there first."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.history.sqlschema import MARKS, RUNS
from hub.history.sqlstore import SqlHistoryStore
from hub.store.hubdb import open_hub_database
from tests.history.conftest import NOW, run
from tests.servers import HUB_BACKENDS, fresh_database


def open_store(url: str) -> SqlHistoryStore:
    """Another node's store: a pool of its own, so it prepares the tables itself."""
    return SqlHistoryStore(open_hub_database(url), own_db=True)


@pytest.mark.parametrize("kind", HUB_BACKENDS)
def test_debug_runs_an_older_hub_counted_are_counted_out_once(kind: str,
                                                              tmp_path: Path) -> None:
    with fresh_database(kind, tmp_path) as url:
        old = open_store(url)
        try:
            old.put([run("prod", started=NOW - 60, runtime_ms=100),
                     run("dbg", started=NOW - 30, runtime_ms=30_000, outcome="failed")])
            # As an older hub left it: a debug run counted in the rollups, no mark.
            old.db.write(f"UPDATE {RUNS} SET source = 'debug' WHERE job_id = 'dbg'")
            old.db.write(f"DELETE FROM {MARKS}")
            assert old.metrics(NOW).total == 2
        finally:
            old.close()
        for _ in range(2):  # a second node (or restart) must not count it out again
            node = open_store(url)
            try:
                metrics = node.metrics(NOW)
                assert (metrics.total, metrics.failures, metrics.runtime_max_ms) == (1, 0, 100)
                assert metrics.runtime_p95_ms is not None and metrics.runtime_p95_ms <= 100
                stats = node.job_stats(["report"])["report"]
                assert (stats.runs, stats.failures, stats.last_started) == (1, 0, NOW - 60)
            finally:
                node.close()
