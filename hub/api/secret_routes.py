"""Secrets under /api/webjobs (owners only): names, who declares them, who changed
them and when — never a value. Included before the catch-all ``/{name}`` routes,
whose GET would otherwise take ``/secrets`` for a job run."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import hub_of, owner_of
from hub.api.inbound import read_json_object
from hub.secrets.service import MAX_VALUE, check_secret_name

router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 4 * MAX_VALUE + 1024  # a value of MAX_VALUE characters, JSON-escaped


@router.get("/secrets")
async def list_secrets(request: Request) -> dict[str, Any]:
    await owner_of(request)
    return {"secrets": await asyncio.to_thread(hub_of(request).secrets.listing)}


@router.get("/secrets/{name}/changes")
async def secret_changes(name: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    return await asyncio.to_thread(hub_of(request).secrets.changes, name)


@router.put("/secrets/{name}")
async def set_secret(name: str, request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    check_secret_name(name)  # a bad name is refused before its body is read
    data = await read_json_object(request, SMALL_BODY, exact=("value",))
    return await asyncio.to_thread(hub_of(request).secrets.set, name, data.get("value"),
                                   caller.name or caller.kind)


@router.delete("/secrets/{name}")
async def delete_secret(name: str, request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    return await asyncio.to_thread(hub_of(request).secrets.delete, name,
                                   caller.name or caller.kind)
