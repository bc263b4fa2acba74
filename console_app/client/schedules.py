"""Typed calls for schedules: the Scheduler page and its Add/Edit dialog.

Blocking, like every client call (go through ``session.tasks``); answers are decoded
into the wire's shapes (``shared.wire.schedules``) and become the console's frozen
views. A schedule's parameters are stored by the hub as JSON text:
:attr:`ScheduleInfo.params` keeps that text and :meth:`ScheduleInfo.params_dict` reads
it, so a schedule whose stored text is not an object still lists."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from console_app.client.connection import API, HubConnection
from shared.wire import encode
from shared.wire import schedules as wire

__all__ = [
    "CATCH_UP_MODES", "OVERLAP_MODES", "CronPreview", "ScheduleDraft", "ScheduleInfo",
    "create_schedule", "delete_schedule", "list_schedules", "preview_cron", "run_now",
    "schedule_body", "set_enabled", "update_schedule",
]

CATCH_UP_MODES = ("skip", "one")
OVERLAP_MODES = ("skip", "allow")


@dataclass(frozen=True)
class ScheduleInfo:
    """One schedule as ``GET /schedules`` describes it."""

    schedule_id: int
    name: str
    job_name: str
    cron: str
    cron_text: str           # the hub's plain words: "At 02:30, Monday through Friday (UTC)"
    timezone: str
    params: str
    enabled: bool
    catch_up: str = "skip"
    overlap: str = "skip"
    max_retries: int = 0
    last_run: float | None = None
    last_outcome: str | None = None
    next_run: float | None = None
    running: bool = False
    retry_at: float | None = None
    retry_attempt: int = 0

    def params_dict(self) -> dict[str, Any]:
        try:
            value = json.loads(self.params or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @classmethod
    def of(cls, schedule: wire.Schedule) -> ScheduleInfo:
        last = schedule.lastRun
        return cls(
            schedule_id=schedule.id, name=schedule.name, job_name=schedule.jobName,
            cron=schedule.cron, cron_text=schedule.cronText, timezone=schedule.timezone,
            params=schedule.params or "{}", enabled=schedule.enabled,
            catch_up=schedule.catchUp or "skip", overlap=schedule.overlap or "skip",
            max_retries=schedule.maxRetries, last_run=None if last is None else last.when,
            last_outcome=None if last is None else last.outcome, next_run=schedule.nextRun,
            running=schedule.running, retry_at=schedule.retryAt,
            retry_attempt=schedule.retryAttempt)


@dataclass(frozen=True)
class ScheduleDraft:
    """What the Add/Edit dialog sends. ``timezone`` empty means the hub's default."""

    name: str
    job_name: str
    cron: str
    timezone: str = ""
    params: dict[str, Any] | None = None
    enabled: bool = False
    catch_up: str = "skip"
    overlap: str = "skip"
    max_retries: int = 0

    def fields(self) -> wire.ScheduleFields:
        return wire.ScheduleFields(
            name=self.name, jobName=self.job_name, cron=self.cron, params=self.params or {},
            enabled=self.enabled, catchUp=self.catch_up, overlap=self.overlap,
            maxRetries=self.max_retries, timezone=self.timezone or None)


def schedule_body(fields: wire.ScheduleFields) -> dict[str, Any]:
    """What is sent: only the fields given (a PUT changes what it names, and a null
    would ask for that field to be cleared)."""
    body: dict[str, Any] = encode(fields, drop_none=True)
    return body


@dataclass(frozen=True)
class CronPreview:
    cron_text: str
    timezone: str
    next_times: tuple[str, ...]     # ISO 8601 UTC, as the hub sends them


def list_schedules(conn: HubConnection) -> list[ScheduleInfo]:
    found = conn.typed(wire.ScheduleList, "GET", f"{API}/schedules")
    return [ScheduleInfo.of(s) for s in found.schedules]


def create_schedule(conn: HubConnection, draft: ScheduleDraft) -> ScheduleInfo:
    saved = conn.typed(wire.ScheduleSaved, "POST", f"{API}/schedules",
                       json=schedule_body(draft.fields()))
    return ScheduleInfo.of(saved.schedule)


def update_schedule(conn: HubConnection, schedule_id: int,
                    changes: wire.ScheduleFields) -> ScheduleInfo:
    saved = conn.typed(wire.ScheduleSaved, "PUT", f"{API}/schedules/{schedule_id}",
                       json=schedule_body(changes))
    return ScheduleInfo.of(saved.schedule)


def set_enabled(conn: HubConnection, schedule_id: int, enabled: bool) -> ScheduleInfo:
    return update_schedule(conn, schedule_id, wire.ScheduleFields(enabled=enabled))


def delete_schedule(conn: HubConnection, schedule_id: int) -> None:
    conn.typed(wire.ScheduleDeleted, "DELETE", f"{API}/schedules/{schedule_id}")


def run_now(conn: HubConnection, schedule_id: int,
            params: dict[str, Any] | None = None) -> str:
    """Run the schedule's job at once; blocks until it ends. Its outcome."""
    ran = conn.typed(wire.ScheduleRun, "POST", f"{API}/schedules/{schedule_id}/run",
                     json=encode(wire.ScheduleRunAsked(params)))
    return str(ran.outcome)


def preview_cron(conn: HubConnection, cron: str, timezone: str = "") -> CronPreview:
    """The plain words and next five fire times; a bad expression raises BadRequest."""
    asked = wire.CronPreviewAsked(cron, timezone or None)
    answer = conn.typed(wire.CronPreview, "POST", f"{API}/schedules/preview",
                        json=encode(asked))
    return CronPreview(answer.cronText, answer.timezone, answer.next)
