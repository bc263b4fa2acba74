"""API keys pinned to one job (``Access: key``): owners issue, list and revoke them."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import hub_of, owner_of
from hub.api.inbound import read_json_object
from shared.errors import BadRequest, NotFound

router = APIRouter(prefix="/api/webjobs")


async def _job_must_exist(request: Request, name: str) -> None:
    await hub_of(request).runner.load(name)  # HUB-007 for a bad name, SYS-404 for none


@router.post("/{name}/keys")
async def issue_key(name: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    await _job_must_exist(request, name)
    label = (await read_json_object(request, 64 * 1024)).get("label", "")
    if not isinstance(label, str) or len(label) > 100:
        raise BadRequest("'label' must be text of at most 100 characters")
    key, secret = hub_of(request).users.issue_key(name, label)
    return {"success": True, "key": secret, **asdict(key)}


@router.get("/{name}/keys")
async def list_keys(name: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    await _job_must_exist(request, name)
    return {"keys": [asdict(k) for k in hub_of(request).users.list_keys(name)]}


def _key_id(raw: str) -> int | None:
    """A key id from the path; None for anything no key can have (digits only, and
    short: ``int`` alone would take ' 2', '+2' or '٢', and a huge one no database binds)."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        return None
    return int(raw)


@router.delete("/{name}/keys/{key_id}")
async def revoke_key(name: str, key_id: str, request: Request) -> dict[str, Any]:
    await owner_of(request)
    number = _key_id(key_id)
    if number is None or not hub_of(request).users.revoke_key(name, number):
        raise NotFound(f"Job '{name}' has no key {key_id[:40]}")
    return {"success": True}
