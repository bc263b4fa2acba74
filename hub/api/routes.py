"""The HTTP routes under /api/webjobs. Thin: each one reads the request, calls a
service and shapes the answer."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import APIRouter
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hub.api.deps import caller_of, hub_of, owner_of
from hub.api.inbound import Inbound, read_body, read_inbound
from hub.api.streaming import answer_run
from hub.store.files import SUFFIX
from shared.errors import BadRequest

router = APIRouter(prefix="/api/webjobs")


@router.get("/health")
async def health(request: Request) -> dict[str, Any]:
    hub = hub_of(request)
    return {"ok": True, "node": hub.settings.node, **hub.engine.metrics()}


@router.get("/available")
async def available(request: Request) -> dict[str, Any]:
    owner_of(request)
    hub = hub_of(request)
    return {"jobs": hub.catalog.available(), "store": hub.catalog.store.kind}


@router.get("/running")
async def running(request: Request) -> dict[str, Any]:
    owner_of(request)
    now = time.monotonic()
    runs = [{"jobId": r.job_id, "jobName": r.job_name, "source": r.origin,
             "runtime": int((now - r.started) * 1000)} for r in hub_of(request).engine.running()]
    return {"running": runs}


async def _json_object(request: Request) -> dict[str, Any]:
    body = await read_body(request, hub_of(request).settings.max_body_bytes)
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        raise BadRequest("The request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object")
    return data


@router.post("/save")
async def save(request: Request) -> dict[str, Any]:
    owner_of(request)
    data = await _json_object(request)
    job = await hub_of(request).catalog.save(str(data.get("name", "")), data.get("code"))
    return {"success": True, "job": job}


async def _form_file(request: Request) -> tuple[str, str, dict[str, Any]]:
    """(file name, its text, the other fields) from a multipart upload."""
    await read_body(request, hub_of(request).settings.max_body_bytes)
    try:
        form = await request.form()
    except Exception:
        raise BadRequest("Send the job as multipart/form-data with a 'file' field") from None
    upload = form.get("file")
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    if isinstance(upload, UploadFile):
        raw = await upload.read()
        filename = upload.filename or ""
    elif "code" in fields:
        raw, filename = str(fields["code"]).encode(), ""
    else:
        raise BadRequest("The upload has no 'file' field")
    try:
        return filename, raw.decode("utf-8"), fields
    except UnicodeDecodeError:
        raise BadRequest("The job file is not UTF-8 text") from None


def _name_from(filename: str, given: str) -> str:
    if given:
        return given
    base = filename.rsplit("/", 1)[-1]
    for suffix in (SUFFIX, ".js"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


@router.post("/upload")
async def upload(request: Request) -> dict[str, Any]:
    owner_of(request)
    filename, code, fields = await _form_file(request)
    name = _name_from(filename, str(fields.get("name", "")).strip())
    job = await hub_of(request).catalog.save(name, code)
    return {"success": True, "job": job}


@router.post("/execute")
async def execute(request: Request) -> Response:
    caller = owner_of(request)
    hub = hub_of(request)
    filename, code, fields = await _form_file(request)
    try:
        params = json.loads(fields.get("params") or "{}")
    except ValueError:
        raise BadRequest("'params' must be JSON") from None
    name = _name_from(filename, str(fields.get("name", "")).strip()) or "adhoc"
    job = hub.runner.describe(name if name.replace("-", "").replace("_", "").isalnum()
                              else "adhoc", code)
    origin = "editor" if fields.get("source") == "editor" else "adhoc"
    flags = {"enableLogger": str(fields.get("enableLogger", ""))}
    view: dict[str, Any] = {"method": "POST", "url": str(request.url), "path": request.url.path,
                            "query": {}, "headers": {},
                            "ip": request.client.host if request.client else None}
    inbound = Inbound(params, view, flags)
    return await answer_run(request, hub.runner, job, inbound, caller, origin, force_stream=True)


@router.get("/{name}/code")
async def code(name: str, request: Request) -> Response:
    owner_of(request)
    return Response(hub_of(request).catalog.code(name), media_type="text/javascript")


@router.delete("/{name}")
async def delete(name: str, request: Request) -> dict[str, Any]:
    owner_of(request)
    hub_of(request).catalog.delete(name)
    return {"success": True}


@router.post("/{job_id}/stop")
async def stop(job_id: str, request: Request) -> Response:
    owner_of(request)
    stopped = hub_of(request).engine.stop(job_id)
    return JSONResponse({"success": stopped, "stopped": stopped}, 200 if stopped else 404)


@router.api_route("/{name}", methods=["GET", "POST"])
async def run_job(name: str, request: Request) -> Response:
    hub = hub_of(request)
    job = hub.runner.load(name)
    caller = caller_of(request)
    hub.runner.authorise(job, caller)
    inbound = await read_inbound(request, hub.settings.max_body_bytes)
    return await answer_run(request, hub.runner, job, inbound, caller)
