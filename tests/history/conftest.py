"""Every history store, fresh for each test: ``store`` is parametrized over them all.

The SQL servers' databases are made once per session (``tests.servers``) and
emptied before each test; the SQLite files live in the test's ``tmp_path``; the
mongo store runs on :mod:`mongomock` (see ``test_contract.py`` for why).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mongomock
import pytest

from hub.history.base import HistoryStore
from hub.history.local import open_local_history
from hub.history.mongo import COLLECTION, DATABASE, MongoHistoryStore
from hub.history.record import Caller, RunRecord
from hub.history.sqlschema import HOURS, JOBS, RUNS, statements
from hub.history.sqlstore import SqlHistoryStore
from hub.store.hubdb import open_hub_database
from tests.servers import fresh_database

STORES = ("local", "sql-sqlite", "sql-postgresql", "sql-mariadb", "mongo")
# 2027-01-15 10:30 UTC: mid-morning, so "today" has earlier hours in it.
NOW = 1_800_000_000.0 - 1_800_000_000.0 % 86400 + 10.5 * 3600
RETENTION_DAYS = 90


class Servers:
    """One empty database per SQL server for the whole session, made on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.urls: dict[str, str] = {}
        self.stack = contextlib.ExitStack()

    def url(self, kind: str) -> str:
        if kind not in self.urls:
            self.urls[kind] = self.stack.enter_context(fresh_database(kind, self.root))
        return self.urls[kind]


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    found = Servers(tmp_path_factory.mktemp("history-servers"))
    with found.stack:
        yield found


def _sql_store(url: str) -> SqlHistoryStore:
    db = open_hub_database(url)
    try:
        db.ensure_schema(statements(db.dialect))
        for table in (RUNS, HOURS, JOBS):
            db.write(f"DELETE FROM {table}")
    except BaseException:
        db.close()
        raise
    return SqlHistoryStore(db, retention_days=RETENTION_DAYS, own_db=True)


def make_store(kind: str, tmp_path: Path, servers: Servers) -> HistoryStore:
    if kind == "local":
        return open_local_history(tmp_path / "home", max_runs=100_000,
                                  retention_days=RETENTION_DAYS)
    if kind == "sql-sqlite":
        return _sql_store(f"sqlite:///{tmp_path / 'hub.db'}")
    if kind.startswith("sql-"):
        return _sql_store(servers.url(kind[4:]))
    mongo = MongoHistoryStore(mongomock.MongoClient()[DATABASE][COLLECTION],
                              retention_days=RETENTION_DAYS)
    return mongo


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path,
          servers: Servers) -> Iterator[HistoryStore]:
    made = make_store(request.param, tmp_path, servers)
    try:
        yield made
    finally:
        made.close()


def run(job_id: str, **changes: Any) -> RunRecord:
    """A finished, successful run with plain values; ``changes`` override any field."""
    base = RunRecord(job_id=job_id, job_name="report", source="http",
                     caller=Caller("user", "u1", "ann", "staff"), started=NOW - 600,
                     node="node-a", ref=f"ref-{job_id}", outcome="success", method="GET",
                     params={"n": 1}, result='{"ok":true}', result_size=11,
                     result_type="json", result_format="application/json",
                     logs=({"level": "log", "message": "working", "ms": 3},),
                     ended=NOW - 599, runtime_ms=1000, cpu_ms=900)
    return dataclasses.replace(base, **changes)
