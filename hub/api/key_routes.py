"""API keys pinned to one job (``Access: key``): owners issue, list and revoke them."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import KeysDep, OwnerDep
from hub.api.typed import TypedBody
from shared.wire.keys import IssuedKey, KeyLabel, KeyList, KeyRevoked

router = APIRouter(prefix="/api/webjobs")
# An empty body is a key without a label.
LABEL_BODY = TypedBody(KeyLabel, 64 * 1024, required=False)


@router.post("/{name}/keys", response_model=IssuedKey, openapi_extra=LABEL_BODY.doc)
async def issue_key(name: str, request: Request, _owner: OwnerDep, keys: KeysDep) -> object:
    await keys.job_must_exist(name)  # a missing job is said before its body is read
    body = await LABEL_BODY.read(request)
    return await keys.issue(name, body.label)


@router.get("/{name}/keys", response_model=KeyList)
async def list_keys(name: str, _owner: OwnerDep, keys: KeysDep) -> object:
    return await keys.listing(name)


@router.delete("/{name}/keys/{key_id}", response_model=KeyRevoked)
async def revoke_key(name: str, key_id: str, _owner: OwnerDep, keys: KeysDep) -> object:
    return await keys.revoke(name, key_id)
