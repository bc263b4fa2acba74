"""Run history at size, over HTTP: a hub whose local history holds 1,000,000 runs of
500 jobs, timed on the four reads the Owner console makes, plus what recording a run
costs the request that made it.

1. Fill ``history.db`` with :func:`bench.history_fill.fill_local_history`.
2. Start a real hub on that home with 500 job files, and time (median of 7, after a
   warm-up) ``/history`` first page, a ``/history`` search for a rare word,
   ``/metrics`` and ``/available``. Target: each under 100 ms.
3. Recording: ``History.begin`` + ``History.end`` on the request path (a queue put
   each; the writer thread runs meanwhile), per run. Target: under 1 ms.

Run by ``run_bench.py`` after the outside benchmark (appends to bench/results/latest.*),
or alone:  .venv/bin/python bench/history_bench.py [--runs N] [--out DIR]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import report, servers  # noqa: E402
from bench.history_fill import RARE, fill_local_history  # noqa: E402
from hub.auth import SYSTEM  # noqa: E402
from hub.engine.engine import RunResult  # noqa: E402
from hub.history.local import FILE_NAME, open_local_history  # noqa: E402
from hub.history.recorder import Recorder  # noqa: E402
from hub.services.history import History, RunStart  # noqa: E402
from shared.ndjson import LogLine  # noqa: E402

RUNS = 1_000_000
JOBS = 500
TIMES = 7
READ_TARGET_MS = 100.0
RECORD_TARGET_MS = 1.0
RECORDS = 20_000
READS = {
    "history first page": "/api/webjobs/history?limit=50",
    f"history search '{RARE}'": f"/api/webjobs/history?limit=50&search={RARE}",
    "metrics": "/api/webjobs/metrics",
    "available (500 jobs)": "/api/webjobs/available",
}


def _median_ms(url: str, headers: dict[str, str]) -> float:
    servers.http_get(url, headers, timeout_s=60)  # warm-up: caches, first query plans
    times = []
    for _ in range(TIMES):
        started = time.perf_counter()
        answer = servers.http_get(url, headers, timeout_s=60)
        times.append((time.perf_counter() - started) * 1000)
        if answer.status != 200:
            raise RuntimeError(f"{url} answered {answer.status}")
    return statistics.median(times)


def time_reads(home: Path, runs: int) -> dict[str, Any]:
    started = time.perf_counter()
    fill_local_history(home / FILE_NAME, runs, JOBS)
    fill_s = time.perf_counter() - started
    jobs_dir = home.parent / "jobs"
    jobs_dir.mkdir(exist_ok=True)
    for n in range(JOBS):
        (jobs_dir / f"job_{n:03d}.job.js").write_text(f"/*\nName: Job {n}\n*/\nreturn {n}\n")
    token = secrets.token_urlsafe(24)
    spec = servers.hub_spec(REPO_ROOT, servers.free_port(), jobs_dir, home, token)
    spec.env["WEBJOB_HISTORY_MAX"] = str(runs * 2)  # keep them all: time reads, not a prune
    server = servers.start(spec, home.parent / "logs")
    try:
        reads = {name: round(_median_ms(spec.base_url + path, spec.headers), 1)
                 for name, path in READS.items()}
    finally:
        servers.stop(server)
    return {"runs": runs, "jobs": JOBS, "fill_s": round(fill_s, 1), "reads_ms": reads}


def time_recording(home: Path) -> float:
    """Milliseconds per run that recording adds on the request path."""
    store = open_local_history(home, max_runs=100_000, retention_days=90)
    history = History(store, Recorder(store, home / "spool.jsonl"), "bench")
    logs = [LogLine("log", f"line {i}", i) for i in range(5)]
    result = RunResult("x", True, {"type": "json", "format": "application/json"},
                       b'{"ok":true}', None, 3, 2, logs)
    started = time.perf_counter()
    for i in range(RECORDS):
        start = RunStart(f"bench-{i}", "job_001", 1, "http", SYSTEM, {"n": i}, "GET", "r")
        history.end(history.begin(start), result, [])
    per_run = (time.perf_counter() - started) * 1000 / RECORDS
    history.recorder.flush(60)
    history.close()
    return per_run


def measure(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="webjobs-history-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        results = time_reads(home, runs)
        results["record_ms"] = round(time_recording(Path(tmp)), 4)
    return results


def markdown(results: dict[str, Any]) -> str:
    lines = [f"## Run history at {results['runs']:,} runs ({results['jobs']} jobs)", "",
             f"Filled in {results['fill_s']} s.", "",
             "| read | median ms | target | |", "|---|---|---|---|"]
    for name, ms in results["reads_ms"].items():
        verdict = "PASS" if ms < READ_TARGET_MS else "FAIL"
        lines.append(f"| {name} | {ms} | < {READ_TARGET_MS:.0f} | {verdict} |")
    rec = results["record_ms"]
    lines.append(f"| recording, per run, on the request path | {rec} | < {RECORD_TARGET_MS} |"
                 f" {'PASS' if rec < RECORD_TARGET_MS else 'FAIL'} |")
    return "\n".join(lines) + "\n"


def run(out_dir: Path, runs: int = RUNS) -> int:
    print(f"\n[history] {runs:,} runs: reads over HTTP, and recording", flush=True)
    return report.run_section(out_dir, "history", "Run history", lambda: measure(runs),
                              markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args(argv)
    return run(args.out, args.runs)


if __name__ == "__main__":
    sys.exit(main())
