"""The CPU window of a measured run, shared by the engine check and the bench table: an
idle tree before, the wrk run, the request that waits out its backlog, an idle tree after;
the backlog's request counts as a run."""

import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

from bench import engine_checks, proc_cpu, run_bench, servers, wrk_runner
from bench.cases import HUB_CASES
from bench.proc_cpu import CpuPerRun
from bench.servers import HttpAnswer, RunningServer, ServerSpec
from bench.wrk_runner import WrkResult

CASE = HUB_CASES[0]
SERVER = RunningServer(ServerSpec("hub", [], Path("."), 8000, "/"),
                       cast(subprocess.Popen[bytes], type("P", (), {"pid": 4242})()),
                       Path("hub.log"))
CPU = CpuPerRun(runs=100, hub_ms=60.0, workers_ms=110.0, workers_seen=3)


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What happened, in order: settles, wrk runs, answered requests, the window."""
    happened: list[Any] = []

    def settle(pid: int) -> str:
        happened.append(("settle", pid))
        return f"snapshot {len(happened)}"

    def run_wrk(url: str, headers: dict[str, str], level: str, duration_s: int) -> WrkResult:
        happened.append(("wrk", level, duration_s))
        return WrkResult(1, 1, duration_s, 99, 99.0, {"p50": 1.0, "p99": 2.0})

    def http_get(url: str, headers: dict[str, str], timeout: float) -> HttpAnswer:
        happened.append("request")
        return HttpAnswer(200, "application/json", b"{}")

    def per_run(before: str, after: str, runs: int) -> CpuPerRun:
        happened.append(("window", before, after, runs))
        return CPU

    monkeypatch.setattr(proc_cpu, "settle", settle)
    monkeypatch.setattr(wrk_runner, "run_wrk", run_wrk)
    monkeypatch.setattr(servers, "http_get", http_get)
    monkeypatch.setattr(proc_cpu, "per_run", per_run)
    monkeypatch.setattr(engine_checks, "check_answer", lambda case, status, body: None)
    monkeypatch.setattr(run_bench, "check_answer", lambda case, status, body: None)
    return happened


def test_the_engine_check_measures_one_window(steps: list[Any]) -> None:
    found = engine_checks.measure_cpu(SERVER, CASE, duration_s=5, warmup_s=2)
    assert steps == [("wrk", "c1", 2), ("settle", 4242), ("wrk", "c1", 5), "request",
                     ("settle", 4242), ("window", "snapshot 2", "snapshot 5", 100)]
    assert found == {"job": CASE.label, "level": "c1", "duration_s": 5, **CPU.to_json(),
                     "errors": 0, "hub_target_ms": engine_checks.HUB_CPU_TARGET_MS,
                     "workers_target_ms": engine_checks.WORKER_CPU_TARGET_MS,
                     "hub_verdict": "PASS", "workers_verdict": "PASS"}


def test_a_wrong_answer_after_the_engine_check_is_an_error(
        steps: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_checks, "check_answer", lambda case, status, body: "wrong")
    with pytest.raises(RuntimeError, match="after the CPU run: wrong"):
        engine_checks.measure_cpu(SERVER, CASE, duration_s=5, warmup_s=0)


def test_the_bench_table_measures_the_same_window(steps: list[Any]) -> None:
    run, cpu = engine_checks.run_with_cpu(SERVER, CASE, "c1", 5,
                                          lambda: run_bench.drain(SERVER, CASE))
    assert (run.requests, cpu) == (99, CPU)
    assert steps == [("settle", 4242), ("wrk", "c1", 5), "request", ("settle", 4242),
                     ("window", "snapshot 1", "snapshot 4", 100)]
