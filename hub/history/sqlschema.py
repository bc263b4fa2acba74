"""The tables of the SQL history stores, in any dialect of :mod:`hub.store.dialects`.

* ``webjob_runs`` — one row per run (:data:`hub.history.columns.COLUMNS`), keyed by
  an auto-numbered ``id`` (so SQLite's full-text index can point at rows that keep
  their number) with ``job_id`` unique; an index per filter of ``HistoryQuery``,
  each ending in ``started`` so a filtered page is read newest first off the index.
* ``webjob_run_hours`` — finished runs counted per hour they started in: runs,
  failures, runtime count/sum/max and one counter per runtime bucket (``b00``..).
* ``webjob_run_jobs`` — the same counters per job name (over all retained runs).
* ``webjob_history_marks`` — one row per one-off change made to the tables' contents
  (``debug-uncounted``: debug runs counted out of rollups an older hub counted them in).
* SQLite only: ``webjob_runs_fts``, an FTS5 ``trigram`` index over ``search_text``
  kept in step by triggers, so substring search does not read every row. It only
  finds candidates (every one is checked again with ``LIKE``, see
  :mod:`hub.history.sqlsearch`), so it keeps neither positions (``detail=none``)
  nor token counts (``columnsize=0``): which rows hold a trigram is all it answers,
  and each run's insert writes far less. Migration 0006 rebuilds an index made
  with positions into this one.
* PostgreSQL only: ``webjob_runs_search_trgm``, a ``pg_trgm`` GIN index over
  ``search_text``, made by migration 0002 (:mod:`hub.store.migrations`), not here:
  the extension may need a right the hub lacks, and then search scans.

These statements make the tables a store finds missing; the schema a database is
versioned at is the migrations' (their revision 0001 is a frozen copy of these).
"""

from __future__ import annotations

from hub.history.columns import BUCKETS
from hub.store.dialects import Dialect

__all__ = ["BUCKET_COLUMNS", "FTS", "HOURS", "JOBS", "MARKS", "RUNS", "statements"]

RUNS = "webjob_runs"
HOURS = "webjob_run_hours"
JOBS = "webjob_run_jobs"
MARKS = "webjob_history_marks"
FTS = "webjob_runs_fts"
BUCKET_COLUMNS = tuple(f"b{i:02d}" for i in range(BUCKETS))

_RUN_COLUMNS = """{id},
    job_id {varchar}(100) NOT NULL,
    job_name {varchar}(100) NOT NULL,
    source {varchar}(16) NOT NULL,
    caller_kind {varchar}(16) NOT NULL,
    caller_id {varchar}(200),
    caller_name {varchar}(200),
    caller_class {varchar}(32),
    started {real} NOT NULL,
    node {varchar}(200) NOT NULL,
    ref {varchar}(100) NOT NULL,
    outcome {varchar}(16) NOT NULL,
    job_version {bigint},
    method {varchar}(16),
    params {text},
    code {varchar}(32),
    message {text},
    limit_kind {varchar}(16),
    http_status INTEGER,
    result {text},
    result_truncated INTEGER NOT NULL,
    result_size {bigint} NOT NULL,
    result_type {varchar}(32),
    result_format {varchar}(255),
    logs {text},
    logs_truncated INTEGER NOT NULL,
    calls {text},
    ended {real},
    runtime_ms {bigint},
    cpu_ms {bigint},
    schedule_id {varchar}(100),
    schedule_name {varchar}(200),
    started_hour {bigint} NOT NULL,
    rt_bucket INTEGER,
    search_text {text}"""

_COUNTERS = ("runs {bigint} NOT NULL, failures {bigint} NOT NULL, "
             "rt_count {bigint} NOT NULL, rt_sum {bigint} NOT NULL, rt_max {bigint}, "
             + ", ".join(f"{b} {{bigint}} NOT NULL" for b in BUCKET_COLUMNS))

_INDEXES = (
    ("webjob_runs_started", "started, id"),
    ("webjob_runs_job", "job_name, started"),
    ("webjob_runs_outcome", "outcome, started"),
    ("webjob_runs_source", "source, started"),
    ("webjob_runs_caller", "caller_name, started"),
    ("webjob_runs_schedule", "schedule_id, started"),
)

_FTS = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5(search_text, content='{RUNS}', "
    "content_rowid='id', tokenize='trigram', detail=none, columnsize=0)",
    f"CREATE TRIGGER IF NOT EXISTS webjob_runs_fts_insert AFTER INSERT ON {RUNS} BEGIN "
    f"INSERT INTO {FTS}(rowid, search_text) VALUES (new.id, new.search_text); END",
    f"CREATE TRIGGER IF NOT EXISTS webjob_runs_fts_delete AFTER DELETE ON {RUNS} BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, search_text) VALUES ('delete', old.id, old.search_text);"
    " END",
    f"CREATE TRIGGER IF NOT EXISTS webjob_runs_fts_update AFTER UPDATE OF search_text ON {RUNS} "
    f"BEGIN INSERT INTO {FTS}({FTS}, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    f"INSERT INTO {FTS}(rowid, search_text) VALUES (new.id, new.search_text); END",
]


def statements(dialect: Dialect) -> list[str]:
    """Every ``IF NOT EXISTS`` statement that makes the history tables."""
    out = [
        dialect.create_table(RUNS, _RUN_COLUMNS),
        dialect.create_index("webjob_runs_job_id", RUNS, "job_id", unique=True),
        *(dialect.create_index(name, RUNS, columns) for name, columns in _INDEXES),
        dialect.create_table(HOURS, "started_hour {bigint} NOT NULL PRIMARY KEY, " + _COUNTERS),
        dialect.create_table(JOBS, "job_name {varchar}(100) NOT NULL PRIMARY KEY, "
                             + _COUNTERS),
        dialect.create_table(MARKS, "mark {varchar}(64) NOT NULL PRIMARY KEY"),
    ]
    if dialect.name == "sqlite":
        out += _FTS
    return out
