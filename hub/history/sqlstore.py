"""Run history in SQL tables (:mod:`hub.history.sqlschema`) on a :class:`HubDatabase`.

The ``sql`` store keeps them on the shared hub database (SQLite, PostgreSQL,
MariaDB; SQL Server through its dialect, untested); the ``local`` store
(:mod:`hub.history.local`) in its own SQLite file. What keeps reads fast at a
million runs:

* **Rollups.** Every ``put`` changes the hour and job counters (runs, failures,
  runtime histogram) in the same transaction as the rows. A row that is replaced
  is first counted out, then its successor in, so a ``running`` record finished
  later counts once and a replayed batch changes nothing. ``prune`` counts out
  what it deletes (``PRUNE_BATCH`` oldest runs per transaction, so a big prune
  lets the recorder in between), so the rollups always equal the rows kept. ``metrics`` sums
  the hour rows (at most ``24 x retention`` of them), ``job_stats`` reads one
  row per job. Only finished runs are counted, and no debug run (kept in history,
  left out of the figures); ``failed`` and ``interrupted`` runs are failures.
  Percentiles are estimated from the histogram (see :mod:`hub.history.columns`).
* **Last run per job** is one ``ORDER BY started DESC`` row off the
  ``(job_name, started)`` index per name, all names in one ``UNION ALL``; debug
  runs are skipped, so a stopped debug session is never a job's last run.
* **Search** is ``search_text LIKE '%term%'`` on case-folded text. On SQLite the
  FTS5 trigram index first gives the rows that hold every trigram of the term
  (up to ``FTS_FEW``): then only those are read and checked; many more, and the
  newest rows are
  scanned instead, which soon finds a page. Terms under three characters (no
  trigram) are always scanned: a rare one reads the whole table.
  On PostgreSQL the same ``LIKE`` is answered by a ``pg_trgm`` GIN index on
  ``search_text`` (migration 0002) where the extension could be made, else by a
  newest-first scan; MariaDB always scans (no index answers ``LIKE '%term%'``).

A ``running`` record never replaces a finished one of the same ``job_id``: that
is a replay arriving after the run ended. Metrics: totals and percentiles are
over every retained run; ``runs_per_hour`` the 24 hours up to ``now`` (oldest
first); ``failures_today`` the failures since midnight UTC. ``JobStats.last_caller``
is the caller's name, or its kind when it has none.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from hub.history.base import HistoryQuery, JobStats, Metrics
from hub.history.columns import (
    COLUMNS,
    RECORD_COLUMNS,
    UNCOUNTED,
    UNCOUNTED_SOURCES,
    Tallies,
    Tally,
    flatten,
    hourly_figures,
    percentile,
    unflatten,
)
from hub.history.record import RunRecord
from hub.history.sqlschema import BUCKET_COLUMNS, FTS, HOURS, JOBS, MARKS, RUNS, statements
from hub.history.sqlsearch import SELECT, marks, search_statement
from hub.history.sqlwrite import insert_counted, insert_new, insert_rows, upsert_cell
from hub.store.hubdb import Conflict, HubDatabase, Row, Tx
from shared.errors import InternalError, StoreUnavailable

__all__ = ["SqlHistoryStore"]

log = logging.getLogger("webhub.history")
T = TypeVar("T")
CHUNK = 200               # names or ids per IN list (SQL Server takes 2100 parameters)
PRUNE_BATCH = 5000        # runs deleted per transaction by prune
FTS_MERGE_PAGES = 1000    # index pages one prune may rewrite to reclaim deleted rows
INTERRUPTED = ("SYS-500", "the hub stopped before the run ended")
# The mark of the one-off change that counted debug runs out of older hubs' rollups.
DEBUG_UNCOUNTED = "debug-uncounted"
_UPDATE = f"UPDATE {RUNS} SET {', '.join(f'{c} = ?' for c in COLUMNS[1:])} WHERE job_id = ?"
_COUNTERS = ("runs", "failures", "rt_count", "rt_sum", *BUCKET_COLUMNS)
_UNCOUNTED_SOURCES = ", ".join(f"'{s}'" for s in UNCOUNTED_SOURCES)
# The rows the rollups count (as columns.counted says of one row).
_COUNTED = (f"outcome NOT IN ({', '.join(repr(o) for o in UNCOUNTED)}) "
            f"AND source NOT IN ({_UNCOUNTED_SOURCES})")


def _latest(records: Sequence[RunRecord]) -> dict[str, RunRecord]:
    """Each run's record to write: its last one, unless that is a ``running`` record
    after a finished one (a replay)."""
    latest: dict[str, RunRecord] = {}
    for record in records:
        known = latest.get(record.job_id)
        if not (known and known.outcome != "running" and record.outcome == "running"):
            latest[record.job_id] = record
    return latest


def _chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), CHUNK):
        yield items[start:start + CHUNK]


class SqlHistoryStore:
    """The ``sql`` (or, built by :func:`hub.history.local.open_local_history`, ``local``)
    history store. ``own_db``: close the database with the store."""

    store_name = "sql"
    shared = True  # the hub database every node writes

    def __init__(self, db: HubDatabase, *, retention_days: int = 90,
                 max_runs: int | None = None, own_db: bool = False) -> None:
        self.db = db
        self.retention_days = retention_days
        self.max_runs = max_runs
        self._own_db = own_db
        self._fts = db.dialect.name == "sqlite"
        self._upserts = db.dialect.name == "postgresql"  # see hub.history.sqlwrite

    # -- plumbing ---------------------------------------------------------------

    def prepare(self) -> None:
        """Make the tables if need be (once; every call does it first anyway)."""
        self.db.ensure_schema_once(RUNS, statements, before=self._before_schema)
        self.db.ensure_schema_once(DEBUG_UNCOUNTED, lambda _: [],
                                   before=self._uncount_old_debug_runs)

    def _uncount_old_debug_runs(self) -> None:
        """Rollups written by a hub that counted debug runs: those runs counted out, once
        per database (the mark is written in the same transaction; a node that loses the
        race to write it finds it there on its second try)."""
        for attempt in (1, 2):
            try:
                with self.db.transaction() as tx:
                    if tx.read_one(f"SELECT mark FROM {MARKS} WHERE mark = ?",
                                   (DEBUG_UNCOUNTED,)) is not None:
                        return
                    tx.write(f"INSERT INTO {MARKS} (mark) VALUES (?)", (DEBUG_UNCOUNTED,))
                    once_counted = (f"source IN ({_UNCOUNTED_SOURCES}) AND outcome NOT IN "
                                    f"({', '.join(repr(o) for o in UNCOUNTED)})")
                    tallies = self._tallies_out(tx, once_counted, [])
                    self._apply(tx, tallies)
                    self._recompute_maxima(tx, tallies)
                return
            except Conflict:
                if attempt == 2:
                    raise

    def _before_schema(self) -> None:
        """Settings that must precede the first table (the local store's vacuum mode)."""

    def _in_tx(self, work: Callable[[Tx], T]) -> T:
        """``work`` in one transaction. Two nodes adding the same new rollup row at
        once clash on its key; the loser runs again and finds the row there."""
        self.prepare()
        for attempt in (1, 2):
            try:
                with self.db.transaction() as tx:
                    return work(tx)
            except Conflict:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    # -- writing ----------------------------------------------------------------

    def put(self, records: Sequence[RunRecord]) -> None:
        if records and self._upserts:
            records = self._put_new(records)
        if records:
            self._in_tx(lambda tx: self._put(tx, records))

    def _put_new(self, records: Sequence[RunRecord]) -> list[RunRecord]:
        """PostgreSQL: the runs not stored yet, with their rollups, in one statement
        (see :mod:`hub.history.sqlwrite`); the records left to write the usual way."""
        self.prepare()
        latest = _latest(records)
        rows = [flatten(record) for record in latest.values()]
        for job_id in insert_counted(self.db, [[r[c] for c in COLUMNS] for r in rows],
                                     self._bind):
            del latest[job_id]
        return list(latest.values())

    def _put(self, tx: Tx, records: Sequence[RunRecord]) -> None:
        rows = {job_id: flatten(record) for job_id, record in _latest(records).items()}
        tallies = Tallies()
        if self._upserts:  # the new runs stored at once; the others read back below
            for job_id in insert_new(tx, [[r[c] for c in COLUMNS] for r in rows.values()],
                                     self._bind):
                tallies.count(rows.pop(job_id), 1)
        stored = self._stored(tx, list(rows))
        new: list[Any] = []
        for job_id, row in rows.items():
            old = stored.get(job_id)
            if old is None:
                new.append([row[c] for c in COLUMNS])
            elif old["outcome"] != "running" and row["outcome"] == "running":
                continue
            else:
                tallies.count(old, -1)
                tx.write(_UPDATE, self._bind([*(row[c] for c in COLUMNS[1:]), job_id]))
            tallies.count(row, 1)
        insert_rows(tx, new, self._bind)  # a busy node's batch: one statement
        self._apply(tx, tallies)

    def _stored(self, tx: Tx, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the rollups counted for each of these runs already stored."""
        found: dict[str, dict[str, Any]] = {}
        for part in _chunks(ids):
            for job_id, *rest in tx.read(
                    "SELECT job_id, job_name, outcome, started_hour, runtime_ms, source "
                    f"FROM {RUNS} WHERE job_id IN ({marks(part)})", part):
                found[job_id] = dict(zip(("job_name", "outcome", "started_hour", "runtime_ms",
                                          "source"), rest, strict=True))
        return found

    def _apply(self, tx: Tx, tallies: Tallies) -> None:
        for table, key, cells in ((HOURS, "started_hour", tallies.hours),
                                  (JOBS, "job_name", tallies.jobs)):
            if self._upserts:
                for cell, tally in sorted(cells.items()):  # in key order: see below
                    upsert_cell(tx, table, key, cell, tally)
                continue
            keys: list[Any] = list(cells)
            present: set[Any] = set()
            for part in _chunks(keys):
                present.update(r[0] for r in tx.read(
                    f"SELECT {key} FROM {table} WHERE {key} IN ({marks(part)})", part))
            # In key order, so two nodes' transactions lock the rows in the same order
            # (PostgreSQL and MariaDB would otherwise deadlock now and then).
            for cell, tally in sorted(cells.items()):
                values = [tally.runs, tally.failures, tally.rt_count, tally.rt_sum,
                          *tally.buckets]
                if cell not in present:
                    tx.write(f"INSERT INTO {table} ({key}, rt_max, {', '.join(_COUNTERS)}) "
                             f"VALUES (?, ?, {marks(_COUNTERS)})", [cell, tally.rt_max, *values])
                    continue
                sets = ", ".join(f"{c} = {c} + ?" for c in _COUNTERS)
                params: list[Any] = values
                if tally.rt_max is not None:
                    sets += ", rt_max = CASE WHEN rt_max IS NULL OR rt_max < ? THEN ? " \
                            "ELSE rt_max END"
                    params = [*values, tally.rt_max, tally.rt_max]
                tx.write(f"UPDATE {table} SET {sets} WHERE {key} = ?", [*params, cell])

    def mark_interrupted(self, node: str, now: float) -> int:
        def work(tx: Tx) -> int:
            rows = tx.read(f"{SELECT} WHERE outcome = ? AND node = ?", ("running", node))
            code, message = INTERRUPTED
            done = [_record(r).finished(outcome="interrupted", code=code, message=message,
                                        ended=now) for r in rows]
            self._put(tx, done)
            return len(done)
        return self._in_tx(work)

    def prune(self, now: float) -> int:
        """Retention, then the size cap, ``PRUNE_BATCH`` oldest runs per transaction so
        the recorder's writes get in between the batches of a big prune."""
        cutoff = now - self.retention_days * 86400
        removed = 0
        while True:
            batch = self._in_tx(lambda tx: self._prune_batch(tx, cutoff))
            removed += batch
            if batch < PRUNE_BATCH:
                break
        self._in_tx(lambda tx: self._trim_rollups(tx, cutoff))
        if removed:
            self._after_prune()
        return removed

    def _prune_batch(self, tx: Tx, cutoff: float) -> int:
        page = self.db.dialect.page
        newest_first = f"SELECT started, id FROM {RUNS} ORDER BY started DESC, id DESC"
        # The newest run to go (as (started, id)): the newest one past retention, or
        # the newest one past the cap, whichever is later.
        edges = [tx.read_one(*page(f"SELECT started, id FROM {RUNS} WHERE started < ? "
                                   "ORDER BY started DESC, id DESC", [cutoff], 1, 0))]
        if self.max_runs is not None:
            edges.append(tx.read_one(*page(newest_first, [], 1, self.max_runs)))
        found = [(float(e[0]), int(e[1])) for e in edges if e is not None]
        if not found:
            return 0
        batch_end = tx.read_one(*page(f"SELECT started, id FROM {RUNS} ORDER BY started, id",
                                      [], 1, PRUNE_BATCH - 1))
        edge = max(found)
        if batch_end is not None:
            edge = min(edge, (float(batch_end[0]), int(batch_end[1])))
        # Two statements, not one with OR, so each reads the started index.
        return (self._remove(tx, "started < ?", [edge[0]])
                + self._remove(tx, "started = ? AND id <= ?", [edge[0], edge[1]]))

    def _trim_rollups(self, tx: Tx, cutoff: float) -> None:
        tx.write(f"DELETE FROM {HOURS} WHERE runs <= 0 OR started_hour < ?",
                 [int(cutoff // 3600)])
        tx.write(f"DELETE FROM {JOBS} WHERE runs <= 0")

    def _recompute_maxima(self, tx: Tx, tallies: Tallies) -> None:
        """``rt_max`` of the cells ``tallies`` touched, from the runs they count now (a
        maximum cannot be counted out, so it is read again)."""
        for table, key, cells in ((HOURS, "started_hour", tallies.hours),
                                  (JOBS, "job_name", tallies.jobs)):
            for cell in sorted(cells):
                tx.write(f"UPDATE {table} SET rt_max = (SELECT MAX(runtime_ms) FROM {RUNS} "
                         f"WHERE {key} = ? AND {_COUNTED}) WHERE {key} = ?", [cell, cell])

    def _remove(self, tx: Tx, where: str, params: Sequence[Any]) -> int:
        """Delete the runs ``where`` says, counting them out of the rollups first."""
        self._apply(tx, self._tallies_out(tx, f"({where}) AND {_COUNTED}", params))
        return tx.write(f"DELETE FROM {RUNS} WHERE {where}", params)

    def _tallies_out(self, tx: Tx, where: str, params: Sequence[Any]) -> Tallies:
        """The rollup changes that count the runs ``where`` says out."""
        tallies = Tallies()
        for hour, job, outcome, bucket, count, rt_sum in tx.read(
                "SELECT started_hour, job_name, outcome, rt_bucket, COUNT(*), SUM(runtime_ms) "
                f"FROM {RUNS} WHERE {where} "
                "GROUP BY started_hour, job_name, outcome, rt_bucket", params):
            bucket = None if bucket is None else int(bucket)
            for tally in (tallies.hours.setdefault(int(hour), Tally()),
                          tallies.jobs.setdefault(job, Tally())):
                tally.add(outcome, bucket, -1, count=int(count), rt_sum=int(rt_sum or 0))
        return tallies

    def _bind(self, values: Iterable[Any]) -> list[Any]:
        """Statement parameters (MariaDB's long-text problem is solved by its
        connections sending UTF-8: see hub.store.hubdb.utf8_parameters)."""
        return list(values)

    def _after_prune(self) -> None:
        """What follows a prune that removed runs (the local store gives space back).

        FTS5 records a deleted row as a tombstone in a new segment; the space of the
        row's trigrams only comes free when segments merge. A bounded merge (negative:
        whatever the levels) after each prune keeps the index from growing without
        holding the write lock long; a big prune is finished by the next ones."""
        if not self._fts:
            return
        try:
            self.db.write(f"INSERT INTO {FTS}({FTS}, rank) VALUES ('merge', ?)",
                          (-FTS_MERGE_PAGES,))
        except (StoreUnavailable, InternalError) as exc:
            # The runs are gone either way; the next prune merges what this one did not.
            log.info("history search index not merged after a prune: %s", exc.message)

    # -- reading ----------------------------------------------------------------

    def get(self, job_id: str) -> RunRecord | None:
        self.prepare()
        row = self.db.read_one(f"{SELECT} WHERE job_id = ?", (job_id,))
        return None if row is None else _record(row)

    def search(self, query: HistoryQuery) -> list[RunRecord]:
        sql, params = self.search_statement(query)
        # A plan made for this very term (see HubDatabase.read).
        rows = self.db.read(sql, self._bind(params), fresh_plan=bool(query.search))
        return [_record(row) for row in rows]

    def search_statement(self, query: HistoryQuery) -> tuple[str, list[Any]]:
        """The statement :meth:`search` runs for ``query`` (its plan can be asked for)."""
        self.prepare()
        return search_statement(self.db, self._fts, query)

    def job_stats(self, names: Sequence[str]) -> dict[str, JobStats]:
        self.prepare()
        wanted = list(dict.fromkeys(names))
        last = self._last_runs(wanted)
        tallies: dict[str, Row] = {}
        for part in _chunks(wanted):
            for row in self.db.read(f"SELECT job_name, runs, failures, {', '.join(BUCKET_COLUMNS)}"
                                    f" FROM {JOBS} WHERE job_name IN ({marks(part)})", part):
                tallies[row[0]] = row
        # Not DISTINCT: SQLite would then walk the whole job index instead of the few
        # running rows.
        running = {r[0] for r in self.db.read(
            f"SELECT job_name FROM {RUNS} WHERE outcome = ?", ("running",))}
        out: dict[str, JobStats] = {}
        for name, (started, outcome, runtime, caller) in last.items():
            counts = tallies.get(name)
            buckets = [int(b) for b in counts[3:]] if counts else []
            out[name] = JobStats(
                runs=int(counts[1]) if counts else 0,
                failures=int(counts[2]) if counts else 0,
                last_started=float(started), last_outcome=outcome,
                last_runtime_ms=None if runtime is None else int(runtime),
                last_caller=caller, p50_runtime_ms=percentile(buckets, 0.5),
                running=name in running)
        return out

    def _last_runs(self, names: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """Each named job's newest run: (started, outcome, runtime_ms, caller)."""
        found: dict[str, tuple[Any, ...]] = {}
        one = (f"SELECT job_name, started, outcome, runtime_ms, "
               f"COALESCE(caller_name, caller_kind) FROM {RUNS} WHERE job_name = ? "
               f"AND source NOT IN ({_UNCOUNTED_SOURCES}) ORDER BY started DESC, id DESC")
        for part in _chunks(names):
            members: list[str] = []
            params: list[Any] = []
            for index, name in enumerate(part):
                sql, values = self.db.dialect.page(one, [name], 1, 0)
                members.append(f"SELECT * FROM ({sql}) last{index}")
                params += values
            for name, *rest in self.db.read(" UNION ALL ".join(members), params):
                found[name] = tuple(rest)
        return found

    def metrics(self, now: float) -> Metrics:
        self.prepare()
        # Sums of the hour rows: a few thousand at most (24 per retained day).
        sums = self.db.read_one(
            f"SELECT MAX(rt_max), {', '.join(f'SUM({c})' for c in _COUNTERS)} FROM {HOURS}"
        ) or (None,) * (len(_COUNTERS) + 1)
        top = sums[0]
        runs, failures, rt_count, _, *buckets = (int(c or 0) for c in sums[1:])
        hour_now = int(now // 3600)
        first = min(hour_now - 23, int(now // 86400) * 24)  # 24 hours, and all of today
        hours: dict[int, Tally] = {}
        for hour, hour_runs, hour_failures, hour_top, *hour_buckets in self.db.read(
                f"SELECT started_hour, runs, failures, rt_max, {', '.join(BUCKET_COLUMNS)} "
                f"FROM {HOURS} WHERE started_hour >= ? AND started_hour <= ?",
                (first, hour_now)):
            hours[int(hour)] = Tally(
                runs=int(hour_runs or 0), failures=int(hour_failures or 0),
                rt_max=None if hour_top is None else int(hour_top),
                buckets=[int(b or 0) for b in hour_buckets])
        figures = hourly_figures(hours, now)
        rt_max = None if top is None or not rt_count else int(top)
        return Metrics(
            total=runs, successes=runs - failures, failures=failures,
            runtime_p50_ms=percentile(buckets, 0.5, rt_max),
            runtime_p95_ms=percentile(buckets, 0.95, rt_max),
            runtime_max_ms=rt_max, failures_today=figures.failures_today,
            runs_per_hour=figures.runs, failures_per_hour=figures.failures,
            p95_per_hour_ms=figures.p95_ms)

    def reachable(self) -> None:
        self.db.read("SELECT 1")

    def close(self) -> None:
        if self._own_db:
            self.db.close()


def _record(row: Row) -> RunRecord:
    """A record from a ``SELECT`` row (its leading ``id`` dropped)."""
    return unflatten(dict(zip(RECORD_COLUMNS, row[1:], strict=True)))
