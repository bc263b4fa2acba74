"""Statements of a history write that PostgreSQL answers in fewer round trips.

A batch of finished runs is mostly runs history has never seen. On PostgreSQL they go
in with their rollups in one statement, sent in autocommit (:func:`insert_counted`):
``INSERT ... ON CONFLICT (job_id) DO NOTHING RETURNING`` the runs it stored, and from
those returned rows, in the same statement, one upsert of the hour cells and one of
the job cells; a single statement lands whole or not at all, as the transaction it
replaces. The runs it did not store (a run whose ``running`` record came first, a
replay) go the usual way, in a transaction that reads them back before replacing them;
there a new run is :func:`insert_new` and a rollup cell one upsert (:func:`upsert_cell`)
instead of a read and then an insert or update.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hub.history.columns import COLUMNS, FAILED, UNCOUNTED, UNCOUNTED_SOURCES, Tally
from hub.history.sqlschema import BUCKET_COLUMNS, HOURS, JOBS, RUNS
from hub.store.hubdb import HubDatabase, Tx

__all__ = ["INSERT_ROWS", "insert_counted", "insert_new", "insert_rows", "upsert_cell"]

_VALUES = f"({', '.join('?' for _ in COLUMNS)})"
_INSERT = f"INSERT INTO {RUNS} ({', '.join(COLUMNS)}) VALUES {_VALUES}"
# Rows per INSERT: SQL Server takes at most 2100 parameters a statement.
INSERT_ROWS = 2000 // len(COLUMNS)
COUNTERS = ("runs", "failures", "rt_count", "rt_sum", *BUCKET_COLUMNS)
Bind = Callable[[Iterable[Any]], list[Any]]


def _parts(rows: Sequence[Sequence[Any]]) -> Iterable[Sequence[Sequence[Any]]]:
    for start in range(0, len(rows), INSERT_ROWS):
        yield rows[start:start + INSERT_ROWS]


def _statement(count: int) -> str:
    return _INSERT + f", {_VALUES}" * (count - 1)


def insert_rows(tx: Tx, rows: Sequence[Sequence[Any]], bind: Bind) -> None:
    """Rows (values in ``COLUMNS`` order) of runs not stored yet, INSERT_ROWS a statement."""
    for part in _parts(rows):
        tx.write(_statement(len(part)), bind(value for row in part for value in row))


def insert_new(tx: Tx, rows: Sequence[Sequence[Any]], bind: Bind) -> set[str]:
    """PostgreSQL: the rows whose ``job_id`` is not stored yet inserted; their ids."""
    inserted: set[str] = set()
    for part in _parts(rows):
        found = tx.write_returning(
            f"{_statement(len(part))} ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
            bind(value for row in part for value in row))
        inserted.update(str(r[0]) for r in found)
    return inserted


def _on_conflict(table: str, key: str) -> str:
    adds = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in COUNTERS)
    top = (f"rt_max = CASE WHEN excluded.rt_max IS NULL THEN {table}.rt_max "
           f"WHEN {table}.rt_max IS NULL OR {table}.rt_max < excluded.rt_max "
           f"THEN excluded.rt_max ELSE {table}.rt_max END")
    return f"ON CONFLICT ({key}) DO UPDATE SET {adds}, {top}"


def upsert_cell(tx: Tx, table: str, key: str, cell: Any, tally: Tally) -> None:
    """PostgreSQL: a rollup cell's changes added in, the row made if it is new."""
    tx.write(f"INSERT INTO {table} ({key}, rt_max, {', '.join(COUNTERS)}) "
             f"VALUES (?, ?, {', '.join('?' for _ in COUNTERS)}) {_on_conflict(table, key)}",
             [cell, tally.rt_max, tally.runs, tally.failures, tally.rt_count, tally.rt_sum,
              *tally.buckets])


def _quoted(values: Iterable[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _rollup(table: str, key: str) -> str:
    """The cells of ``table`` counting the runs the statement stored (``counted``), as
    :meth:`hub.history.columns.Tally.add` counts a run in; in key order, so two nodes'
    statements lock the cells in one order."""
    timed = "FILTER (WHERE rt_bucket IS NOT NULL)"
    sums = ["COUNT(*)", f"COUNT(*) FILTER (WHERE outcome IN ({_quoted(FAILED)}))",
            "COUNT(rt_bucket)", f"COALESCE(SUM(runtime_ms) {timed}, 0)",
            *(f"COUNT(*) FILTER (WHERE rt_bucket = {i})" for i in range(len(BUCKET_COLUMNS)))]
    return (f"INSERT INTO {table} ({key}, rt_max, {', '.join(COUNTERS)}) "
            f"SELECT {key}, MAX(runtime_ms) {timed}, {', '.join(sums)} FROM counted "
            f"GROUP BY {key} ORDER BY {key} {_on_conflict(table, key)}")


_COUNTED = (f"SELECT * FROM stored WHERE outcome NOT IN ({_quoted(UNCOUNTED)}) "
            f"AND source NOT IN ({_quoted(UNCOUNTED_SOURCES)})")


def insert_counted(db: HubDatabase, rows: Sequence[Sequence[Any]], bind: Bind) -> set[str]:
    """PostgreSQL, outside a transaction: the rows whose ``job_id`` is not stored yet
    inserted and counted in the rollups, INSERT_ROWS a statement; their ids."""
    inserted: set[str] = set()
    for part in _parts(rows):
        sql = (f"WITH stored AS ({_statement(len(part))} ON CONFLICT (job_id) DO NOTHING "
               "RETURNING job_id, job_name, started_hour, outcome, source, runtime_ms, "
               f"rt_bucket), counted AS ({_COUNTED}), "
               f"hours AS ({_rollup(HOURS, 'started_hour')}), "
               f"jobs AS ({_rollup(JOBS, 'job_name')}) SELECT job_id FROM stored")
        found = db.write_returning(sql, bind(value for row in part for value in row))
        inserted.update(str(r[0]) for r in found)
    return inserted
