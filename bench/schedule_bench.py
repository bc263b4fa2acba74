"""The scheduler at size, in-process on the embedded hub database (SQLite):

1. 10,000 enabled schedules: how long the scheduler takes to load them at start-up
   (target: under 2 s).
2. 100 more schedules all due in the same second, each firing a run that keeps a
   CPU busy for 20 ms in a worker thread (so the firings load the process they are
   timed in): how late each firing starts after its due time (target: p99 under 250 ms).

Every firing is claimed in the database first, as in a cluster. Run by
``run_bench.py`` after the history benchmark, or alone:
    .venv/bin/python bench/schedule_bench.py [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import report  # noqa: E402
from hub.schedule.model import Schedule, ScheduleInput  # noqa: E402
from hub.schedule.scheduler import Scheduler  # noqa: E402
from hub.schedule.store import ScheduleStore  # noqa: E402
from hub.schedule.timing import Firing  # noqa: E402
from hub.store.hubdb import open_hub_database  # noqa: E402

SCHEDULES = 10_000
DUE_TOGETHER = 100
LEAD_S = 4.0
WORK_S = 0.02
LOAD_TARGET_S = 2.0
LATE_TARGET_MS = 250.0


def _fill(store: ScheduleStore) -> None:
    """SCHEDULES yearly schedules (1 January, spread over the day): loaded, never due."""
    for i in range(SCHEDULES):
        store.create(ScheduleInput(f"yearly {i}", f"{i % 60} {(i // 60) % 24} 1 1 *",
                                   f"job_{i % 500}", "{}", True, "UTC"), "bench")


def _fill_due_together(store: ScheduleStore, due: dt.datetime) -> None:
    cron = f"{due.second} {due.minute} {due.hour} * * *"
    for i in range(DUE_TOGETHER):
        store.create(ScheduleInput(f"together {i}", cron, "job_together", "{}", True, "UTC"),
                     "bench")


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def _measure(store: ScheduleStore, due: dt.datetime) -> dict[str, Any]:
    lateness: list[float] = []

    async def fire(schedule: Schedule, firing: Firing) -> str:
        lateness.append((time.time() - firing.occurrence) * 1000)
        await asyncio.to_thread(_busy, WORK_S)
        return "success"

    scheduler = Scheduler(store, fire, lambda *_: None, "bench")
    started = time.perf_counter()
    await scheduler.start()
    load_s = time.perf_counter() - started
    loaded = len(scheduler.status())
    deadline = due.timestamp() + 10
    while len(lateness) < DUE_TOGETHER and time.time() < deadline:
        await asyncio.sleep(0.1)  # a bench waiting on the wall clock
    await scheduler.stop()
    ordered = sorted(lateness)
    return {"schedules": loaded, "load_s": round(load_s, 3), "fired": len(ordered),
            "late_p50_ms": round(statistics.median(ordered), 1) if ordered else None,
            "late_p99_ms": round(ordered[max(0, int(len(ordered) * 0.99) - 1)], 1)
            if ordered else None,
            "late_max_ms": round(ordered[-1], 1) if ordered else None}


def measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="webjobs-schedule-bench-") as tmp:
        store = ScheduleStore(open_hub_database(f"sqlite:///{Path(tmp) / 'hub.db'}"))
        fill_started = time.perf_counter()
        _fill(store)
        fill_s = time.perf_counter() - fill_started
        due = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=LEAD_S + 2)
        _fill_due_together(store, due)
        results = asyncio.run(_measure(store, due))
        results["fill_s"] = round(fill_s, 1)
        store.db.close()
    return results


def markdown(r: dict[str, Any]) -> str:
    load_ok = r["load_s"] < LOAD_TARGET_S
    late_ok = r["late_p99_ms"] is not None and r["late_p99_ms"] < LATE_TARGET_MS \
        and r["fired"] == DUE_TOGETHER
    return "\n".join([
        f"## Scheduler ({r['schedules']:,} enabled schedules)", "",
        "| measure | value | target | |", "|---|---|---|---|",
        f"| start-up load | {r['load_s']} s | < {LOAD_TARGET_S:.0f} s | "
        f"{'PASS' if load_ok else 'FAIL'} |",
        f"| lateness, {DUE_TOGETHER} due in one second (p50 / p99 / max) | "
        f"{r['late_p50_ms']} / {r['late_p99_ms']} / {r['late_max_ms']} ms "
        f"({r['fired']} fired) | p99 < {LATE_TARGET_MS:.0f} ms | {'PASS' if late_ok else 'FAIL'} |",
    ]) + "\n"


def run(out_dir: Path) -> int:
    print(f"\n[schedules] {SCHEDULES:,} schedules: load time and firing lateness", flush=True)
    return report.run_section(out_dir, "schedules", "Scheduler", measure, markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    return run(parser.parse_args(argv).out)


if __name__ == "__main__":
    sys.exit(main())
