"""The statement a history page is read with: the filters, and the search term as a
``LIKE`` on case-folded text, narrowed first by SQLite's FTS5 trigram index where it has
one (hub/history/sqlstore.py's docstring says which index answers where)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hub.history.base import MAX_PAGE, HistoryQuery
from hub.history.columns import RECORD_COLUMNS, search_pattern
from hub.history.sqlschema import FTS, RUNS
from hub.store.hubdb import HubDatabase
from shared.text import clean_text

__all__ = ["FTS_FEW", "SELECT", "marks", "search_statement", "trigram_match"]

FTS_FEW = 3000            # matches up to which the full-text hits are read directly
SELECT = f"SELECT id, {', '.join(RECORD_COLUMNS)} FROM {RUNS}"
_FILTERS = (("job", "job_name = ?"), ("status", "outcome = ?"), ("source", "source = ?"),
            ("caller", "caller_name = ?"), ("since", "started >= ?"),
            ("until", "started < ?"), ("schedule_id", "schedule_id = ?"))


def marks(items: Sequence[Any]) -> str:
    return ", ".join("?" * len(items))


def search_statement(db: HubDatabase, fts: bool, query: HistoryQuery) -> tuple[str, list[Any]]:
    """The SQL and parameters of one page of ``query``, newest first."""
    where: list[str] = []
    params: list[Any] = []
    for name, clause in _FILTERS:
        value = getattr(query, name)
        if value is not None:
            where.append(clause)
            params.append(clean_text(value) if isinstance(value, str) else value)
    if query.search:
        # As stored: a lone surrogate in the term finds the U+FFFD it was kept as. A
        # NUL cannot be searched for: SQL text (FTS5's query, a LIKE pattern) ends there.
        term = clean_text(query.search).replace("\x00", "\ufffd")
        clauses, values = _search_clauses(db, fts, term)
        where += clauses
        params += values
    sql = SELECT + (f" WHERE {' AND '.join(where)}" if where else "")
    return db.dialect.page(f"{sql} ORDER BY started DESC, id DESC", params,
                           max(0, min(query.limit, MAX_PAGE)), max(0, query.offset))


def _search_clauses(db: HubDatabase, fts: bool, term: str) -> tuple[list[str], list[Any]]:
    like = "search_text LIKE ? ESCAPE '!'"
    pattern = search_pattern(term, brackets=db.dialect.name == "mssql")
    needle = term.casefold()
    if not fts or len(needle) < 3:   # trigrams need three characters
        return [like], [pattern]
    # Evaluated once: a term of common trigrams (``cust-123``) makes the match cost
    # tens of milliseconds whatever its hits.
    hits = [int(r[0]) for r in db.read(
        f"SELECT rowid FROM {FTS} WHERE {FTS} MATCH ? LIMIT ?",
        (trigram_match(needle), FTS_FEW + 1))]
    if len(hits) > FTS_FEW:
        return [like], [pattern]
    if not hits:
        return ["1 = 0"], []
    return [f"id IN ({marks(hits)})", like], [*hits, pattern]


def trigram_match(needle: str) -> str:
    """An FTS5 query for the rows holding every trigram of ``needle`` (three characters
    or more): a superset of the rows holding ``needle``, which the ``LIKE`` narrows.
    The index keeps no positions (``detail=none``), so it answers no phrase query."""
    trigrams = dict.fromkeys(needle[i:i + 3] for i in range(len(needle) - 2))
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in trigrams)
