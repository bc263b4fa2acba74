"""Where jobs are kept, and their versions: owners only. Included before the catch-all
``/{name}`` route, whose GET and POST would otherwise take these paths for job runs."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import hub_of, owner_of
from hub.api.inbound import read_json_object
from shared.errors import BadRequest

router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 64 * 1024


def _version_number(raw: str) -> int:
    """A version from the path. Digits only: ``int`` alone would take ' 2', '+2' or '٢'."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9 or int(raw) < 1:
        raise BadRequest(f"'{raw[:20]}' is not a version: versions are whole numbers from 1 up")
    return int(raw)


@router.get("/store")
async def store(request: Request) -> dict[str, Any]:
    await owner_of(request)
    return await asyncio.to_thread(hub_of(request).catalog.store_info)


@router.post("/store/import-files")
async def import_files(request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    data = await read_json_object(request, SMALL_BODY)
    overwrite = data.get("overwrite", False)
    if not isinstance(overwrite, bool):
        raise BadRequest("'overwrite' must be true or false")
    return await hub_of(request).catalog.import_files(overwrite, caller.name)


@router.get("/{name}/versions")
async def versions(name: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    return {"versions": await asyncio.to_thread(hub_of(request).catalog.versions, name)}


@router.get("/{name}/versions/{n}")
async def version(name: str, n: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    number = _version_number(n)
    return await asyncio.to_thread(hub_of(request).catalog.version, name, number)


@router.post("/{name}/versions/{n}/restore")
async def restore(name: str, n: str, request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    job = await hub_of(request).catalog.restore(name, _version_number(n), caller.name)
    return {"success": True, "job": job}
