"""Schedules under /api/webjobs (owner only): the Scheduler page's API. Every change
goes through the scheduling service, which saves it and tells this node's scheduler."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import HistoryDep, OwnerDep, SchedulingDep, SettingsDep
from hub.api.history_routes import history_query
from hub.api.inbound import read_json_object
from hub.api.typed import NO_BODY, TypedBody
from hub.services.scheduling import Schedule, Scheduling, describe_schedule, preview
from shared.errors import BadRequest, NotFound
from shared.wire.schedules import (
    CronPreview,
    CronPreviewAsked,
    ScheduleDeleted,
    ScheduleFields,
    ScheduleHistory,
    ScheduleList,
    SchedulerStatus,
    ScheduleRun,
    ScheduleRunAsked,
    ScheduleSaved,
    SchedulesReloaded,
)

router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 256 * 1024
SCHEDULE_BODY = TypedBody(ScheduleFields, SMALL_BODY)
PREVIEW_BODY = TypedBody(CronPreviewAsked, SMALL_BODY)
RUN_BODY = TypedBody(ScheduleRunAsked, SMALL_BODY, required=False)


def _schedule_id(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 12:
        raise BadRequest(f"'{raw[:20]}' is not a schedule id: ids are whole numbers")
    return int(raw)


async def _schedule(scheduling: Scheduling, raw: str) -> Schedule:
    found = await scheduling.get(_schedule_id(raw))
    if found is None:
        raise NotFound(f"There is no schedule {raw}")
    return found


async def _shaped_body(request: Request, body: TypedBody[Any]) -> dict[str, Any]:
    """The body as sent, once its shape is checked. ``params`` (the job's own input: any
    JSON object, or its text) is the schedule model's to judge: it checks depth, size and
    numbers in its own words, and tells a field left out from one sent as null, as a
    partial update must."""
    data = await read_json_object(request, body.limit)
    body.check({key: value for key, value in data.items() if key != "params"})
    return data


@router.post("/cron", response_model=SchedulesReloaded, openapi_extra=NO_BODY)
async def reload_schedules(_owner: OwnerDep, scheduling: SchedulingDep) -> object:
    return {"success": True, "loaded": await scheduling.reload()}


@router.get("/schedules", response_model=ScheduleList)
async def list_schedules(_owner: OwnerDep, scheduling: SchedulingDep) -> object:
    return {"schedules": await scheduling.listing()}


@router.get("/schedules/status", response_model=SchedulerStatus)
async def schedules_status(_owner: OwnerDep, scheduling: SchedulingDep,
                           settings: SettingsDep) -> object:
    return {"node": settings.node, "loaded": scheduling.loaded()}


@router.post("/schedules/preview", response_model=CronPreview, openapi_extra=PREVIEW_BODY.doc)
async def preview_schedule(request: Request, _owner: OwnerDep, settings: SettingsDep) -> object:
    body = await PREVIEW_BODY.read(request)
    return preview(body.cron, body.timezone or settings.timezone)


@router.post("/schedules", response_model=ScheduleSaved, openapi_extra=SCHEDULE_BODY.doc)
async def create_schedule(request: Request, caller: OwnerDep, scheduling: SchedulingDep,
                          settings: SettingsDep) -> object:
    data = await _shaped_body(request, SCHEDULE_BODY)
    made = await scheduling.create(data, settings.timezone, caller.name)
    return {"success": True, "schedule": made}


@router.put("/schedules/{schedule_id}", response_model=ScheduleSaved,
            openapi_extra=SCHEDULE_BODY.doc)
async def update_schedule(schedule_id: str, request: Request, _owner: OwnerDep,
                          scheduling: SchedulingDep, settings: SettingsDep) -> object:
    current = await _schedule(scheduling, schedule_id)
    data = await _shaped_body(request, SCHEDULE_BODY)
    return {"success": True,
            "schedule": await scheduling.update(current, data, settings.timezone)}


@router.delete("/schedules/{schedule_id}", response_model=ScheduleDeleted)
async def delete_schedule(schedule_id: str, _owner: OwnerDep,
                          scheduling: SchedulingDep) -> object:
    sid = _schedule_id(schedule_id)
    if not await scheduling.delete(sid):
        raise NotFound(f"There is no schedule {sid}")
    return {"success": True}


@router.post("/schedules/{schedule_id}/run", response_model=ScheduleRun,
             openapi_extra=RUN_BODY.doc)
async def run_schedule(schedule_id: str, request: Request, _owner: OwnerDep,
                       scheduling: SchedulingDep) -> object:
    schedule = await _schedule(scheduling, schedule_id)
    params = (await _shaped_body(request, RUN_BODY)).get("params")
    if params is not None and not isinstance(params, dict):
        raise BadRequest("'params' must be a JSON object")
    outcome = await scheduling.run_now(schedule, params)
    return {"success": outcome == "success", "outcome": outcome}


@router.get("/schedules/{schedule_id}/history", response_model=ScheduleHistory)
async def schedule_history(schedule_id: str, request: Request, _owner: OwnerDep,
                           scheduling: SchedulingDep, history: HistoryDep) -> object:
    schedule = await _schedule(scheduling, schedule_id)
    query = dataclasses.replace(history_query(request), schedule_id=str(schedule.id))
    runs = await history.search(query)
    return {"schedule": describe_schedule(schedule),
            "runs": [r.summary_json() for r in runs]}
