"""Run history's bodies: history pages, one run in full, its console, the metrics, and
the per-job figures of ``/available``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.outcomes import Outcome, RunSource

__all__ = ["HistoryPage", "HistoryStoreState", "JobLastRun", "JobStats", "Metrics",
           "MetricsStores", "RunCaller", "RunDetail", "RunLogLine", "RunLogs", "RunSummary",
           "RuntimeFigures"]


@dataclass(frozen=True)
class RunCaller:
    """Who started a run, as history keeps it."""

    kind: str  # anonymous | user | owner | key | system | schedule
    id: str | None = None
    name: str | None = None
    userClass: str | None = None


@dataclass(frozen=True)
class RunSummary:
    """A history row: a run without its console, calls and result text."""

    jobId: str
    jobName: str
    source: RunSource
    caller: RunCaller
    started: float  # epoch seconds
    node: str
    ref: str
    outcome: Outcome
    jobVersion: int | None = None
    method: str = ""
    params: Any = None  # masked
    code: str | None = None  # the error code of a run that did not succeed
    message: str | None = None
    limit: str | None = None  # the limit that ended it: runtime | memory | cpu
    httpStatus: int | None = None
    resultTruncated: bool = False
    resultSize: int = 0  # bytes of the whole result
    resultType: str | None = None
    resultFormat: str | None = None  # its content type
    logsTruncated: bool = False
    ended: float | None = None
    runtimeMs: int | None = None
    cpuMs: int | None = None
    scheduleId: str | None = None
    scheduleName: str | None = None


@dataclass(frozen=True)
class RunLogLine:
    level: str
    message: str
    ms: int  # milliseconds from the start of the run


@dataclass(frozen=True)
class RunDetail(RunSummary):
    """``GET /{runId}/output``: the run in full."""

    logs: tuple[RunLogLine, ...] = ()
    calls: tuple[dict[str, Any], ...] = ()  # its outbound http calls and db queries
    result: str | None = None  # the text kept (binary results keep none)


@dataclass(frozen=True)
class HistoryPage:
    """``GET /history``: newest first; a full page means there may be another."""

    runs: tuple[RunSummary, ...]
    limit: int
    offset: int


@dataclass(frozen=True)
class RunLogs:
    """``GET /{runId}/logs``."""

    jobId: str
    outcome: Outcome
    logs: tuple[RunLogLine, ...]
    truncated: bool


@dataclass(frozen=True)
class RuntimeFigures:
    p50: int | None  # milliseconds; null while no run was timed
    p95: int | None
    max: int | None


@dataclass(frozen=True)
class HistoryStoreState:
    kind: str  # local | sql | mongo
    storeReachable: bool
    spooled: int  # records waiting for the store


@dataclass(frozen=True)
class MetricsStores:
    jobs: str  # the job store's kind
    history: HistoryStoreState


@dataclass(frozen=True)
class Metrics:
    """``GET /metrics``: the run figures of the history, and this node's workers."""

    total: int
    successes: int
    failures: int
    successRate: float | None  # null while nothing ended
    runtime: RuntimeFigures
    failuresToday: int
    runsPerHour: tuple[int, ...]  # the last 24 hours, oldest first
    failuresPerHour: tuple[int, ...]
    p95PerHour: tuple[int | None, ...]  # null: no timed run that hour
    workersRunning: int
    workersQueued: int
    workersMax: int
    node: str
    stores: MetricsStores


@dataclass(frozen=True)
class JobLastRun:
    started: float
    outcome: Outcome | None
    runtime: int | None  # milliseconds
    by: str | None  # the caller's name


@dataclass(frozen=True)
class JobStats:
    """A job's figures in ``/available`` (zeros when it never ran)."""

    runs: int
    failures: int
    successRate: float | None
    lastRun: JobLastRun | None
    p50Runtime: int | None
    running: bool
