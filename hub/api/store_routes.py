"""Where jobs are kept, and their versions: owners only. Included before the catch-all
``/{name}`` route, whose GET and POST would otherwise take these paths for job runs.
Bodies are ``shared.wire.store`` shapes."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import CatalogDep, OwnerDep
from hub.api.typed import NO_BODY, TypedBody
from shared.errors import BadRequest
from shared.wire.jobs import JobSaved
from shared.wire.store import ImportReport, ImportRequest, StoreInfo, VersionDetail, VersionList

router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 64 * 1024
IMPORT_BODY = TypedBody(ImportRequest, SMALL_BODY, required=False)


def _version_number(raw: str) -> int:
    """A version from the path. Digits only: ``int`` alone would take ' 2', '+2' or '٢'."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9 or int(raw) < 1:
        raise BadRequest(f"'{raw[:20]}' is not a version: versions are whole numbers from 1 up")
    return int(raw)


@router.get("/store", response_model=StoreInfo)
async def store(_owner: OwnerDep, catalog: CatalogDep) -> object:
    return await catalog.store_info()


@router.post("/store/import-files", response_model=ImportReport, openapi_extra=IMPORT_BODY.doc)
async def import_files(request: Request, caller: OwnerDep, catalog: CatalogDep) -> object:
    body = await IMPORT_BODY.read(request)
    return await catalog.import_files(body.overwrite, caller.name)


@router.get("/{name}/versions", response_model=VersionList)
async def versions(name: str, _owner: OwnerDep, catalog: CatalogDep) -> object:
    return {"versions": await catalog.versions(name)}


@router.get("/{name}/versions/{n}", response_model=VersionDetail)
async def version(name: str, n: str, _owner: OwnerDep, catalog: CatalogDep) -> object:
    return await catalog.version(name, _version_number(n))


@router.post("/{name}/versions/{n}/restore", response_model=JobSaved, openapi_extra=NO_BODY)
async def restore(name: str, n: str, caller: OwnerDep, catalog: CatalogDep) -> object:
    job = await catalog.restore(name, _version_number(n), caller.name)
    return {"success": True, "job": job}
