"""The bench's warm-against-fresh verdict: CPU per run read from /proc, the tables and the
target, which judges the workers' CPU per run and reports p50 and rate beside it."""

import os
import subprocess
import sys

from bench import proc_cpu
from bench.cases import CASES, HUB_CASES
from bench.proc_cpu import CpuPerRun, Snapshot, Stat
from bench.report import TARGETS, Row, Target, judge, markdown, warm_fresh_cpu_table
from bench.wrk_runner import WrkResult

TICK = proc_cpu.TICK_MS


def wrk(p50_ms: float, rps: float) -> WrkResult:
    return WrkResult(1, 1, 2, int(rps * 2), rps, {"p50": p50_ms, "p99": p50_ms * 3})


def module_row(label: str, p50_ms: float, rps: float, cpu: CpuPerRun | None) -> Row:
    return Row("hub", label, runs={"c1": wrk(p50_ms, 1000 / p50_ms), "c8": wrk(p50_ms, rps)},
               cpu=cpu)


def date_fns_rows(fresh_workers_ms: float) -> list[Row]:
    """date_fns warm at 0.5 ms of worker CPU a run against fresh at fresh_workers_ms, with
    p50 and rate ratios (4x, 7x) below 10 whatever the CPU says."""
    return [
        module_row("date_fns", 1.6, 840.0, CpuPerRun(1000, 700.0, 500.0, 3)),
        module_row("date_fns+fresh", 6.4, 120.0,
                   CpuPerRun(200, 150.0, fresh_workers_ms * 200, 4)),
    ]


def warm_target(job: str) -> Target:
    return next(t for t in TARGETS if t.job == job and t.other_job == job + "+fresh")


def test_cpu_per_run_divides_the_window_by_the_runs() -> None:
    cpu = CpuPerRun(runs=400, hub_ms=200.0, workers_ms=600.0, workers_seen=3)
    assert (cpu.hub_ms_per_run, cpu.workers_ms_per_run, cpu.total_ms_per_run) == (0.5, 1.5, 2.0)
    assert cpu.to_json()["total_ms_per_run"] == 2.0
    assert cpu.to_json()["workers_seen"] == 3


def test_per_run_counts_a_spare_that_came_and_a_worker_that_was_reaped() -> None:
    before = Snapshot(1, Stat(0, own=100, reaped=0), {2: Stat(1, own=50, reaped=0)})
    # Worker 2 exited (reaped: its whole life, 80 ticks, moved to the hub's reaped counter);
    # spare 3 started and made a fresh isolate ahead of the next request.
    after = Snapshot(1, Stat(0, own=130, reaped=80), {3: Stat(1, own=40, reaped=0)})
    cpu = proc_cpu.per_run(before, after, runs=10)
    assert cpu.hub_ms == 30 * TICK
    assert cpu.workers_ms == (80 - 50 + 40) * TICK
    assert cpu.workers_seen == 2
    assert cpu.workers_ms_per_run == 7 * TICK


def test_per_run_never_divides_by_zero_runs() -> None:
    snap = Snapshot(1, Stat(0, own=0, reaped=0), {})
    assert proc_cpu.per_run(snap, snap, runs=0).runs == 1


def test_a_child_that_ends_inside_the_window_is_counted() -> None:
    before = proc_cpu.settle(os.getpid())
    burn = "import time\nwhile time.process_time() < 0.3:\n    pass\n"
    subprocess.run([sys.executable, "-c", burn], check=True)
    cpu = proc_cpu.per_run(before, proc_cpu.settle(os.getpid()), runs=3)
    assert cpu.workers_ms >= 250
    assert cpu.workers_ms_per_run == cpu.workers_ms / 3


def test_only_the_module_jobs_are_measured_for_cpu_per_run() -> None:
    assert all(case.cpu_per_run for case in HUB_CASES)
    assert len(HUB_CASES) == 4
    assert not any(case.cpu_per_run for case in CASES)


def test_row_cpu_metrics_and_json() -> None:
    warm = date_fns_rows(20.0)[0]
    assert warm.metric("workers_cpu_ms") == 0.5
    assert warm.metric("hub_cpu_ms") == 0.7
    assert warm.metric("total_cpu_ms") == 1.2
    assert warm.cpu is not None
    assert warm.to_json()["cpu"] == warm.cpu.to_json()
    bare = Row("hub", "public_ping", runs={"c1": wrk(1.4, 700.0)})
    assert bare.metric("workers_cpu_ms") is None
    assert "cpu" not in bare.to_json()


def test_warm_fresh_is_judged_on_worker_cpu_with_p50_and_rate_beside() -> None:
    verdict = judge(warm_target("date_fns"), date_fns_rows(20.0))
    assert verdict.verdict == "PASS"
    assert "worker CPU per run: hub 0.50 ms, needs <= date_fns+fresh / 10 = 2.00 ms" in (
        verdict.text
    )
    assert "date_fns+fresh ÷ date_fns = 40.00x" in verdict.text
    # Not judged: total CPU (1.2 ms against 0.75 + 20 ms), p50 (6.4 / 1.6) and rate (840 / 120).
    assert "hub + worker CPU per run 17.29x, p50 4.00x, rps @8 7.00x" in verdict.text


def test_warm_fresh_fails_under_ten_times_less_worker_cpu() -> None:
    verdict = judge(warm_target("date_fns"), date_fns_rows(4.0))
    assert verdict.verdict == "FAIL"
    assert "date_fns+fresh ÷ date_fns = 8.00x" in verdict.text


def test_warm_fresh_without_cpu_figures_is_skipped() -> None:
    rows = [module_row("date_fns", 1.6, 840.0, None), date_fns_rows(20.0)[1]]
    verdict = judge(warm_target("date_fns"), rows)
    assert verdict.verdict == "SKIP"
    assert "hub not measured" in verdict.text


def test_the_cpu_table_beside_the_latency_table() -> None:
    rows = date_fns_rows(20.0)
    assert warm_fresh_cpu_table(rows)[2] == (
        "| date_fns | 0.70 | 0.50 | 0.75 | 20.0 | 40.00x | 17.29x |"
    )
    assert warm_fresh_cpu_table(rows[:1]) == []
    text = markdown(rows, {"date": "today"}, [])
    assert "| date_fns | 1.60 | 6.40 | 4.00x | 840 | 120 | 7.00x |" in text
    assert "| date_fns | 0.70 | 0.50 | 0.75 | 20.0 | 40.00x | 17.29x |" in text
