"""Typed calls for run history, metrics and health: the History and Metrics pages.

Each function blocks (call it through ``session.tasks``) and turns the hub's camelCase
JSON into frozen dataclasses, so pages and models never index raw dicts."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from console_app.client.connection import API, HubConnection
from shared.ndjson import LogLine
from shared.outcomes import OUTCOMES, SOURCES

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
    def from_json(cls, data: dict[str, Any]) -> RunSummary:
        caller = data.get("caller") or {}
        return cls(
            run_id=str(data["jobId"]), job_name=str(data.get("jobName", "")),
            outcome=str(data.get("outcome", "")), source=str(data.get("source", "")),
            caller_kind=str(caller.get("kind", "")), caller_name=caller.get("name"),
            started=float(data.get("started") or 0), node=str(data.get("node", "")),
            runtime_ms=data.get("runtimeMs"), code=data.get("code"),
            message=data.get("message"), http_status=data.get("httpStatus"),
            params=data.get("params"), schedule_id=data.get("scheduleId"),
            schedule_name=data.get("scheduleName"), ref=str(data.get("ref") or ""),
            limit=data.get("limit"))


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
    def from_json(cls, data: dict[str, Any]) -> RunDetail:
        logs = tuple(LogLine(str(x.get("level", "log")), str(x.get("message", "")),
                             int(x.get("ms") or 0)) for x in data.get("logs") or ())
        return cls(summary=RunSummary.from_json(data), logs=logs,
                   logs_truncated=bool(data.get("logsTruncated")), result=data.get("result"),
                   result_type=data.get("resultType"), result_format=data.get("resultFormat"),
                   result_truncated=bool(data.get("resultTruncated")),
                   result_size=int(data.get("resultSize") or 0),
                   calls=tuple(data.get("calls") or ()), job_version=data.get("jobVersion"))


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
    stores: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MetricsSnapshot:
        runtime = data.get("runtime") or {}
        return cls(
            total=int(data.get("total") or 0), successes=int(data.get("successes") or 0),
            failures=int(data.get("failures") or 0), success_rate=data.get("successRate"),
            p50_ms=runtime.get("p50"), p95_ms=runtime.get("p95"), max_ms=runtime.get("max"),
            failures_today=int(data.get("failuresToday") or 0),
            runs_per_hour=tuple(int(x) for x in data.get("runsPerHour") or ()),
            failures_per_hour=tuple(int(x) for x in data.get("failuresPerHour") or ()),
            p95_per_hour=tuple(None if x is None else int(x)
                               for x in data.get("p95PerHour") or ()),
            workers_running=int(data.get("workersRunning") or 0),
            workers_queued=int(data.get("workersQueued") or 0),
            workers_max=int(data.get("workersMax") or 0), node=str(data.get("node", "")),
            stores=dict(data.get("stores") or {}))


@dataclass(frozen=True)
class Health:
    ok: bool
    node: str
    workers_running: int
    workers_queued: int
    workers_max: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Health:
        return cls(bool(data.get("ok")), str(data.get("node", "")),
                   int(data.get("workersRunning") or 0), int(data.get("workersQueued") or 0),
                   int(data.get("workersMax") or 0))


def list_runs(conn: HubConnection, filters: HistoryFilters) -> RunPage:
    """One page of history, newest first; a schedule filter uses the schedule's route
    so a deleted schedule answers SYS-404 instead of an empty page."""
    params = filters.params()
    if filters.schedule:
        schedule = params.pop("schedule")
        answer = conn.get(f"{API}/schedules/{schedule}/history", **params)
    else:
        answer = conn.get(f"{API}/history", **params)
    runs = tuple(RunSummary.from_json(r) for r in answer.get("runs") or ())
    return RunPage(runs, filters.limit, filters.offset)


def get_run(conn: HubConnection, run_id: str) -> RunDetail:
    return RunDetail.from_json(conn.get(f"{API}/{run_id}/output"))


def get_metrics(conn: HubConnection) -> MetricsSnapshot:
    return MetricsSnapshot.from_json(conn.get(f"{API}/metrics"))


def get_health(conn: HubConnection) -> Health:
    return Health.from_json(conn.get(f"{API}/health"))
