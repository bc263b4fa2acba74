"""What the Metrics page shows, worked out without Qt.

``/metrics`` gives totals and runs per hour but not failures or p95 runtime per
hour, so those come from the last 24 hours of ``/history`` rows, bucketed by UTC
hour exactly as the hub buckets ``runsPerHour`` (index 23 is the current hour). The
hub's own count stays the one shown for runs per hour: history pages are capped."""

from __future__ import annotations

import math
from dataclasses import dataclass

from console_app.client.history import Health, MetricsSnapshot, RunSummary
from console_app.history.fmt import duration

__all__ = ["FAILED", "HOURS", "Card", "HourlySeries", "cards", "hourly_series", "percentile"]

HOURS = 24
FAILED = ("failed", "interrupted")       # as the hub counts failures
UNCOUNTED = ("running", "missed")        # neither a success nor a failure


@dataclass(frozen=True)
class Card:
    key: str
    title: str
    value: str
    detail: str = ""


@dataclass(frozen=True)
class HourlySeries:
    first_hour: int                      # epoch hour (seconds // 3600) of index 0
    runs: tuple[int, ...]
    failures: tuple[int, ...]
    p95_ms: tuple[int | None, ...]
    partial: bool = False                # history paging cut the rows short


def percentile(values: list[int], share: float) -> int | None:
    """Nearest-rank percentile; ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def hourly_series(runs: list[RunSummary], now: float, runs_per_hour: tuple[int, ...] = (),
                  partial: bool = False) -> HourlySeries:
    """24 hourly buckets, oldest first, ending with the hour ``now`` is in."""
    current = int(now // 3600)
    first = current - HOURS + 1
    counted = [0] * HOURS
    failures = [0] * HOURS
    runtimes: list[list[int]] = [[] for _ in range(HOURS)]
    for run in runs:
        slot = int(run.started // 3600) - first
        if not 0 <= slot < HOURS or run.outcome in UNCOUNTED:
            continue
        counted[slot] += 1
        failures[slot] += run.outcome in FAILED
        if run.runtime_ms is not None:
            runtimes[slot].append(run.runtime_ms)
    shown = tuple(runs_per_hour) if len(runs_per_hour) == HOURS else tuple(counted)
    return HourlySeries(first, shown, tuple(failures),
                        tuple(percentile(r, 0.95) for r in runtimes), partial)


def _rate(snapshot: MetricsSnapshot) -> str:
    if snapshot.success_rate is None:
        return "—"
    return f"{snapshot.success_rate * 100:.1f} %"


def cards(snapshot: MetricsSnapshot, health: Health | None = None) -> list[Card]:
    """The cards, in the order the page lays them out. Workers come from /health
    when it answered (it is the fresher, cheaper figure), else from /metrics."""
    running = health.workers_running if health else snapshot.workers_running
    queued = health.workers_queued if health else snapshot.workers_queued
    most = health.workers_max if health else snapshot.workers_max
    return [
        Card("total", "Runs", str(snapshot.total),
             f"{snapshot.successes} succeeded · {snapshot.failures} failed"),
        Card("rate", "Success rate", _rate(snapshot)),
        Card("runtime", "Runtime p50 / p95",
             f"{duration(snapshot.p50_ms)} / {duration(snapshot.p95_ms)}",
             f"max {duration(snapshot.max_ms)}"),
        Card("today", "Failures today", str(snapshot.failures_today), "since 00:00 UTC"),
        Card("workers", "Workers running / queued / max", f"{running} / {queued} / {most}",
             f"node {snapshot.node}"),
    ]
