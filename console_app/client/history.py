"""Typed calls for run history, metrics and health: the History and Metrics pages.

Each function blocks (call it through ``session.tasks``); answers are decoded into the
wire's shapes (``shared.wire.history``, ``shared.wire.health``) and turned into the
console's own frozen views here, so pages and models never index raw dicts."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from console_app.client.connection import API, HubConnection
from shared.ndjson import LogLine
from shared.outcomes import OUTCOMES, SOURCES
from shared.wire import health as wire_health
from shared.wire import history as wire
from shared.wire.schedules import ScheduleHistory

__all__ = [
    "OUTCOMES", "SOURCES", "Health", "HistoryFilters", "MetricsSnapshot",
    "RunDetail", "RunPage", "RunSummary", "get_health", "get_metrics", "get_run",
    "list_runs",
]

MAX_PAGE = 500


@dataclass(frozen=True)
class HistoryFilters:
    """What ``GET /history`` can filter on; ``None`` means any."""

    job: str | None = None
    schedule: str | None = None
    status: str | None = None
    source: str | None = None
    search: str | None = None
    since: float | None = None       # epoch seconds
    until: float | None = None
    limit: int = 50
    offset: int = 0

    def params(self) -> dict[str, Any]:
        """Query parameters; times go as epoch milliseconds (the hub takes either)."""
        return {"job": self.job, "schedule": self.schedule, "status": self.status,
                "source": self.source, "search": self.search or None,
                "since": None if self.since is None else int(self.since * 1000),
                "until": None if self.until is None else int(self.until * 1000),
                "limit": self.limit, "offset": self.offset}

    def page(self, offset: int) -> HistoryFilters:
        return replace(self, offset=max(0, offset))


@dataclass(frozen=True)
class RunSummary:
    """One history row."""

    run_id: str
    job_name: str
    outcome: str
    source: str
    caller_kind: str
    caller_name: str | None
    started: float
    node: str
    runtime_ms: int | None = None
    code: str | None = None
    message: str | None = None
    http_status: int | None = None
    params: Any = None
    schedule_id: str | None = None
    schedule_name: str | None = None
    ref: str = ""
    limit: str | None = None

    @property
    def started_by(self) -> str:
        """Who or what started it, in words: 'owner (http)', 'schedule n1'."""
        if self.source == "schedule":
            return f"schedule {self.schedule_name or self.schedule_id or ''}".strip()
        who = self.caller_name or self.caller_kind
        return f"{who} ({self.source})"

    @classmethod
    def of(cls, run: wire.RunSummary) -> RunSummary:
        return cls(
            run_id=run.jobId, job_name=run.jobName, outcome=str(run.outcome),
            source=str(run.source), caller_kind=run.caller.kind, caller_name=run.caller.name,
            started=run.started, node=run.node, runtime_ms=run.runtimeMs, code=run.code,
            message=run.message, http_status=run.httpStatus, params=run.params,
            schedule_id=run.scheduleId, schedule_name=run.scheduleName, ref=run.ref,
            limit=run.limit)


@dataclass(frozen=True)
class RunDetail:
    """One run in full (``GET /<runId>/output``)."""

    summary: RunSummary
    logs: tuple[LogLine, ...] = ()   # ``t``: milliseconds from the start of the run
    logs_truncated: bool = False
    result: str | None = None
    result_type: str | None = None
    result_format: str | None = None
    result_truncated: bool = False
    result_size: int = 0
    calls: tuple[dict[str, Any], ...] = ()
    job_version: int | None = None

    @classmethod
    def of(cls, run: wire.RunDetail) -> RunDetail:
        logs = tuple(LogLine(x.level, x.message, x.ms) for x in run.logs)
        return cls(summary=RunSummary.of(run), logs=logs, logs_truncated=run.logsTruncated,
                   result=run.result, result_type=run.resultType,
                   result_format=run.resultFormat, result_truncated=run.resultTruncated,
                   result_size=run.resultSize, calls=run.calls, job_version=run.jobVersion)


@dataclass(frozen=True)
class RunPage:
    runs: tuple[RunSummary, ...]
    limit: int
    offset: int

    @property
    def has_more(self) -> bool:
        # The hub gives no total: a full page means there may be another.
        return len(self.runs) >= self.limit


@dataclass(frozen=True)
class MetricsSnapshot:
    total: int
    successes: int
    failures: int
    success_rate: float | None
    p50_ms: int | None
    p95_ms: int | None
    max_ms: int | None
    failures_today: int
    runs_per_hour: tuple[int, ...]          # the last 24 hours, oldest first
    failures_per_hour: tuple[int, ...]
    p95_per_hour: tuple[int | None, ...]    # None: no timed run that hour
    workers_running: int
    workers_queued: int
    workers_max: int
    node: str
    stores: wire.MetricsStores

    @classmethod
    def of(cls, figures: wire.Metrics) -> MetricsSnapshot:
        runtime = figures.runtime
        return cls(
            total=figures.total, successes=figures.successes, failures=figures.failures,
            success_rate=figures.successRate, p50_ms=runtime.p50, p95_ms=runtime.p95,
            max_ms=runtime.max, failures_today=figures.failuresToday,
            runs_per_hour=figures.runsPerHour, failures_per_hour=figures.failuresPerHour,
            p95_per_hour=figures.p95PerHour, workers_running=figures.workersRunning,
            workers_queued=figures.workersQueued, workers_max=figures.workersMax,
            node=figures.node, stores=figures.stores)


@dataclass(frozen=True)
class Health:
    ok: bool
    node: str
    workers_running: int
    workers_queued: int
    workers_max: int

    @classmethod
    def of(cls, health: wire_health.Health) -> Health:
        return cls(health.ok, health.node, health.workersRunning, health.workersQueued,
                   health.workersMax)


def list_runs(conn: HubConnection, filters: HistoryFilters) -> RunPage:
    """One page of history, newest first; a schedule filter uses the schedule's route
    so a deleted schedule answers SYS-404 instead of an empty page."""
    params = filters.params()
    query = {k: v for k, v in params.items() if v is not None}
    found: ScheduleHistory | wire.HistoryPage
    if filters.schedule:
        schedule = query.pop("schedule")
        found = conn.typed(ScheduleHistory, "GET", f"{API}/schedules/{schedule}/history",
                           params=query)
    else:
        found = conn.typed(wire.HistoryPage, "GET", f"{API}/history", params=query)
    return RunPage(tuple(RunSummary.of(r) for r in found.runs), filters.limit, filters.offset)


def get_run(conn: HubConnection, run_id: str) -> RunDetail:
    return RunDetail.of(conn.typed(wire.RunDetail, "GET", f"{API}/{run_id}/output"))


def get_metrics(conn: HubConnection) -> MetricsSnapshot:
    return MetricsSnapshot.of(conn.typed(wire.Metrics, "GET", f"{API}/metrics"))


def get_health(conn: HubConnection) -> wire_health.Health:
    """``/health`` as the hub sent it: the sign-in, the status bar's poll and the
    Metrics page's workers all read it here."""
    return conn.typed(wire_health.Health, "GET", f"{API}/health")
