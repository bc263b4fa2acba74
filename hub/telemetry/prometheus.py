"""The hub's Prometheus metrics, in a registry of their own per app (several apps in
one process, as in tests, never share counts).

Labels stay bounded: a job's name (bounded by the store; past ``MAX_JOB_LABELS``
distinct names, and for ad-hoc code that was never saved, ``other``), an outcome, a
source, a limit's name. Never a run id, a path or an address. The workers, the queue
and the history spool are read from the engine and the recorder at scrape time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = ["CONTENT_TYPE", "HubMetrics", "LiveFigures"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MAX_JOB_LABELS = 1000
OTHER_JOB = "other"
# Seconds: runs go from a millisecond to the runtime cap (minutes at most).
RUN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
WAIT_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
LATE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
CALL_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


@dataclass(frozen=True)
class LiveFigures:
    """Where the scrape-time gauges are read: the engine's counts (``Engine.metrics``),
    the spool's depth and whether the history store answered last time."""

    engine: Callable[[], dict[str, int]]
    spooled: Callable[[], int]
    history_up: Callable[[], bool]
    # Runs in flight on each worker process, by pid (``Engine.worker_loads``).
    worker_loads: Callable[[], dict[int, int]] = dict


class _LiveCollector(Collector):
    def __init__(self, figures: LiveFigures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[GaugeMetricFamily]:
        counts = self.figures.engine()
        workers = GaugeMetricFamily("webjobs_workers", "Worker processes by state",
                                    labels=["state"])
        starting = counts.get("starting", 0)
        idle = counts.get("idle", 0)
        busy = counts.get("busy", max(0, counts.get("workers", 0) - idle))
        for state, value in (("busy", busy), ("idle", idle), ("starting", starting)):
            workers.add_metric([state], value)
        yield workers
        yield GaugeMetricFamily("webjobs_queue_depth", "Runs waiting for a slot or a worker",
                                value=counts.get("workersQueued", 0))
        yield GaugeMetricFamily("webjobs_runs_in_flight", "Runs on workers now",
                                value=counts.get("runsInFlight", counts.get("workersRunning", 0)))
        per_worker = GaugeMetricFamily("webjobs_worker_runs",
                                       "Runs in flight on each worker process (its warm "
                                       "isolate serves up to WEBJOB_RUNS_PER_WORKER)",
                                       labels=["worker"])
        for pid, runs in sorted(self.figures.worker_loads().items()):
            per_worker.add_metric([str(pid)], runs)
        yield per_worker
        yield GaugeMetricFamily("webjobs_history_spool_depth",
                                "History records waiting in the spool file",
                                value=self.figures.spooled())
        yield GaugeMetricFamily("webjobs_history_store_up",
                                "1 when the history store answered the last write, else 0",
                                value=1 if self.figures.history_up() else 0)


class HubMetrics:
    """The counters and histograms the run path, the bridge, the scheduler and the
    limits add to; ``exposition()`` is the scrape's body."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self._jobs: set[str] = set()
        self.runs = Counter("webjobs_runs", "Finished runs", ["job", "outcome", "source"],
                            registry=reg)
        self.run_seconds = Histogram("webjobs_run_duration_seconds", "Run time of a run",
                                     ["job"], buckets=RUN_BUCKETS, registry=reg)
        self.queue_wait = Histogram("webjobs_queue_wait_seconds",
                                    "From a run's request to a worker taking it",
                                    buckets=WAIT_BUCKETS, registry=reg)
        self.lateness = Histogram("webjobs_schedule_lateness_seconds",
                                  "How long after its due time a schedule's run fired",
                                  buckets=LATE_BUCKETS, registry=reg)
        self.missed = Counter("webjobs_schedule_missed", "Scheduled occurrences that never ran",
                              registry=reg)
        self.calls = Counter("webjobs_bridge_calls", "db.exec and http() calls by jobs",
                             ["call", "result"], registry=reg)
        self.call_seconds = Histogram("webjobs_bridge_call_duration_seconds",
                                      "Time of a job's db.exec or http() call", ["call"],
                                      buckets=CALL_BUCKETS, registry=reg)
        self.refusals = Counter("webjobs_rate_limit_refusals",
                                "Requests refused by a limit (429)", ["limit"], registry=reg)

    def watch(self, figures: LiveFigures) -> None:
        self.registry.register(_LiveCollector(figures))

    def job_label(self, name: str, source: str) -> str:
        """``name``, while the distinct names stay under the cap; ad-hoc code's names
        are whatever the sender typed, so they are all ``other``."""
        if source == "adhoc":
            return OTHER_JOB
        if name in self._jobs:
            return name
        if len(self._jobs) >= MAX_JOB_LABELS:
            return OTHER_JOB
        self._jobs.add(name)
        return name

    def run_ended(self, job: str, source: str, outcome: str, seconds: float | None) -> None:
        label = self.job_label(job, source)
        self.runs.labels(label, outcome, source).inc()
        if seconds is not None:
            self.run_seconds.labels(label).observe(seconds)

    def call_ended(self, call: str, ok: bool, seconds: float) -> None:
        self.calls.labels(call, "ok" if ok else "error").inc()
        self.call_seconds.labels(call).observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    async def scrape_page(self) -> bytes:
        """``exposition()`` off the event loop: a hub with many jobs makes a large page."""
        return await asyncio.to_thread(self.exposition)
