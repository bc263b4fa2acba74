"""Fill a local history store with a million runs, then time the reads that must stay fast.

:func:`fill_local_history` makes the store's tables through the store itself, then
writes the rows straight through :mod:`sqlite3` in big transactions. Each row is
built directly but checked against the store's own
:func:`~hub.history.columns.flatten` every 50,000 rows; the rollups are counted by
the store's own :class:`~hub.history.columns.Tally`; the indexes and the full-text
index are built once at the end (far faster than a million B-tree inserts and the
per-row trigger). ``tests/history/test_local.py`` checks that a small fill reads
back exactly as the same runs put through the store.

    .venv/bin/python bench/history_fill.py [--runs 1000000] [--jobs 500] [--keep DIR]

prints the fill time and, for each timed call, the best and median of 5 (ms).
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from hub.history.base import HistoryQuery  # noqa: E402
from hub.history.columns import COLUMNS, Tallies, Tally, bucket_of, flatten  # noqa: E402
from hub.history.local import FILE_NAME, LocalHistoryStore, open_local_history  # noqa: E402
from hub.history.record import Caller, RunRecord  # noqa: E402
from hub.history.sqlschema import (  # noqa: E402
    BUCKET_COLUMNS,
    FTS,
    HOURS,
    JOBS,
    RUNS,
    statements,
)
from hub.store.dialects import DIALECTS  # noqa: E402
from hub.store.hubdb import open_hub_database  # noqa: E402

NOW = time.time()
SPAN_S = 80 * 86400          # runs spread over the last 80 days (inside 90 days' retention)
BATCH = 50_000
SOURCES = ("http", "http", "http", "schedule", "editor", "adhoc")
WORDS = ("invoice", "payroll", "export", "import", "sync", "report", "backup", "audit")
RARE = "qx-4711"             # in about 1 run in 20,000 (the failed ones' message)
MEDIUM = "acme-17"           # a customer in about 1 run in 200 (near the FTS_FEW switch)
COMMON = "invoice"           # in about one run in eight
ADVERSE = "cust-123"         # in 1 run in 1,000, but made of trigrams that are in them all


class Draw(NamedTuple):
    """The random choices behind one run."""

    i: int
    started: float
    job: int
    source: str
    user: int
    outcome: str
    customer: str
    word: str
    page: int
    rows: int
    runtime: int | None
    result_count: int
    rare: bool


def _draw(i: int, started: float, jobs: int, rng: random.Random, *, running: bool) -> Draw:
    rand = rng.random
    pick = rand() * 100
    outcome = ("running" if running else "success" if pick < 94 else
               "failed" if pick < 99 else "interrupted")
    customer = MEDIUM if rand() < 0.005 else f"cust-{int(rand() * 100_000)}"
    runtime = None if running else int(rng.lognormvariate(4.5, 1.2))
    return Draw(i, started, int(rand() * jobs), SOURCES[int(rand() * len(SOURCES))],
                int(rand() * 200), outcome, customer, WORDS[int(rand() * len(WORDS))],
                int(rand() * 50), int(rand() * 1000), runtime, int(rand() * 5000),
                rand() < 0.01)


def _record(d: Draw) -> RunRecord:
    """The run a draw stands for (to check :func:`_row` against ``flatten``)."""
    failed = d.outcome in ("failed", "interrupted")
    return RunRecord(
        job_id=f"{d.i:08x}-run", job_name=f"job_{d.job:03d}", source=d.source,
        caller=Caller("user", f"u{d.user}", f"user{d.user}", "staff"), started=d.started,
        node=f"node-{d.i % 3}", ref=f"r{d.i:08x}", outcome=d.outcome,
        job_version=1 + d.i % 19, method="GET",
        params={"customer": d.customer, "mode": d.word, "page": d.page},
        code="JOB-001" if failed else None,
        message=(RARE if d.rare else "upstream timeout") if failed else None,
        result=None if failed else f'{{"ok":true,"count":{d.result_count}}}', result_size=30,
        result_type="json", result_format="application/json",
        logs=({"level": "log", "message": f"start {d.word} for {d.customer}", "ms": 1},
              {"level": "log", "message": f"{d.rows} rows", "ms": 5}),
        ended=None if d.runtime is None else d.started + d.runtime / 1000,
        runtime_ms=d.runtime, cpu_ms=None if d.runtime is None else d.runtime // 2)


def _row(d: Draw) -> tuple[Any, ...]:
    """``flatten(_record(d))`` in column order, built directly: ten times faster."""
    failed = d.outcome in ("failed", "interrupted")
    job_name = f"job_{d.job:03d}"
    caller = f"user{d.user}"
    params = f'{{"customer": "{d.customer}", "mode": "{d.word}", "page": {d.page}}}'
    first = f"start {d.word} for {d.customer}"
    logs = (f'[{{"level": "log", "message": "{first}", "ms": 1}}, '
            f'{{"level": "log", "message": "{d.rows} rows", "ms": 5}}]')
    message = (RARE if d.rare else "upstream timeout") if failed else None
    result = None if failed else f'{{"ok":true,"count":{d.result_count}}}'
    search = "\n".join((job_name, params, result or "", f"{first}\n{d.rows} rows",
                        message or "", caller)).casefold()
    runtime = d.runtime
    return (f"{d.i:08x}-run", job_name, d.source, "user", f"u{d.user}", caller, "staff",
            d.started, f"node-{d.i % 3}", f"r{d.i:08x}", d.outcome, 1 + d.i % 19, "GET",
            params, "JOB-001" if failed else None, message, None, None, result, 0, 30,
            "json", "application/json", logs, 0, "[]",
            None if runtime is None else d.started + runtime / 1000, runtime,
            None if runtime is None else runtime // 2, None, None, int(d.started // 3600),
            bucket_of(runtime), search)


def _draws(runs: int, jobs: int) -> Iterator[Draw]:
    rng = random.Random(1)
    step = SPAN_S / runs
    for i in range(runs):
        # The newest few are still running, as on a live hub.
        yield _draw(i, NOW - SPAN_S + i * step, jobs, rng, running=i >= runs - 20)


def bench_records(runs: int, jobs: int) -> Iterator[RunRecord]:
    """The runs :func:`fill_local_history` writes, as records (for tests)."""
    return map(_record, _draws(runs, jobs))


def _rows(runs: int, jobs: int, groups: dict[tuple[Any, ...], list[int]]
          ) -> Iterator[tuple[Any, ...]]:
    """The rows to insert; counts finished runs into ``groups`` as it goes, by
    (hour, job, outcome, bucket): [runs, runtime sum, runtime max]."""
    for draw in _draws(runs, jobs):
        row = _row(draw)
        if draw.i % 50_000 == 0:
            assert list(row) == [flatten(_record(draw))[c] for c in COLUMNS], "_row drifted"
        if draw.outcome != "running":
            group = groups.setdefault((row[-3], row[1], draw.outcome, row[-2]), [0, 0, 0])
            group[0] += 1
            group[1] += draw.runtime or 0
            group[2] = max(group[2], draw.runtime or 0)
        yield row


def _write_rollups(conn: sqlite3.Connection, groups: dict[tuple[Any, ...], list[int]]) -> None:
    """The rollup rows, counted by the store's own :class:`Tally` from the groups."""
    tallies = Tallies()
    for (hour, job, outcome, bucket), (count, rt_sum, rt_top) in groups.items():
        for tally in (tallies.hours.setdefault(hour, Tally()),
                      tallies.jobs.setdefault(job, Tally())):
            tally.add(outcome, bucket, 1, count=count, rt_sum=rt_sum,
                      rt_top=None if bucket is None else rt_top)
    names = ("runs", "failures", "rt_count", "rt_sum", "rt_max", *BUCKET_COLUMNS)
    for table, key, cells in ((HOURS, "started_hour", tallies.hours),
                              (JOBS, "job_name", tallies.jobs)):
        conn.executemany(
            f"INSERT INTO {table} ({key}, {', '.join(names)}) "
            f"VALUES (?, {', '.join('?' for _ in names)})",
            [[cell, t.runs, t.failures, t.rt_count, t.rt_sum, t.rt_max, *t.buckets]
             for cell, t in cells.items()])


def fill_local_history(path: Path, runs: int = 1_000_000, jobs: int = 500) -> None:
    """A new local store file at ``path`` holding ``runs`` runs of ``jobs`` jobs."""
    def schema() -> None:
        store = LocalHistoryStore(open_hub_database(f"sqlite:///{path}"), max_runs=runs,
                                  retention_days=90)
        store.prepare()
        store.close()

    schema()
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        # Alone with the file: no WAL, no syncing, a big cache, and the indexes and the
        # full-text index built once at the end (sorting beats a million B-tree
        # inserts; the per-row trigger costs ten times the rebuild).
        for pragma in ("journal_mode = MEMORY", "synchronous = OFF", "cache_size = -500000",
                       "temp_store = MEMORY", "threads = 2"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("DROP TRIGGER webjob_runs_fts_insert")
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' "
                                    f"AND tbl_name = '{RUNS}' AND sql IS NOT NULL").fetchall():
            conn.execute(f"DROP INDEX {name}")
        groups = _insert_runs(conn, runs, jobs)
        conn.execute("BEGIN")
        _write_rollups(conn, groups)
        for statement in statements(DIALECTS["sqlite"]):  # the indexes and trigger again
            conn.execute(statement)
        conn.execute("COMMIT")
        _rebuild_fts(conn)
        # No ANALYZE: the store never runs one, so neither does its benchmark.
        # The dropped indexes' pages go back (the pragma steps to its end only in a script).
        conn.executescript("PRAGMA incremental_vacuum;")
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    schema()  # checks the file is whole: every table, index and trigger there


Groups = dict[tuple[Any, ...], list[int]]


def _produce(runs: int, jobs: int, out: Any) -> None:
    """Row batches into ``out``, then None, then the groups (in a worker process)."""
    groups: Groups = {}
    rows = _rows(runs, jobs, groups)
    while batch := list(itertools.islice(rows, BATCH)):
        out.put(batch)
    out.put(None)
    out.put(groups)


def _insert_runs(conn: sqlite3.Connection, runs: int, jobs: int) -> Groups:
    """Insert the rows; a big fill has a worker process make them meanwhile (making a
    row costs about as much as inserting it)."""
    insert = (f"INSERT INTO {RUNS} ({', '.join(COLUMNS)}) "
              f"VALUES ({', '.join('?' for _ in COLUMNS)})")
    if runs < 100_000:
        groups: Groups = {}
        rows = _rows(runs, jobs, groups)
        while batch := list(itertools.islice(rows, BATCH)):
            _insert_batch(conn, insert, batch)
        return groups
    context = multiprocessing.get_context("fork")
    batches = context.Queue(maxsize=4)
    worker = context.Process(target=_produce, args=(runs, jobs, batches), daemon=True)
    worker.start()
    try:
        while (batch := batches.get(timeout=300)) is not None:
            _insert_batch(conn, insert, batch)
        made: Groups = batches.get(timeout=300)
    finally:
        worker.join(timeout=30)
    if worker.exitcode != 0:
        raise RuntimeError(f"the row maker failed (exit code {worker.exitcode})")
    return made


def _insert_batch(conn: sqlite3.Connection, insert: str, batch: list[Any]) -> None:
    conn.execute("BEGIN")
    conn.executemany(insert, batch)
    conn.execute("COMMIT")


def _rebuild_fts(conn: sqlite3.Connection) -> None:
    """The full-text index from every row; merging is put off until the index is
    built (twice as fast), then the defaults come back for the store's own writes."""
    config = f"INSERT INTO {FTS}({FTS}, rank) VALUES (?, ?)"
    conn.execute("BEGIN")
    conn.executemany(config, [("automerge", 0), ("crisismerge", 2000)])
    conn.execute(f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')")
    conn.executemany(config, [("automerge", 4), ("crisismerge", 16)])
    conn.execute("COMMIT")


def _timed(call: Callable[[], object]) -> tuple[float, float]:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--keep", type=Path, help="fill this directory and keep the file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = args.keep or Path(scratch)
        home.mkdir(parents=True, exist_ok=True)
        (home / FILE_NAME).unlink(missing_ok=True)
        start = time.perf_counter()
        fill_local_history(home / FILE_NAME, args.runs, args.jobs)
        size = (home / FILE_NAME).stat().st_size / 1e6
        print(f"filled {args.runs:,} runs of {args.jobs} jobs in "
              f"{time.perf_counter() - start:.1f} s ({size:.0f} MB)")
        store = open_local_history(home, max_runs=args.runs, retention_days=90)
        names = [f"job_{k:03d}" for k in range(args.jobs)]
        calls: list[tuple[str, Callable[[], object]]] = [
            ("search(HistoryQuery())", lambda: store.search(HistoryQuery())),
            *((f"search(search={word!r})", lambda w=word: store.search(HistoryQuery(search=w)))
              for word in (RARE, MEDIUM, COMMON, ADVERSE, "no-such-thing")),
            ("metrics(now)", lambda: store.metrics(NOW)),
            (f"job_stats({args.jobs} names)", lambda: store.job_stats(names)),
        ]
        try:
            for label, call in calls:
                count = call()
                best, median = _timed(call)
                found = len(count) if isinstance(count, (list, dict)) else "-"
                print(f"{label:34} best {best:7.1f} ms  median {median:7.1f} ms  ({found})")
        finally:
            store.close()


if __name__ == "__main__":
    main()
