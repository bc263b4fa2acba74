"""The Scheduler page's bodies: schedules, their previews, runs and the scheduler's state.

A schedule's ``params`` is the JSON text the hub stores (normally an object); its
``catchUp``, ``overlap`` and last outcome stay text: the schedule table is shared with
other tools, and a value one of them wrote must still list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared.outcomes import Outcome
from shared.wire.history import RunSummary

__all__ = ["CronPreview", "CronPreviewAsked", "JobScheduleRef", "Schedule", "ScheduleDeleted",
           "ScheduleFields", "ScheduleHistory", "ScheduleLastRun", "ScheduleList",
           "ScheduleLoaded", "ScheduleRun", "ScheduleRunAsked", "ScheduleSaved",
           "SchedulerStatus", "SchedulesReloaded"]


@dataclass(frozen=True)
class ScheduleLastRun:
    when: float  # epoch seconds
    at: str | None = None  # the same, ISO-8601 UTC
    outcome: str | None = None


@dataclass(frozen=True)
class Schedule:
    id: int
    name: str
    jobName: str
    cron: str
    cronText: str  # in words: "At 02:30, Monday through Friday (UTC)", or why it is wrong
    timezone: str
    params: str  # JSON text as stored
    enabled: bool
    catchUp: str = "skip"  # skip | one
    overlap: str = "skip"  # skip | allow
    maxRetries: int = 0
    lastRun: ScheduleLastRun | None = None
    nextRun: float | None = None  # epoch seconds; null while off
    nextRunAt: str | None = None  # the same, ISO-8601 UTC
    retryAt: float | None = None
    retryAttempt: int = 0  # the pending retry's number; 0: none pending
    running: bool = False


@dataclass(frozen=True)
class ScheduleList:
    """``GET /schedules``."""

    schedules: tuple[Schedule, ...]


@dataclass(frozen=True)
class ScheduleFields:
    """``POST /schedules`` (name, jobName and cron required) and ``PUT /schedules/{id}``
    (only what changes). ``job`` is an older spelling of ``jobName``; ``params`` an
    object or its JSON text. Fields a GET shows (``id``, ``lastRun``...) may be echoed
    back and are ignored; any other field is refused."""

    name: str | None = None
    jobName: str | None = None
    job: str | None = None
    cron: str | None = None
    timezone: str | None = None  # IANA zone; the hub's default when not given
    params: dict[str, Any] | str | None = None
    enabled: bool | None = None  # a new schedule is saved off unless true
    catchUp: str | None = None
    overlap: str | None = None
    maxRetries: int | None = None


@dataclass(frozen=True)
class ScheduleSaved:
    success: bool
    schedule: Schedule


@dataclass(frozen=True)
class ScheduleDeleted:
    success: bool


@dataclass(frozen=True)
class ScheduleRunAsked:
    """``POST /schedules/{id}/run``'s body (optional): other parameters for this run."""

    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class ScheduleRun:
    success: bool
    outcome: Outcome


@dataclass(frozen=True)
class CronPreviewAsked:
    cron: str
    timezone: str | None = None  # the hub's default when not given


@dataclass(frozen=True)
class CronPreview:
    cronText: str
    timezone: str
    next: tuple[str, ...]  # the next fire times, ISO-8601 UTC


@dataclass(frozen=True)
class ScheduleLoaded:
    """A schedule as this node's scheduler holds it."""

    id: int
    name: str
    job: str
    cron: str
    timezone: str
    next: float | None  # epoch seconds; null: never again
    retryAt: float | None
    running: bool


@dataclass(frozen=True)
class SchedulerStatus:
    """``GET /schedules/status``."""

    node: str
    loaded: tuple[ScheduleLoaded, ...]


@dataclass(frozen=True)
class SchedulesReloaded:
    """``POST /cron``: every schedule read again from the store."""

    success: bool
    loaded: int


@dataclass(frozen=True)
class ScheduleHistory:
    """``GET /schedules/{id}/history``."""

    schedule: Schedule
    runs: tuple[RunSummary, ...]


@dataclass(frozen=True)
class JobScheduleRef:
    """A job's schedule as ``/available`` lists it."""

    id: int
    name: str
    enabled: bool
    cron: str
