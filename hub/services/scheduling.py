"""Schedules for the hub: what a firing does, and what the Scheduler page asks.

A firing runs the job as the scheduler (``request.method`` is ``SCHEDULE``,
``request.caller.kind`` is ``schedule``) with the schedule's stored parameters, and is
recorded in history with the schedule's id and name (a retry says which attempt it
is in the name). Occurrences that did not run are recorded as ONE ``missed`` record
per gap, with the reason and how many; a run whose node stopped beating as
``interrupted``, under the history id the run itself has. The claim that makes each
occurrence fire once per cluster is the Scheduler's business
(:mod:`hub.schedule.scheduler`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import logging
import time
from typing import Any

from hub.auth import SCHEDULER
from hub.cluster.nodes import NodeRegistry
from hub.engine.engine import new_ref
from hub.history.record import RunRecord
from hub.schedule.cron import parse_cron
from hub.schedule.model import Schedule, check_schedule_input, stored_params
from hub.schedule.scheduler import LEASE_S, NodeLiveness, Scheduler
from hub.schedule.store import ScheduleStore
from hub.schedule.timing import Firing, Missed
from hub.services.history import History, record_caller
from hub.services.runs import JobRunner, new_job_id
from hub.store.hubdb import iso_of
from shared.errors import WebJobsError

__all__ = ["RegistryLiveness", "Schedule", "Scheduling", "describe_schedule", "preview"]

log = logging.getLogger("webhub.schedule")
PREVIEW_TIMES = 5


def schedule_params(schedule: Schedule) -> dict[str, Any]:
    """The stored parameters; invalid (or too deeply nested) JSON is logged and the job
    runs with ``{}``. A row written by another tool is read as the door reads a request."""
    value = stored_params(schedule.params or "{}")
    if not isinstance(value, dict):
        log.info("[WebJob:%s] schedule %d (%s) has parameters that are not a JSON object; "
                 "running with {}", schedule.job_name, schedule.id, schedule.name)
        return {}
    return value


def next_fire(schedule: Schedule, after: float | None = None) -> float | None:
    """The real next fire time from the cron (None when it no longer parses)."""
    try:
        cron = parse_cron(schedule.cron, schedule.timezone)
    except WebJobsError:
        return None
    start = dt.datetime.fromtimestamp(time.time() if after is None else after, dt.UTC)
    return cron.next_after(start).timestamp()


def describe_schedule(schedule: Schedule, running: bool = False) -> dict[str, Any]:
    try:
        words = parse_cron(schedule.cron, schedule.timezone).describe()
    except WebJobsError as exc:
        words = exc.message
    last = None if schedule.last_run is None else {
        "when": schedule.last_run, "at": iso_of(schedule.last_run), "outcome": schedule.last_status}
    following = next_fire(schedule) if schedule.enabled else None
    return {
        "id": schedule.id, "name": schedule.name, "jobName": schedule.job_name,
        "cron": schedule.cron, "cronText": words, "timezone": schedule.timezone,
        "params": schedule.params, "enabled": schedule.enabled, "catchUp": schedule.catch_up,
        "overlap": schedule.overlap, "maxRetries": schedule.max_retries, "lastRun": last,
        "nextRun": following, "nextRunAt": iso_of(following),
        "retryAt": schedule.retry_at, "retryAttempt": schedule.retry_attempt,
        "running": running,
    }


def preview(cron: str, timezone: str) -> dict[str, Any]:
    parsed = parse_cron(cron, timezone)
    times = parsed.next_times(dt.datetime.now(dt.UTC), PREVIEW_TIMES)
    return {"cronText": parsed.describe(), "timezone": timezone,
            "next": [iso_of(t.timestamp()) for t in times]}


class RegistryLiveness:
    """The cluster's heartbeats (:class:`~hub.cluster.nodes.NodeRegistry`) as the
    scheduler asks them: the names of the nodes beating now."""

    def __init__(self, registry: NodeRegistry) -> None:
        self.registry = registry

    def alive_nodes(self) -> set[str]:
        return set(self.registry.alive_names())


class Scheduling:
    """The hub's scheduler: fires schedules through the job runner, records misses.
    ``liveness`` (the cluster's node heartbeats) lets it report the runs of nodes that
    died; ``lease_s`` is how long an ``overlap: skip`` run holds its schedule between
    renewals (a node stalled for less keeps it: nothing starts beside its run)."""

    def __init__(self, store: ScheduleStore, runner: JobRunner, history: History,
                 node: str, *, liveness: NodeLiveness | None = None,
                 lease_s: float = LEASE_S) -> None:
        self.store = store
        self.runner = runner
        self.history = history
        self.node = node
        self.scheduler = Scheduler(store, self.fire, self.missed, node, liveness=liveness,
                                   interrupted=self.interrupted, new_id=new_job_id,
                                   lease_s=lease_s)

    async def fire(self, schedule: Schedule, firing: Firing) -> str:
        name = schedule.name
        if firing.attempt:
            name = f"{name} (retry {firing.attempt} of {schedule.max_retries})"
        try:
            job = await self.runner.load(schedule.job_name)
        except WebJobsError as exc:
            self._not_run(schedule, name, firing, exc)
            return "failed"
        self.runner.telemetry.schedule_fired(firing.occurrence)
        result = await self.runner.run(
            job, caller=SCHEDULER, params=schedule_params(schedule),
            request={"method": "SCHEDULE", "url": "", "path": "", "query": {},
                     "headers": {}, "ip": ""},
            origin="schedule", schedule=(str(schedule.id), name),
            job_id=firing.job_id or None)
        return "success" if result.ok else "failed"

    def _not_run(self, schedule: Schedule, name: str, firing: Firing,
                 exc: WebJobsError) -> None:
        """A firing whose job could not even start (deleted, renamed): a failed run."""
        now = time.time()
        record = self._record(schedule, name, now, job_id=firing.job_id or None)
        self.history.recorder.record(record.finished(
            outcome="failed", code=exc.code, message=exc.message, ended=now, runtime_ms=0,
            http_status=exc.http_status))

    def missed(self, schedule: Schedule, missed: Missed) -> None:
        self.runner.telemetry.schedule_missed(missed.count)
        record = self._record(schedule, schedule.name, missed.first,
                              job_id=missed.record_id or None)
        self.history.recorder.record(record.finished(outcome="missed", message=missed.message))
        log.info("[WebJob:%s] schedule %d (%s) missed its %s occurrence%s: %s",
                 schedule.job_name, schedule.id, schedule.name, iso_of(missed.first),
                 "" if missed.count == 1 else f" and {missed.count - 1} more",
                 missed.reason)

    def interrupted(self, schedule: Schedule, firing: Firing, node: str) -> None:
        """A run of ``node`` that stopped beating while it went on."""
        name = schedule.name
        if firing.attempt:
            name = f"{name} (retry {firing.attempt} of {schedule.max_retries})"
        record = self._record(schedule, name, firing.occurrence, node=node,
                              job_id=firing.job_id or None)
        self.history.recorder.record(record.finished(
            outcome="interrupted", code="SYS-500", ended=time.time(),
            message=f"node {node} stopped (its heartbeat ended) before the run ended"))
        log.info("[WebJob:%s] schedule %d (%s): the run of its %s occurrence on node %s "
                 "was interrupted (the node stopped beating)", schedule.job_name,
                 schedule.id, schedule.name, iso_of(firing.occurrence), node)

    def _record(self, schedule: Schedule, name: str, started: float, *,
                node: str | None = None, job_id: str | None = None) -> RunRecord:
        return RunRecord(
            job_id=job_id or new_job_id(), job_name=schedule.job_name, source="schedule",
            caller=record_caller(SCHEDULER),
            started=started, node=node or self.node, ref=new_ref(), method="SCHEDULE",
            params=schedule_params(schedule), schedule_id=str(schedule.id),
            schedule_name=name)

    async def changed(self, schedule_id: int) -> None:
        """A schedule was saved or deleted on this node: read it again at once (other
        nodes hear of it by notification, or their poll)."""
        await self.scheduler.reload_one(schedule_id)

    async def reload(self) -> int:
        return await self.scheduler.reload()

    # -- the Scheduler page's changes: the store written, then this node's scheduler told

    async def get(self, schedule_id: int) -> Schedule | None:
        return await asyncio.to_thread(self.store.get, schedule_id)

    async def listing(self) -> list[dict[str, Any]]:
        """Every schedule described, with whether this node is running it now."""
        found = await asyncio.to_thread(self.store.list_schedules)
        running = {s["id"] for s in self.scheduler.status() if s.get("running")}
        return [describe_schedule(s, s.id in running) for s in found]

    def loaded(self) -> list[dict[str, Any]]:
        """The schedules this node's scheduler holds now."""
        return self.scheduler.status()

    async def create(self, data: dict[str, Any], default_tz: str,
                     by: str | None) -> dict[str, Any]:
        """``data`` (a request's body) checked and saved; the new schedule described."""
        given = check_schedule_input(data, default_tz)
        made = await asyncio.to_thread(self.store.create, given, by)
        await self.changed(made.id)
        return describe_schedule(made)

    async def update(self, current: Schedule, data: dict[str, Any],
                     default_tz: str) -> dict[str, Any]:
        """``data`` (what changes) merged into ``current``, checked and saved."""
        given = check_schedule_input(data, default_tz, existing=current)
        saved = await asyncio.to_thread(self.store.update, current.id, given)
        await self.changed(current.id)
        return describe_schedule(saved)

    async def delete(self, schedule_id: int) -> bool:
        """Whether there was such a schedule."""
        if not await asyncio.to_thread(self.store.delete, schedule_id):
            return False
        await self.changed(schedule_id)
        return True

    async def run_now(self, schedule: Schedule, params: dict[str, Any] | None) -> str:
        """Run a schedule's job at once (the Scheduler page's *Run now*), outside its
        cron: not claimed, not counted as an occurrence. It is the schedule's last run
        all the same, as the owner who pressed the button expects to see."""
        if params is not None:
            schedule = _with_params(schedule, params)
        started = time.time()
        outcome = await self.fire(schedule, Firing(started, 0, "manual"))
        # The job has run: a store that fails now is logged, not the owner's failure.
        await self.scheduler.call_store("record", self.store.record_fire, schedule.id, started,
                                        outcome)
        return outcome

    async def start(self) -> None:
        await self.scheduler.start()

    async def stop(self) -> None:
        await self.scheduler.stop()

    async def schedules_of(self) -> dict[str, list[dict[str, Any]]]:
        """Each job's schedules, for /available."""
        found: dict[str, list[dict[str, Any]]] = {}
        for schedule in await asyncio.to_thread(self.store.list_schedules):
            found.setdefault(schedule.job_name, []).append(
                {"id": schedule.id, "name": schedule.name, "enabled": schedule.enabled,
                 "cron": schedule.cron})
        return found


def _with_params(schedule: Schedule, params: dict[str, Any]) -> Schedule:
    return dataclasses.replace(schedule, params=json.dumps(params, separators=(",", ":")))
