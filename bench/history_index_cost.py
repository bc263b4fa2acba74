"""What SQLite's full-text index of ``search_text`` costs per run written, by definition.

Each definition gets a file of its own (WAL, as the local store keeps it) with a runs
table cut down to ``id`` and ``search_text`` and the insert trigger of
:mod:`hub.history.sqlschema`. The runs are written in turns (a batch to each file,
then the next batch), so the shared machine's noise falls on every definition alike;
the figure is CPU time per run (``time.process_time``) over all batches: the
index's segment merges come now and then, and they are part of the cost.

The text is what :func:`hub.history.columns.flatten` makes of a ``logs_and_rows`` run
(1,000 rows of JSON, 20 console lines) and of a ``public_ping`` run.

``--search N``: also a local history of N runs (:func:`bench.history_fill.fill_local_history`)
and a copy of it whose index is made again as it was, searched in turns for the
words of ``history_fill`` (median of 7 per word and file, ms).

    .venv/bin/python bench/history_index_cost.py [--runs 2000] [--batch 8] [--search 0]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import history_fill  # noqa: E402
from hub.history.base import HistoryQuery  # noqa: E402
from hub.history.columns import flatten  # noqa: E402
from hub.history.local import FILE_NAME, open_local_history  # noqa: E402
from hub.history.record import Caller, RunRecord  # noqa: E402
from hub.history.sqlschema import FTS  # noqa: E402

OLD = "tokenize='trigram'"  # the definition of revisions 0001 to 0005
DEFINITIONS = {
    "trigram (old)": OLD,
    "detail=none": "tokenize='trigram', detail=none",
    "detail=none, columnsize=0": "tokenize='trigram', detail=none, columnsize=0",
}


def _record(job: str, n: int) -> RunRecord:
    logs: tuple[dict[str, Any], ...] = ()
    if job == "public_ping":
        result = json.dumps({"pong": f"bench-{n}"})
    else:
        rows = [{"id": i, "name": f"row-{i}", "value": (i * 37 + n) % 1000} for i in range(1000)]
        result = json.dumps(rows, indent=2)
        logs = tuple({"type": "log", "message": f"step {i} of run {n}", "time": i}
                     for i in range(20))
    return RunRecord(job_id=f"{job}-{n}", job_name=job, source="http",
                     caller=Caller("key", "k1", f"key-{n % 7}"), started=time.time(),
                     node="bench", ref=f"r{n}", outcome="success", params={"n": str(n)},
                     result=result, result_size=len(result), logs=logs)


def _open(folder: Path, name: str, options: str) -> sqlite3.Connection:
    conn = sqlite3.connect(folder / f"{len(list(folder.iterdir()))}.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, search_text TEXT)")
    conn.execute(f"CREATE VIRTUAL TABLE runs_fts USING fts5(search_text, content='runs', "
                 f"content_rowid='id', {options})")
    conn.execute("CREATE TRIGGER runs_fts_insert AFTER INSERT ON runs BEGIN INSERT INTO "
                 "runs_fts(rowid, search_text) VALUES (new.id, new.search_text); END")
    return conn


def cost_per_run(job: str, runs: int, batch: int) -> dict[str, float]:
    """CPU milliseconds per run written, per definition (all merges included)."""
    texts = [str(flatten(_record(job, n))["search_text"]) for n in range(runs)]
    samples: dict[str, list[float]] = {name: [] for name in DEFINITIONS}
    with tempfile.TemporaryDirectory(prefix="webjobs-fts-cost-") as tmp:
        conns = {name: _open(Path(tmp), name, options) for name, options in DEFINITIONS.items()}
        try:
            for start in range(0, runs, batch):
                part = [(t,) for t in texts[start:start + batch]]
                for name, conn in conns.items():
                    began = time.process_time()
                    conn.execute("BEGIN")
                    conn.executemany("INSERT INTO runs (search_text) VALUES (?)", part)
                    conn.execute("COMMIT")
                    samples[name].append((time.process_time() - began) * 1000 / len(part))
        finally:
            for conn in conns.values():
                conn.close()
    return {name: statistics.mean(values) for name, values in samples.items()}


def _old_index(path: Path) -> None:
    """The full-text index of the file at ``path`` made again with the old options."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        sql = str(conn.execute("SELECT sql FROM sqlite_master WHERE name = ?",
                               (FTS,)).fetchone()[0])
        conn.execute("BEGIN")
        conn.execute(f"DROP TABLE {FTS}")
        conn.execute(sql.replace(", detail=none, columnsize=0)", ")"))
        conn.execute(f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')")
        conn.execute("COMMIT")
    finally:
        conn.close()


def search_ms(runs: int) -> dict[str, dict[str, float]]:
    """Median milliseconds of a first page searched for each word, per index."""
    words = (history_fill.RARE, history_fill.MEDIUM, history_fill.COMMON,
             history_fill.ADVERSE, "no-such-thing")
    with tempfile.TemporaryDirectory(prefix="webjobs-fts-search-") as tmp:
        new, old = Path(tmp) / "new", Path(tmp) / "old"
        new.mkdir()
        history_fill.fill_local_history(new / FILE_NAME, runs, 500)
        shutil.copytree(new, old)
        _old_index(old / FILE_NAME)
        stores = {"trigram (old)": open_local_history(old, max_runs=runs),
                  "detail=none, columnsize=0": open_local_history(new, max_runs=runs)}
        samples: dict[str, dict[str, list[float]]] = {
            name: {word: [] for word in words} for name in stores}
        try:
            for _ in range(8):
                for word in words:
                    for name, store in stores.items():
                        began = time.perf_counter()
                        store.search(HistoryQuery(search=word))
                        samples[name][word].append((time.perf_counter() - began) * 1000)
        finally:
            for store in stores.values():
                store.close()
    # The first round warms the caches and is left out.
    return {name: {word: statistics.median(times[1:]) for word, times in by_word.items()}
            for name, by_word in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--search", type=int, default=0, help="runs to search (0: none)")
    args = parser.parse_args()
    print(f"SQLite {sqlite3.sqlite_version}; {args.runs} runs in batches of {args.batch}")
    for job in ("logs_and_rows", "public_ping"):
        figures = cost_per_run(job, args.runs, args.batch)
        old = figures["trigram (old)"]
        for name, ms in figures.items():
            print(f"{job:14} {name:28} {ms:6.3f} ms/run  ({ms / old:4.2f} x old)")
    if args.search:
        print(f"search, first page of 50, {args.search:,} runs (median ms)")
        for name, by_word in search_ms(args.search).items():
            print(f"  {name:28} " + "  ".join(f"{w} {ms:.1f}" for w, ms in by_word.items()))


if __name__ == "__main__":
    main()
