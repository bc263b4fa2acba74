"""Typed calls for schedules: the Scheduler page and its Add/Edit dialog.

Blocking, like every client call (go through ``session.tasks``); the hub's JSON
becomes frozen dataclasses. A schedule's parameters are stored by the hub as JSON
text: :attr:`ScheduleInfo.params` keeps that text and :meth:`ScheduleInfo.params_dict`
reads it, so a schedule whose stored text is not an object still lists."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from console_app.client.connection import API, HubConnection

__all__ = [
    "CATCH_UP_MODES", "OVERLAP_MODES", "CronPreview", "ScheduleDraft", "ScheduleInfo",
    "create_schedule", "delete_schedule", "list_schedules", "preview_cron", "run_now",
    "set_enabled", "update_schedule",
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
    def from_json(cls, data: dict[str, Any]) -> ScheduleInfo:
        last = data.get("lastRun") or {}
        return cls(
            schedule_id=int(data["id"]), name=str(data.get("name", "")),
            job_name=str(data.get("jobName", "")), cron=str(data.get("cron", "")),
            cron_text=str(data.get("cronText", "")), timezone=str(data.get("timezone", "")),
            params=str(data.get("params") or "{}"), enabled=bool(data.get("enabled")),
            catch_up=str(data.get("catchUp") or "skip"),
            overlap=str(data.get("overlap") or "skip"),
            max_retries=int(data.get("maxRetries") or 0), last_run=last.get("when"),
            last_outcome=last.get("outcome"), next_run=data.get("nextRun"),
            running=bool(data.get("running")), retry_at=data.get("retryAt"),
            retry_attempt=int(data.get("retryAttempt") or 0))


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

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name, "jobName": self.job_name, "cron": self.cron,
            "params": self.params or {}, "enabled": self.enabled, "catchUp": self.catch_up,
            "overlap": self.overlap, "maxRetries": self.max_retries}
        if self.timezone:
            body["timezone"] = self.timezone
        return body


@dataclass(frozen=True)
class CronPreview:
    cron_text: str
    timezone: str
    next_times: tuple[str, ...]     # ISO 8601 UTC, as the hub sends them


def list_schedules(conn: HubConnection) -> list[ScheduleInfo]:
    answer = conn.get(f"{API}/schedules")
    return [ScheduleInfo.from_json(s) for s in answer.get("schedules") or ()]


def create_schedule(conn: HubConnection, draft: ScheduleDraft) -> ScheduleInfo:
    return ScheduleInfo.from_json(conn.post(f"{API}/schedules", json=draft.as_json())["schedule"])


def update_schedule(conn: HubConnection, schedule_id: int,
                    changes: dict[str, Any]) -> ScheduleInfo:
    answer = conn.put(f"{API}/schedules/{schedule_id}", json=changes)
    return ScheduleInfo.from_json(answer["schedule"])


def set_enabled(conn: HubConnection, schedule_id: int, enabled: bool) -> ScheduleInfo:
    return update_schedule(conn, schedule_id, {"enabled": enabled})


def delete_schedule(conn: HubConnection, schedule_id: int) -> None:
    conn.delete(f"{API}/schedules/{schedule_id}")


def run_now(conn: HubConnection, schedule_id: int,
            params: dict[str, Any] | None = None) -> str:
    """Run the schedule's job at once; blocks until it ends. Its outcome."""
    body = {} if params is None else {"params": params}
    return str(conn.post(f"{API}/schedules/{schedule_id}/run", json=body)["outcome"])


def preview_cron(conn: HubConnection, cron: str, timezone: str = "") -> CronPreview:
    """The plain words and next five fire times; a bad expression raises BadRequest."""
    body: dict[str, Any] = {"cron": cron}
    if timezone:
        body["timezone"] = timezone
    answer = conn.post(f"{API}/schedules/preview", json=body)
    return CronPreview(str(answer.get("cronText", "")), str(answer.get("timezone", "")),
                       tuple(str(t) for t in answer.get("next") or ()))
