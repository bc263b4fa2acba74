"""What only one store does: the local store's size cap, WAL and giving file space
back, both SQLite search paths, the benchmark's file matching the store's own
writing, mongo's TTL index, and the answers when a database cannot be reached."""

from __future__ import annotations

import socket
import sqlite3
import time
from pathlib import Path

import mongomock
import pytest

from bench import history_fill
from hub.history import sqlsearch
from hub.history.base import HistoryQuery
from hub.history.local import FILE_NAME, open_local_history
from hub.history.mongo import (
    COLLECTION,
    DATABASE,
    TTL_INDEX,
    MongoHistoryStore,
    open_mongo_history,
)
from hub.history.record import MAX_LOG_LINES
from hub.history.sqlstore import SqlHistoryStore
from hub.store.hubdb import open_hub_database
from shared.errors import StoreUnavailable
from tests.history.conftest import NOW, run


def pragma(path: Path, name: str) -> object:
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_file_is_in_wal_mode_with_incremental_vacuum(tmp_path: Path) -> None:
    store = open_local_history(tmp_path, max_runs=10, retention_days=90)
    store.put([run("a")])
    store.close()
    assert pragma(tmp_path / FILE_NAME, "journal_mode") == "wal"
    assert pragma(tmp_path / FILE_NAME, "auto_vacuum") == 2  # incremental
    again = open_local_history(tmp_path, max_runs=10, retention_days=90)
    try:
        assert again.get("a") == run("a")
    finally:
        again.close()


def test_prune_keeps_only_the_newest_max_runs(tmp_path: Path) -> None:
    store = open_local_history(tmp_path, max_runs=10, retention_days=90)
    try:
        store.put([run(f"r{i:02d}", job_name=f"job{i % 2}", started=NOW - i,
                       outcome="failed" if i % 5 == 0 else "success") for i in range(25)])
        assert store.prune(NOW) == 15
        kept = [r.job_id for r in store.search(HistoryQuery(limit=100))]
        assert kept == [f"r{i:02d}" for i in range(10)]
        metrics = store.metrics(NOW)
        assert (metrics.total, metrics.failures) == (10, 2)
        stats = store.job_stats(["job0", "job1"])
        assert (stats["job0"].runs, stats["job1"].runs) == (5, 5)
        assert store.prune(NOW) == 0
    finally:
        store.close()


def test_prune_gives_the_file_space_back(tmp_path: Path) -> None:
    store = open_local_history(tmp_path, max_runs=100_000, retention_days=1)
    path = tmp_path / FILE_NAME
    try:
        logs = tuple({"level": "log", "message": f"line {i} " + "y" * 90, "ms": i}
                     for i in range(MAX_LOG_LINES))
        for part in range(4):
            store.put([run(f"big{part}-{i}", started=NOW - 3 * 86400, logs=logs)
                       for i in range(100)])
        store.put([run("keep", started=NOW)])
        before = path.stat().st_size
        assert store.prune(NOW) == 400
        assert pragma(path, "freelist_count") == 0
        assert path.stat().st_size < before / 4
        assert [r.job_id for r in store.search(HistoryQuery())] == ["keep"]
    finally:
        store.close()


@pytest.mark.parametrize("term", ["needle", "ne", "nEEdle 1"])
def test_both_sqlite_search_paths_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        term: str) -> None:
    """Few full-text hits are read directly; many fall back to a newest-first scan."""
    store = open_local_history(tmp_path, max_runs=1000, retention_days=90)
    try:
        store.put([run(f"s{i:02d}", started=NOW - i, result=f"needle {i}" if i % 3 else "hay")
                   for i in range(40)])
        direct = [r.job_id for r in store.search(HistoryQuery(search=term, limit=100))]
        monkeypatch.setattr(sqlsearch, "FTS_FEW", 2)
        scanned = [r.job_id for r in store.search(HistoryQuery(search=term, limit=100))]
        assert direct == scanned
        assert direct == [f"s{i:02d}" for i in range(40) if i % 3
                          and term.casefold() in f"needle {i}"]
    finally:
        store.close()


def test_an_unreachable_mongodb_is_unavailable_quickly() -> None:
    """Opening sends nothing (a hub starts while the server is down); each call fails."""
    store = open_mongo_history(f"mongodb://127.0.0.1:{closed_port()}/", timeout_ms=300)
    try:
        for call in (store.prepare, lambda: store.put([run("a")]),
                     lambda: store.search(HistoryQuery()), lambda: store.metrics(NOW)):
            start = time.monotonic()
            with pytest.raises(StoreUnavailable, match="MongoDB"):
                call()
            assert time.monotonic() - start < 3
    finally:
        store.close()


def test_an_unreachable_postgresql_is_unavailable() -> None:
    url = ("odbc:DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;"
           f"PORT={closed_port()};DATABASE=history;UID=postgres")
    start = time.monotonic()
    with pytest.raises(StoreUnavailable):
        SqlHistoryStore(open_hub_database(url)).prepare()
    assert time.monotonic() - start < 10


def test_the_benchmark_file_is_what_the_store_writes(tmp_path: Path) -> None:
    """``bench/history_fill.py`` writes rows, rollups and the full-text index itself;
    the same runs put through the store must read back the same."""
    filled = tmp_path / "filled"
    filled.mkdir()
    history_fill.fill_local_history(filled / FILE_NAME, runs=1500, jobs=7)
    bench = open_local_history(filled, max_runs=10_000, retention_days=90)
    store = open_local_history(tmp_path / "put", max_runs=10_000, retention_days=90)
    try:
        store.put(list(history_fill.bench_records(1500, 7)))
        now = history_fill.NOW
        names = [f"job_{k:03d}" for k in range(8)]
        assert bench.metrics(now) == store.metrics(now)
        assert bench.job_stats(names) == store.job_stats(names)
        for term in (None, history_fill.RARE, history_fill.MEDIUM, "invoice", "ok"):
            query = HistoryQuery(search=term, limit=200)
            assert bench.search(query) == store.search(query), term
        assert bench.metrics(now).total == 1480
    finally:
        bench.close()
        store.close()


def test_mongo_keeps_runs_for_retention_with_a_ttl_index() -> None:
    collection = mongomock.MongoClient()[DATABASE][COLLECTION]
    MongoHistoryStore(collection, retention_days=90).prepare()
    assert collection.index_information()[TTL_INDEX]["expireAfterSeconds"] == 90 * 86400
    MongoHistoryStore(collection, retention_days=30).prepare()  # retention was changed
    assert collection.index_information()[TTL_INDEX]["expireAfterSeconds"] == 30 * 86400
