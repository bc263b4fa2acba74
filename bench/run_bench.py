"""Benchmark the hub beside the Node worker-per-request reference, workerd (one warm isolate,
an upper bound), a bare FastAPI floor and the hub with one run per worker.

Run from the repo root:  .venv/bin/python bench/run_bench.py [--quick] [--duration S]
(`make bench`; the options: bench/options.py, the servers and their rows: bench/lineup.py).
Results go to stdout and bench/results/latest.{md,json}.
Exit code: 0, or 1 when a server failed to start or answer, 2 when the setup is missing
(the reference folder, wrk), 130 when interrupted.
"""

import argparse
import datetime
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import (  # noqa: E402
    engine_checks,
    memory_bench,
    proc_cpu,
    report,
    servers,
    wrk_runner,
)
from bench.cases import Case, check_answer  # noqa: E402
from bench.lineup import ANCHOR_DIR, build_spec, case_for  # noqa: E402
from bench.options import parse_args  # noqa: E402
from bench.report import Row  # noqa: E402
from bench.servers import RunningServer, ServerError, ServerSpec  # noqa: E402

CHECK_TIMEOUT_S = 30.0
# What the hub's own parts measured (cpu, memory), by part; None where not measured.
HubParts = dict[str, dict[str, Any] | None]


def say(text: str) -> None:
    print(text, flush=True)


def setup_problem() -> str | None:
    if not (ANCHOR_DIR / "server.js").is_file():
        return (
            f"the reference server is missing: {ANCHOR_DIR / 'server.js'} not found.\n"
            "The benchmark needs ../shared/anchors/node-worker-per-request beside the repo."
        )
    if wrk_runner.wrk_path() is None:
        return wrk_runner.INSTALL_HINT
    return None


def check_case(server: RunningServer, case: Case) -> str | None:
    spec = server.spec
    try:
        answer = servers.http_get(
            spec.base_url + case.path, case.headers(spec.headers), CHECK_TIMEOUT_S
        )
    except OSError as err:
        return f"no answer: {err}"
    return check_answer(case, answer.status, answer.body)


def drain(server: RunningServer, case: Case) -> None:
    """Wait out a run's backlog: wrk hangs up, but a server may still run what it queued.

    One more request, queued behind that backlog, answers only once it is done.
    """
    check_case(server, case)


def measure_case(server: RunningServer, case: Case, warmup_s: int, duration_s: int) -> Row:
    spec = server.spec
    url, headers = spec.base_url + case.path, case.headers(spec.headers)
    row = Row(spec.name, case.label)
    for level in case.levels:
        try:
            if warmup_s > 0:
                wrk_runner.run_wrk(url, headers, level, warmup_s)
                drain(server, case)
            if case.cpu_per_run and level == engine_checks.CPU_LEVEL:
                row.runs[level], row.cpu = engine_checks.run_with_cpu(
                    server, case, level, duration_s, lambda: drain(server, case))
            else:
                row.runs[level] = wrk_runner.run_wrk(url, headers, level, duration_s)
                drain(server, case)
        except (wrk_runner.WrkError, RuntimeError) as err:
            row.status, row.note = "error", f"{level}: {err}"
            break
        cpu = f"; {cpu_summary(row.cpu)}" if row.cpu and level == engine_checks.CPU_LEVEL else ""
        say(f"  [{spec.name}] {case.label} {level}: {run_summary(row.runs[level])}{cpu}")
    return row


def cpu_summary(cpu: proc_cpu.CpuPerRun) -> str:
    return (f"CPU per run: hub {report.fmt_ms(cpu.hub_ms_per_run)} ms, workers "
            f"{report.fmt_ms(cpu.workers_ms_per_run)} ms")


def run_summary(run: wrk_runner.WrkResult) -> str:
    text = (
        f"p50 {report.fmt_ms(run.latency_ms['p50'])} ms, p99 "
        f"{report.fmt_ms(run.latency_ms['p99'])} ms, {report.fmt_rps(run.rps)} req/s"
    )
    return f"{text}, ERRORS: {run.error_text()}" if run.errors else text


def start_server(spec: ServerSpec, log_dir: Path, problems: list[str]) -> RunningServer | None:
    """Start spec; on failure record why and return None."""
    say(f"[{spec.name}] starting: {' '.join(spec.command)}")
    try:
        server = servers.start(spec, log_dir)
    except ServerError as err:
        problems.append(f"{spec.name} skipped: {err}")
        say(f"[{spec.name}] SKIPPED: {err}")
        return None
    say(f"[{spec.name}] ready on {spec.base_url}")
    return server


def skipped_rows(name: str, labels: list[str]) -> list[Row]:
    measured = [label for label in labels if case_for(name, label)]
    return [Row(name, label, "skipped", "see Problems") for label in measured]


def bench_all(
    running: list[RunningServer], args: argparse.Namespace, problems: list[str]
) -> list[Row]:
    """Every job on every running server, server after server within a job, so each
    hub/reference ratio comes from runs made seconds apart (and warm/fresh likewise)."""
    rows = []
    for label in args.cases:
        for server in running:
            case = case_for(server.spec.name, label)
            if case is not None:
                rows.append(bench_case(server, case, args, problems))
    return rows


def stop_all(running: list[RunningServer]) -> None:
    while running:
        server = running.pop()
        servers.stop(server)
        say(f"[{server.spec.name}] stopped")


def bench_case(
    server: RunningServer, case: Case, args: argparse.Namespace, problems: list[str]
) -> Row:
    name = server.spec.name
    problem = check_case(server, case)
    if problem is not None:
        problems.append(f"{name} failed the check on {case.label}: {problem}")
        say(f"[{name}] {case.label}: CHECK FAILED, not measured: {problem}")
        return Row(name, case.label, "check failed", problem[:200])
    say(f"[{name}] {case.label}: answer ok, measuring")
    row = measure_case(server, case, args.warmup, max(args.duration, case.min_duration_s))
    if row.status != "ok":
        problems.append(f"{name} on {case.label}: {row.note}")
    return row


def command_version(command: list[str], any_status: bool = False) -> str:
    """First line a command prints (wrk --version exits 1, hence any_status)."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines and (any_status or done.returncode == 0) else "?"


def run_meta(args: argparse.Namespace) -> dict[str, object]:
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": command_version(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"]),
        "cpus": os.cpu_count(),
        "machine": platform.platform(),
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "node": command_version(["node", "--version"]),
        "python": platform.python_version(),
        "wrk": " ".join(command_version(["wrk", "--version"], any_status=True).split()[:2]),
        "servers": args.servers,
        "cases": args.cases,
    }


def interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def run(args: argparse.Namespace) -> int:
    rows: list[Row] = []
    problems: list[str] = []
    started, load_before = time.monotonic(), os.getloadavg()[0]
    running: list[RunningServer] = []
    with tempfile.TemporaryDirectory(prefix="webhub-bench-") as home:
        token = secrets.token_urlsafe(24)
        try:
            for name in args.servers:
                spec = build_spec(name, Path(home), token)
                server = start_server(spec, args.out / "logs", problems)
                if server is None:
                    rows += skipped_rows(name, args.cases)
                else:
                    running.append(server)
            on_hub = hub_parts(running, args)
            rows += bench_all(running, args, problems)
        finally:
            stop_all(running)
    meta = {**run_meta(args), "elapsed_s": round(time.monotonic() - started, 1)}
    meta["load_1m"] = f"{load_before:.2f} -> {os.getloadavg()[0]:.2f}"
    text = report.markdown(rows, meta, problems)
    md_path, json_path = report.write_results(args.out, text, rows, meta, problems)
    say("\n" + text)
    say(f"written: {md_path} and {json_path}")
    return 1 if run_parts(args, on_hub) or problems else 0


def hub_parts(running: list[RunningServer], args: argparse.Namespace) -> HubParts:
    """The parts measured on the table's hub before its rows, by key (None: not measured).
    CPU first: a fresh-isolate hub pre-loads the modules of the jobs it has run."""
    return {
        "cpu": None if "cpu" in args.skip else hub_cpu(running, args),
        "memory": None if "memory" in args.skip else memory_bench.hub_memory(running),
    }


def hub_cpu(running: list[RunningServer], args: argparse.Namespace) -> dict[str, Any] | None:
    """The hub's and its workers' CPU per public_ping run, before it has run any other job,
    beside the floor's per request (None without a hub; a failure is kept as
    {"error": ...} and reported with the rest)."""
    results = server_cpu(running, "hub", args)
    if results is None or "error" in results:
        return results
    return engine_checks.with_floor(results, server_cpu(running, "floor", args))


def server_cpu(running: list[RunningServer], name: str,
               args: argparse.Namespace) -> dict[str, Any] | None:
    """The CPU per public_ping request of the server called ``name`` and what runs below it
    (None if it is not running)."""
    server = next((server for server in running if server.spec.name == name), None)
    case = case_for(name, "public_ping")
    if server is None or case is None:
        return None
    say(f"[{name}] CPU per {case.label} request: wrk at concurrency 1 for {args.duration} s")
    try:
        return engine_checks.measure_cpu(server, case, args.duration, args.warmup)
    except (RuntimeError, OSError, wrk_runner.WrkError) as err:
        return {"error": str(err)}


def given(results: dict[str, Any]) -> dict[str, Any]:
    if "error" in results:
        raise RuntimeError(results["error"])
    return results


def run_parts(args: argparse.Namespace, on_hub: HubParts) -> int:
    """The measurements besides the HTTP table, each appended to the results: 0, or 1 if any
    of them failed."""
    failed = 0
    cpu, memory = on_hub.get("cpu"), on_hub.get("memory")
    if cpu is not None:
        failed |= report.run_section(args.out, "cpu", "CPU per run", lambda: given(cpu),
                                     engine_checks.cpu_markdown)
    if memory is not None:
        failed |= report.run_section(args.out, "memory", "Memory", lambda: given(memory),
                                     memory_bench.memory_markdown)
    if "jit" not in args.skip:
        say("\n[jit] ten cpu_primes runs on a hub with one worker")
        failed |= report.run_section(
            args.out, "jit", "JIT cliff",
            lambda: engine_checks.measure_jit(REPO_ROOT, ANCHOR_DIR / "jobs", args.out / "logs"),
            engine_checks.jit_markdown)
    if "outside" not in args.skip:
        failed |= run_outside(args.out)
    if "history" not in args.skip:
        failed |= run_history(args.out, args.history_runs)
    if "schedule" not in args.skip:
        from bench import schedule_bench

        failed |= schedule_bench.run(args.out)
    if "cluster" not in args.skip:
        from bench import cluster_cases

        failed |= cluster_cases.run(args.out)
    return failed


def run_only(args: argparse.Namespace) -> int:
    """Only the parts --only names, each starting what it measures: the results begin
    afresh with a header, and each part appends to them."""
    meta = {key: value for key, value in run_meta(args).items()
            if key in ("date", "commit", "cpus", "machine", "python")}
    meta["only"] = args.only
    header = f"# WebJobs benchmark: {', '.join(args.only)} only\n\n{report.meta_line(meta)}\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.md").write_text(header, encoding="utf-8")
    (args.out / "latest.json").write_text(json.dumps({"meta": meta}, indent=2) + "\n",
                                          encoding="utf-8")
    say(header)
    return 1 if run_parts(args, {}) else 0


def run_outside(out_dir: Path) -> int:
    """db.exec and require() timings on an in-process engine, appended to the same results.
    Skipped with a message when the hub's modules cannot be imported."""
    try:
        from bench import outside_bench
    except ImportError as err:
        say(f"\n[outside] skipped: the hub's modules cannot be imported ({err})")
        return 0
    return outside_bench.run(out_dir)


def run_history(out_dir: Path, runs: int) -> int:
    """Run history at size: reads over HTTP and the cost of recording, appended."""
    from bench import history_bench

    return history_bench.run(out_dir, runs)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, interrupt)
    if args.only:
        try:
            return run_only(args)
        except KeyboardInterrupt:
            print("\nbench: interrupted", file=sys.stderr)
            return 130
    problem = setup_problem()
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 2
    if shutil.which("node") is None:
        say("bench: node is not on PATH; the reference server will be skipped")
    try:
        return run(args)
    except KeyboardInterrupt:
        print("\nbench: interrupted; every server started was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
