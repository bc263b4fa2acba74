"""What the Metrics page shows, worked out without Qt.

``/metrics`` gives runs, failures and p95 runtime for each of the last 24 hours
(index 23 is the current hour) from the history store's hourly rollups, so the
charts cost one call however many runs there were."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from console_app.client.history import Health, MetricsSnapshot
from console_app.history.fmt import duration

__all__ = ["HOURS", "Card", "HourlySeries", "cards", "hourly_series"]

HOURS = 24


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


def hourly_series(snapshot: MetricsSnapshot, now: float) -> HourlySeries:
    """The charts' 24 hours, oldest first, ending with the hour ``now`` is in;
    an hour the hub did not report counts as empty."""
    def padded(values: tuple[Any, ...], empty: Any) -> tuple[Any, ...]:
        return (tuple(values) + (empty,) * HOURS)[:HOURS] if len(values) != HOURS else values

    return HourlySeries(int(now // 3600) - HOURS + 1, padded(snapshot.runs_per_hour, 0),
                        padded(snapshot.failures_per_hour, 0),
                        padded(snapshot.p95_per_hour, None))


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
