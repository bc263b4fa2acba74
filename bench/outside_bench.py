"""Measure a job's outside calls on an in-process engine (real worker processes, no HTTP).

1. db.exec point queries: the hub's cost per `await db.exec(...)` above bare Python sqlite3.
2. require("date-fns"): the wall time of a job that requires it, first run vs tenth.

Run by `run_bench.py` after the HTTP benchmark (it appends to bench/results/latest.{md,json}),
or on its own:  .venv/bin/python bench/outside_bench.py [--out DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypeVar

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import report  # noqa: E402
from hub.engine.engine import EngineConfig, RunRequest, RunResult  # noqa: E402
from hub.engine.modules import installed_builds, mentioned  # noqa: E402
from hub.engine.threaded import ThreadedEngine  # noqa: E402
from hub.outside.database import Database  # noqa: E402
from hub.outside.netpolicy import NetPolicy  # noqa: E402
from hub.services.outside import HubBridge  # noqa: E402
from shared.header import Limits  # noqa: E402

T = TypeVar("T")

ROWS = 10_000
QUERIES = 100
ROUNDS = 5
MODULE_RUNS = 10
PAUSE_S = 0.1
DB_TARGET_MS = 3.0  # hub overhead per db.exec, above bare sqlite3
MODULE_TARGET_MS = 5.0  # wall time of the tenth require("date-fns") run
LIMITS = Limits(runtime_ms=30_000, memory_mb=128, cpu_ms=20_000)
POINT_SQL = "SELECT * FROM t WHERE id = ?"

DB_JOB = f"""let n = 0
for (let i = 1; i <= {QUERIES}; i++) {{
  const rows = await db.exec("{POINT_SQL}", [i])
  n += rows.length
}}
return n"""
LOOP_JOB = f"""let n = 0
for (let i = 1; i <= {QUERIES}; i++) {{
  const rows = [i]
  n += rows.length
}}
return n"""
MODULE_JOB = 'const { format } = require("date-fns"); return format(new Date(0), "yyyy")'
PLAIN_JOB = 'return "1970"'

_ids = itertools.count()


class BenchEngine(ThreadedEngine):
    """The engine, called synchronously, timing each run on its own loop."""

    def run(self, source: str, **kw: Any) -> tuple[RunResult, float]:
        """Run a job body; returns its result and the wall time of engine.run (ms), timed on
        the engine's own loop, so the hop from this thread is not counted."""
        req = RunRequest(
            job_id=f"bench_{next(_ids)}",
            job_name="bench",
            source=source,
            limits=LIMITS,
            request={"method": "GET", "caller": {"kind": "anonymous"}},
            sign_key="YmVuY2ggc2lnbmluZyBrZXk=",
            staff_id=None,
            **kw,
        )

        async def timed() -> tuple[RunResult, float]:
            started = time.perf_counter()
            result = await self.engine.run(req)
            return result, (time.perf_counter() - started) * 1000

        result, wall_ms = self.call(timed())
        if not result.ok:
            message = result.error.message if result.error else "no error"
            raise RuntimeError(f"bench job failed: {message}\n{source}")
        return result, wall_ms


def body(result: RunResult) -> Any:
    return json.loads(result.body)


def seed(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value REAL)")
        conn.executemany(
            "INSERT INTO t VALUES (?, ?, ?)",
            ((i, f"name {i}", i * 0.5) for i in range(1, ROWS + 1)),
        )
        conn.commit()
    finally:
        conn.close()


def bare_ms_per_query(path: Path) -> float:
    """Python sqlite3, one connection: median over ROUNDS of (QUERIES point queries) / QUERIES."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(POINT_SQL, (1,)).fetchall()  # warm the page cache
        rounds = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            for i in range(1, QUERIES + 1):
                conn.execute(POINT_SQL, (i,)).fetchall()
            rounds.append((time.perf_counter() - started) * 1000 / QUERIES)
    finally:
        conn.close()
    return statistics.median(rounds)


def db_exec_bench(path: Path) -> dict[str, Any]:
    bare = bare_ms_per_query(path)
    database = Database(f"sqlite:///{path}", 2)
    bridge = HubBridge(database, NetPolicy())
    engine = BenchEngine(EngineConfig(max_concurrent=1, spare_workers=1), bridge)
    try:
        for source in (DB_JOB, LOOP_JOB):  # warm-up: connections, workers, compiled paths
            engine.run(source)
        db_runtime, db_wall, loop_runtime, loop_wall = [], [], [], []
        for _ in range(ROUNDS):
            result, wall = engine.run(DB_JOB)
            if body(result) != QUERIES:
                raise RuntimeError(f"the db.exec job returned {body(result)!r}, not {QUERIES}")
            db_runtime.append(float(result.runtime_ms))
            db_wall.append(wall)
            result, wall = engine.run(LOOP_JOB)
            loop_runtime.append(float(result.runtime_ms))
            loop_wall.append(wall)
    finally:
        try:
            engine.call(bridge.close())  # the database's pool, on the loop that used it
        finally:
            engine.close()
    med = statistics.median
    per_query = (med(db_runtime) - med(loop_runtime)) / QUERIES
    per_query_wall = (med(db_wall) - med(loop_wall)) / QUERIES
    overhead = per_query - bare
    return {
        "rows": ROWS,
        "queries_per_run": QUERIES,
        "rounds": ROUNDS,
        "bare_ms_per_query": round(bare, 4),
        "job_runtime_ms": med(db_runtime),
        "loop_runtime_ms": med(loop_runtime),
        "job_wall_ms": round(med(db_wall), 2),
        "loop_wall_ms": round(med(loop_wall), 2),
        "hub_ms_per_query": round(per_query, 3),
        "hub_ms_per_query_wall": round(per_query_wall, 3),
        "hub_overhead_ms_per_query": round(overhead, 3),
        "hub_overhead_ms_per_query_wall": round(per_query_wall - bare, 3),
        "target_ms": DB_TARGET_MS,
        "verdict": "PASS" if overhead < DB_TARGET_MS else "FAIL",
    }


def module_bench() -> dict[str, Any]:
    builds = installed_builds(["date-fns"])
    if "date-fns" not in builds:
        raise RuntimeError("date-fns is not installed (run `make setup`)")
    modules = [b.as_message() for b in mentioned(MODULE_JOB, builds)]
    engine = BenchEngine(EngineConfig(max_concurrent=1, spare_workers=1))
    try:
        engine.run(PLAIN_JOB)  # warm-up: the pool's first runs, not the comparison
        plain = []
        for _ in range(ROUNDS):
            time.sleep(PAUSE_S)
            result, wall = engine.run(PLAIN_JOB)
            plain.append(wall)
        walls, runtimes = [], []
        for _ in range(MODULE_RUNS):
            time.sleep(PAUSE_S)
            result, wall = engine.run(MODULE_JOB, approved_modules=["date-fns"], modules=modules)
            if body(result) != "1970":
                raise RuntimeError(f"the date-fns job returned {body(result)!r}, not '1970'")
            walls.append(wall)
            runtimes.append(result.runtime_ms)
    finally:
        engine.close()
    tenth = walls[-1]
    return {
        "runs": MODULE_RUNS,
        "pause_s": PAUSE_S,
        "first_wall_ms": round(walls[0], 2),
        "tenth_wall_ms": round(tenth, 2),
        "all_wall_ms": [round(w, 2) for w in walls],
        "runtime_ms": runtimes,
        "plain_wall_ms": round(statistics.median(plain), 2),
        "plain_walls_ms": [round(w, 2) for w in plain],
        "target_ms": MODULE_TARGET_MS,
        "verdict": "PASS" if tenth < MODULE_TARGET_MS else "FAIL",
    }


def measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="webhub-outside-") as tmp:
        path = Path(tmp) / "bench.db"
        seed(path)
        db = db_exec_bench(path)
    return {"db_exec": db, "require_date_fns": module_bench()}


def fmt(value: float) -> str:
    if abs(value) < 1:
        return f"{value:.3f}"
    return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"


def target_lines(results: dict[str, Any]) -> list[str]:
    db, mod = results["db_exec"], results["require_date_fns"]
    return [
        f"- {db['verdict']} db.exec hub overhead per query "
        f"{fmt(db['hub_overhead_ms_per_query'])} ms, needs < {fmt(db['target_ms'])} ms "
        f"(job {fmt(db['job_runtime_ms'])} ms - loop {fmt(db['loop_runtime_ms'])} ms over "
        f"{db['queries_per_run']} queries = {fmt(db['hub_ms_per_query'])} ms/query, minus bare "
        f"sqlite3 {fmt(db['bare_ms_per_query'])} ms/query)",
        f"- {mod['verdict']} require(\"date-fns\") tenth run {fmt(mod['tenth_wall_ms'])} ms, "
        f"needs < {fmt(mod['target_ms'])} ms (first run {fmt(mod['first_wall_ms'])} ms, "
        f"plain `return \"1970\"` {fmt(mod['plain_wall_ms'])} ms)",
    ]


def markdown(results: dict[str, Any]) -> str:
    db, mod = results["db_exec"], results["require_date_fns"]
    lines = [
        "## Outside calls and modules (in-process engine, no HTTP)",
        "",
        f"db.exec: {db['rows']:,}-row SQLite table, {db['queries_per_run']} point queries a run, "
        f"medians of {db['rounds']} runs; engine of 1 concurrent run + 1 spare worker.",
        "",
        "| measurement | ms |",
        "|---|---:|",
        f"| bare sqlite3, per query | {fmt(db['bare_ms_per_query'])} |",
        f"| db.exec job, runtime_ms (wall) | {fmt(db['job_runtime_ms'])} "
        f"({fmt(db['job_wall_ms'])}) |",
        f"| same loop without db.exec, runtime_ms (wall) | {fmt(db['loop_runtime_ms'])} "
        f"({fmt(db['loop_wall_ms'])}) |",
        f"| hub, per db.exec (by wall) | {fmt(db['hub_ms_per_query'])} "
        f"({fmt(db['hub_ms_per_query_wall'])}) |",
        f"| hub overhead per query (by wall) | {fmt(db['hub_overhead_ms_per_query'])} "
        f"({fmt(db['hub_overhead_ms_per_query_wall'])}) |",
        f"| require(\"date-fns\") job, first run (wall) | {fmt(mod['first_wall_ms'])} |",
        f"| require(\"date-fns\") job, tenth run (wall) | {fmt(mod['tenth_wall_ms'])} |",
        f"| plain `return \"1970\"` (wall, median of {len(mod['plain_walls_ms'])}) "
        f"| {fmt(mod['plain_wall_ms'])} |",
        "",
        "date-fns runs, wall ms: " + ", ".join(fmt(w) for w in mod["all_wall_ms"]),
        "",
        *target_lines(results),
        "",
    ]
    return "\n".join(lines)


def run(out_dir: Path) -> int:
    """Measure, print and append the results. 0, or 1 if a measurement failed."""
    print("\n[outside] db.exec point queries and require(\"date-fns\")", flush=True)
    return report.run_section(out_dir, "outside", "Outside calls and modules", measure,
                              markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    return run(args.out)


if __name__ == "__main__":
    sys.exit(main())
