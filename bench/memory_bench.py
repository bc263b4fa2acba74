"""The hub's memory idle and with many runs waiting at once (issue 32).

The resident total (RSS) of the hub process and every worker process below it (found by
their parent links, bench/proc_cpu.py), read from /proc: once with the hub idle, once in
the middle of HOLD_RUNS `hold_io` runs (a 3 s timer each) sent at once from as many
threads. Waiting runs that share warm isolates should cost little beside the isolates
themselves: the target is at most TARGET_RATIO times the idle total.

RSS counts the pages worker processes share (the code of V8 and of Python) once per
process; PSS, each shared page split between the processes using it, is printed beside it,
not judged.
"""

import os
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from bench import proc_cpu, servers
from bench.cases import JSON, Case, check_answer, expect_equal
from bench.servers import RunningServer

HOLD_RUNS = 128
HOLD_S = 3.0
TARGET_RATIO = 1.5
# A run waits HOLD_S once it has a slot; the hub's queue refuses one after 15 s of waiting.
REQUEST_TIMEOUT_S = 60.0
HOLD_CASE = Case("hold_io", "hold_io", "", JSON, expect_equal({"ok": True}), ("c1",))
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MB = 1024 * 1024


@dataclass(frozen=True)
class TreeMemory:
    """The memory of a process tree at one moment, in MB."""

    rss_mb: float
    pss_mb: float | None  # None where /proc/<pid>/smaps_rollup cannot be read
    processes: int


def rss_bytes(pid: int) -> int:
    """Resident pages of pid (statm's second field), 0 once it has gone."""
    try:
        fields = (proc_cpu.PROC / str(pid) / "statm").read_text(encoding="ascii").split()
    except OSError:
        return 0
    return int(fields[1]) * PAGE_BYTES


def pss_bytes(pid: int) -> int | None:
    """pid's proportional set size: each shared page split between the processes using it."""
    try:
        text = (proc_cpu.PROC / str(pid) / "smaps_rollup").read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return None


def tree_memory(root: int) -> TreeMemory:
    """The memory of root and of every process below it now."""
    pids = [root, *proc_cpu.snapshot(root).descendants]
    pss = [pss_bytes(pid) for pid in pids]
    pss_total = None if None in pss else sum(value or 0 for value in pss) / MB
    return TreeMemory(sum(rss_bytes(pid) for pid in pids) / MB, pss_total, len(pids))


def hold_request(server: RunningServer) -> str:
    """One hold_io run: "200" for a right answer, else the status or the failure."""
    spec = server.spec
    try:
        answer = servers.http_get(spec.base_url + HOLD_CASE.path,
                                  HOLD_CASE.headers(spec.headers), REQUEST_TIMEOUT_S)
    except OSError as err:
        return f"no answer ({type(err).__name__})"
    problem = check_answer(HOLD_CASE, answer.status, answer.body)
    return "200" if problem is None else f"HTTP {answer.status}"


def held_memory(server: RunningServer) -> tuple[TreeMemory, Counter[str], float]:
    """HOLD_RUNS hold_io runs sent at once: the tree's memory half-way through a run's
    wait, the answers by kind, and the seconds until the last one."""
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=HOLD_RUNS) as pool:
        futures: list[Future[str]] = [pool.submit(hold_request, server)
                                      for _ in range(HOLD_RUNS)]
        time.sleep(HOLD_S / 2)
        middle = tree_memory(server.process.pid)
        answers = Counter(future.result() for future in futures)
    return middle, answers, time.monotonic() - started


def measure_memory(server: RunningServer) -> dict[str, Any]:
    """The hub's tree idle, then in the middle of HOLD_RUNS waiting runs."""
    proc_cpu.settle(server.process.pid)
    idle = tree_memory(server.process.pid)
    held, answers, wall_s = held_memory(server)
    ratio = held.rss_mb / idle.rss_mb
    pss_ratio = held.pss_mb / idle.pss_mb if held.pss_mb and idle.pss_mb else None
    all_right = answers["200"] == HOLD_RUNS
    return {
        "runs": HOLD_RUNS,
        "hold_s": HOLD_S,
        "idle": asdict(idle),
        "held": asdict(held),
        "ratio": round(ratio, 3),
        "pss_ratio": None if pss_ratio is None else round(pss_ratio, 3),
        "answers": dict(answers),
        "wall_s": round(wall_s, 2),
        "target_ratio": TARGET_RATIO,
        "verdict": "PASS" if all_right and ratio <= TARGET_RATIO else "FAIL",
    }


def memory_markdown(results: dict[str, Any]) -> str:
    r = results
    idle, held = r["idle"], r["held"]
    answers = ", ".join(f"{count} × {kind}" for kind, count in sorted(r["answers"].items()))
    at_once = "all waited at once" if r["wall_s"] < 2 * r["hold_s"] else "not all at once"
    wrong = "" if r["answers"].get("200") == r["runs"] else " — not every run answered right"
    return "\n".join([
        "## Memory: the hub and its workers, idle and with runs waiting",
        "",
        f"{r['runs']} `hold_io` runs ({r['hold_s']:.0f} s timer) sent at once; the tree read "
        f"{r['hold_s'] / 2:.1f} s after sending. Answers: {answers} in {r['wall_s']:.1f} s "
        f"({at_once}).",
        "",
        "| | processes | RSS MB | PSS MB |",
        "|---|---:|---:|---:|",
        f"| idle | {idle['processes']} | {idle['rss_mb']:.0f} | {fmt_mb(idle['pss_mb'])} |",
        f"| {r['runs']} waiting | {held['processes']} | {held['rss_mb']:.0f} "
        f"| {fmt_mb(held['pss_mb'])} |",
        "",
        f"- {r['verdict']} RSS with {r['runs']} runs waiting = {r['ratio']:.2f}x idle, needs "
        f"<= {r['target_ratio']}x (PSS: {fmt_ratio(r['pss_ratio'])}, not judged){wrong}",
        "",
    ])


def fmt_mb(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def hub_memory(running: list[RunningServer]) -> dict[str, Any] | None:
    """The default hub's memory figures (None without one; a failure as {"error": ...})."""
    hub = next((server for server in running if server.spec.name == "hub"), None)
    if hub is None:
        return None
    print(f"[hub] memory: idle, then {HOLD_RUNS} hold_io runs at once", flush=True)
    try:
        return measure_memory(hub)
    except (RuntimeError, OSError) as err:
        return {"error": str(err)}

