"""Schedules under /api/webjobs (owner only): the Scheduler page's API."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import hub_of, owner_of
from hub.api.history_routes import history_query
from hub.api.inbound import read_json_object
from hub.schedule.model import Schedule, check_schedule_input
from hub.services.scheduling import describe_schedule, preview
from shared.errors import BadRequest, NotFound

router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 256 * 1024


def _schedule_id(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 12:
        raise BadRequest(f"'{raw[:20]}' is not a schedule id: ids are whole numbers")
    return int(raw)


async def _schedule(request: Request, raw: str) -> Schedule:
    found = await asyncio.to_thread(hub_of(request).scheduling.store.get, _schedule_id(raw))
    if found is None:
        raise NotFound(f"There is no schedule {raw}")
    return found


def _running_ids(request: Request) -> set[str]:
    return {str(s["id"]) for s in hub_of(request).scheduling.scheduler.status()
            if s.get("running")}


@router.post("/cron")
async def reload_schedules(request: Request) -> dict[str, Any]:
    await owner_of(request)
    return {"success": True, "loaded": await hub_of(request).scheduling.reload()}


@router.get("/schedules")
async def list_schedules(request: Request) -> dict[str, Any]:
    await owner_of(request)
    found = await asyncio.to_thread(hub_of(request).scheduling.store.list_schedules)
    running = _running_ids(request)
    return {"schedules": [describe_schedule(s, str(s.id) in running) for s in found]}


@router.get("/schedules/status")
async def schedules_status(request: Request) -> dict[str, Any]:
    await owner_of(request)
    hub = hub_of(request)
    return {"node": hub.settings.node, "loaded": hub.scheduling.scheduler.status()}


@router.post("/schedules/preview")
async def preview_schedule(request: Request) -> dict[str, Any]:
    await owner_of(request)
    data = await read_json_object(request, SMALL_BODY)
    cron, zone = data.get("cron"), data.get("timezone") or hub_of(request).settings.timezone
    if not isinstance(cron, str) or not isinstance(zone, str):
        raise BadRequest("'cron' must be a cron expression and 'timezone' a zone name")
    return preview(cron, zone)


@router.post("/schedules")
async def create_schedule(request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    hub = hub_of(request)
    data = await read_json_object(request, SMALL_BODY)
    given = check_schedule_input(data, hub.settings.timezone)
    made = await asyncio.to_thread(hub.scheduling.store.create, given, caller.name)
    await hub.scheduling.changed(made.id)
    return {"success": True, "schedule": describe_schedule(made)}


@router.put("/schedules/{schedule_id}")
async def update_schedule(schedule_id: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    hub = hub_of(request)
    current = await _schedule(request, schedule_id)
    data = await read_json_object(request, SMALL_BODY)
    given = check_schedule_input(data, hub.settings.timezone, existing=current)
    changed = await asyncio.to_thread(hub.scheduling.store.update, current.id, given)
    await hub.scheduling.changed(current.id)
    return {"success": True, "schedule": describe_schedule(changed)}


@router.delete("/schedules/{schedule_id}")
async def delete_schedule(schedule_id: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    hub = hub_of(request)
    sid = _schedule_id(schedule_id)
    if not await asyncio.to_thread(hub.scheduling.store.delete, sid):
        raise NotFound(f"There is no schedule {sid}")
    await hub.scheduling.changed(sid)
    return {"success": True}


@router.post("/schedules/{schedule_id}/run")
async def run_schedule(schedule_id: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    schedule = await _schedule(request, schedule_id)
    data = await read_json_object(request, SMALL_BODY) if await request.body() else {}
    params = data.get("params")
    if params is not None and not isinstance(params, dict):
        raise BadRequest("'params' must be a JSON object")
    outcome = await hub_of(request).scheduling.run_now(schedule, params)
    return {"success": outcome == "success", "outcome": outcome}


@router.get("/schedules/{schedule_id}/history")
async def schedule_history(schedule_id: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    schedule = await _schedule(request, schedule_id)
    query = dataclasses.replace(history_query(request), schedule_id=str(schedule.id))
    runs = await hub_of(request).history.search(query)
    return {"schedule": describe_schedule(schedule),
            "runs": [r.summary_json() for r in runs]}
