"""Secrets under /api/webjobs (owners only): names, who declares them, who changed
them and when — never a value. Included before the catch-all ``/{name}`` routes,
whose GET would otherwise take ``/secrets`` for a job run."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import OwnerDep, SecretsDep
from hub.api.typed import TypedBody
from hub.services.secrets import MAX_VALUE, check_secret_name
from shared.wire.secrets import SecretChanges, SecretDeleted, SecretList, SecretSet, SecretValue

router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 4 * MAX_VALUE + 1024  # a value of MAX_VALUE characters, JSON-escaped
VALUE_BODY = TypedBody(SecretValue, SMALL_BODY, exact=("value",))


@router.get("/secrets", response_model=SecretList)
async def list_secrets(_owner: OwnerDep, secrets: SecretsDep) -> object:
    return await secrets.listing()


@router.get("/secrets/{name}/changes", response_model=SecretChanges)
async def secret_changes(name: str, _owner: OwnerDep, secrets: SecretsDep) -> object:
    return await secrets.changes(name)


@router.put("/secrets/{name}", response_model=SecretSet, openapi_extra=VALUE_BODY.doc)
async def set_secret(name: str, request: Request, caller: OwnerDep,
                     secrets: SecretsDep) -> object:
    check_secret_name(name)  # a bad name is refused before its body is read
    body = await VALUE_BODY.read(request)
    return await secrets.set(name, body.value, caller.name or caller.kind)


@router.delete("/secrets/{name}", response_model=SecretDeleted)
async def delete_secret(name: str, caller: OwnerDep, secrets: SecretsDep) -> object:
    return await secrets.delete(name, caller.name or caller.kind)
