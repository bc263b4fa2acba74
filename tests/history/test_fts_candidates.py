"""SQLite's full-text index keeps no positions (``detail=none``): it only gives the
candidates of a search, which the ``LIKE`` then checks. Older databases, whose index
kept positions, are rebuilt by migration 0006 with every run they hold still found."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.history.base import MAX_PAGE, HistoryQuery
from hub.history.local import FILE_NAME, open_local_history
from hub.history.sqlschema import FTS, RUNS
from hub.history.sqlsearch import search_statement, trigram_match
from hub.history.sqlstore import SqlHistoryStore
from hub.store.hubdb import open_hub_database
from hub.store.migrations.runner import upgrade
from hub.store.migrations.startup import upgrade_local_history
from tests.history.conftest import NOW, run

# The index as revisions 0001 to 0005 made it: with positions, answering phrases.
OLD_INDEX = [
    "DROP TRIGGER webjob_runs_fts_insert", "DROP TRIGGER webjob_runs_fts_delete",
    "DROP TRIGGER webjob_runs_fts_update", f"DROP TABLE {FTS}",
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(search_text, content='{RUNS}', "
    "content_rowid='id', tokenize='trigram')",
    f"CREATE TRIGGER webjob_runs_fts_insert AFTER INSERT ON {RUNS} BEGIN "
    f"INSERT INTO {FTS}(rowid, search_text) VALUES (new.id, new.search_text); END",
    f"CREATE TRIGGER webjob_runs_fts_delete AFTER DELETE ON {RUNS} BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, search_text) VALUES ('delete', old.id, old.search_text);"
    " END",
    f"CREATE TRIGGER webjob_runs_fts_update AFTER UPDATE OF search_text ON {RUNS} "
    f"BEGIN INSERT INTO {FTS}({FTS}, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    f"INSERT INTO {FTS}(rowid, search_text) VALUES (new.id, new.search_text); END",
]
OLD_RUNS = [run(f"old-{i}", started=NOW - 100 + i, result=f"Invoice ACME-{i} paid")
            for i in range(6)]


def _index_sql(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT sql FROM sqlite_master WHERE name = ?",
                                (FTS,)).fetchone()[0])
    finally:
        conn.close()


def _made_old(store: SqlHistoryStore, path: Path) -> None:
    """The store's file as an older hub left it: the old index, runs written through it."""
    store.prepare()
    for statement in OLD_INDEX:
        store.db.write(statement)
    store.put(OLD_RUNS)
    conn = sqlite3.connect(path)
    try:  # the old index answers a phrase: it holds positions
        assert conn.execute(f"SELECT count(*) FROM {FTS} WHERE {FTS} MATCH ?",
                            ('"acme-3 paid"',)).fetchone() == (1,)
    finally:
        conn.close()


def _found(store: SqlHistoryStore, term: str) -> list[str]:
    return [r.job_id for r in store.search(HistoryQuery(search=term, limit=MAX_PAGE))]


def _still_found(store: SqlHistoryStore) -> None:
    assert _found(store, "acme-3") == ["old-3"]
    assert _found(store, "INVOICE acme") == [f"old-{i}" for i in reversed(range(6))]
    store.put([run("new-1", result="an invoice for acme-3x")])
    assert _found(store, "acme-3") == ["old-3", "new-1"]
    store.prune(NOW + 91 * 86400)  # the triggers still keep the index in step
    assert _found(store, "acme") == []


def test_a_local_history_file_with_the_old_index_is_upgraded(tmp_path: Path) -> None:
    store = open_local_history(tmp_path)
    try:
        _made_old(store, tmp_path / FILE_NAME)
    finally:
        store.close()
    assert "detail" not in _index_sql(tmp_path / FILE_NAME)
    assert upgrade_local_history(tmp_path)[-1] == "0007"
    assert _index_sql(tmp_path / FILE_NAME).endswith(
        "tokenize='trigram', detail=none, columnsize=0)")
    store = open_local_history(tmp_path)
    try:
        _still_found(store)
    finally:
        store.close()


def test_a_hub_database_with_the_old_index_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "hub.db"
    store = SqlHistoryStore(open_hub_database(f"sqlite:///{path}"), own_db=True)
    try:
        _made_old(store, path)
        assert upgrade(store.db)[-1] == "0007"
        assert "detail=none, columnsize=0" in _index_sql(path)
        _still_found(store)
    finally:
        store.close()


def test_an_index_made_as_the_store_makes_it_is_left_as_it_is(tmp_path: Path) -> None:
    store = open_local_history(tmp_path)
    try:
        store.put(OLD_RUNS)
        before = store.db.read(f"SELECT count(*) FROM {FTS}_data")
    finally:
        store.close()
    upgrade_local_history(tmp_path)
    store = open_local_history(tmp_path)
    try:
        assert store.db.read(f"SELECT count(*) FROM {FTS}_data") == before
        assert _found(store, "acme-3") == ["old-3"]
    finally:
        store.close()


@pytest.mark.parametrize(("needle", "match"), [
    ("abc", '"abc"'),
    ("abcd", '"abc" AND "bcd"'),
    ("aaaaa", '"aaa"'),                      # each trigram once
    ('a"b c', '"a""b" AND """b " AND "b c"'),
])
def test_the_match_asks_for_every_trigram_of_the_needle(needle: str, match: str) -> None:
    assert trigram_match(needle) == match


@pytest.fixture(scope="module")
def shared_store() -> Iterator[SqlHistoryStore]:
    with tempfile.TemporaryDirectory(prefix="webjobs-fts-") as home:
        store = open_local_history(Path(home))
        try:
            yield store
        finally:
            store.close()


# Few letters, so needles often hit; the LIKE and FTS5 query specials; case to fold.
TEXT = st.text(alphabet="abAB ß%_!\"'*\n\ufffd", max_size=24)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(results=st.lists(TEXT, max_size=12), needle=TEXT)
def test_search_finds_exactly_what_a_like_scan_finds(
        shared_store: SqlHistoryStore, results: list[str], needle: str) -> None:
    store = shared_store
    store.db.write(f"DELETE FROM {RUNS}")
    store.put([run(f"r{i:02d}", started=NOW - i, result=text)
               for i, text in enumerate(results)])
    query = HistoryQuery(search=needle, limit=MAX_PAGE)
    scan = [r[1] for r in store.db.read(*search_statement(store.db, False, query))]
    assert [r.job_id for r in store.search(query)] == scan
