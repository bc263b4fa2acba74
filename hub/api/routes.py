"""The HTTP routes under /api/webjobs. Thin: each one reads the request, calls a
service and shapes the answer."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hub.api.answers import refusal
from hub.api.attach import attached_answer
from hub.api.deps import address_of, caller_of, hub_of, owner_of
from hub.api.history_routes import stats_json
from hub.api.inbound import (
    Inbound,
    parse_json,
    read_body,
    read_inbound,
    read_json_object,
    refuse_lone_surrogates,
)
from hub.api.streaming import answer_run
from hub.auth import Caller
from hub.store.base import JOB_NAME_RE
from hub.store.files import SUFFIX
from shared.errors import (
    BadJobName,
    BadRequest,
    JobDoesNotParse,
    JobFailed,
    WebJobsError,
)
from shared.text import clean_text

PREFIX = "/api/webjobs"
router = APIRouter(prefix=PREFIX)


# How long /health waits for a busy node's worker to come free before saying it has none.
HEALTH_WAIT_S = 0.5


@router.get("/health")
async def health(request: Request) -> dict[str, Any]:
    """``ok`` is whether this node could run a job now: false while no worker can be had
    (every one dead or starting, or every slot taken with runs already queued). It stays
    a 200 either way: the console reads it to show the node's state, and management
    routes still work when runs cannot."""
    hub = hub_of(request)
    ready = await hub.engine.ready(HEALTH_WAIT_S)
    answer: dict[str, Any] = {"ok": ready, "node": hub.settings.node, **hub.engine.metrics()}
    if not ready:
        answer["problem"] = "no worker can be had: every slot is busy or no worker is running"
    return answer


@router.get("/available")
async def available(request: Request) -> dict[str, Any]:
    await owner_of(request)
    hub = hub_of(request)
    jobs = await asyncio.to_thread(hub.catalog.available)
    stats = await hub.history.job_stats([job["name"] for job in jobs])
    schedules = await hub.scheduling.schedules_of()
    running_here = {run.job_name for run in hub.engine.running()}
    for job in jobs:
        job["stats"] = stats_json(stats.get(job["name"]), job["name"] in running_here)
        job["schedules"] = schedules.get(job["name"], [])
        job["scheduled"] = any(s["enabled"] for s in job["schedules"])
    # What the console's editor checks and completes against: the approved require()
    # modules (WEBJOB_MODULES) and the limits a header may ask for (WEBJOB_MAX_*).
    return {"jobs": jobs, "store": hub.catalog.store.kind,
            "modules": list(hub.settings.modules),
            "maxima": hub.settings.maxima.as_job_view()}


@router.get("/running")
async def running(request: Request) -> dict[str, Any]:
    await owner_of(request)
    runs = [{"jobId": r.job_id, "jobName": r.job_name, "source": r.source,
             "runtime": r.runtime_ms, "node": r.node}
            for r in await hub_of(request).runner.in_flight()]
    return {"running": runs}


@router.post("/save")
async def save(request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    data = await read_json_object(request, hub_of(request).settings.max_body_bytes,
                                  exact=("code",))
    name = data.get("name")
    if not isinstance(name, str):
        raise BadJobName("'name' must be the job's name, as a string")
    job = await hub_of(request).catalog.save(name, data.get("code"), by=caller.name,
                                             base_version=_base_version(data))
    return {"success": True, "job": job}


def _base_version(data: dict[str, Any]) -> int | None:
    """``baseVersion``: the version the editor opened (0 for a new job); null or absent
    saves over whatever is there."""
    base = data.get("baseVersion")
    # bool is an int in Python, and a float 3.0 reads as 3 in JSON: neither is a version.
    if base is None or (type(base) is int and 0 <= base < 2**53):
        return base
    raise BadRequest("'baseVersion' must be the version the editor opened (a whole number, "
                     "0 for a new job) or null to save over the job as it is")


@router.post("/check")
async def check(request: Request) -> dict[str, Any]:
    """The save's own checks on ``code`` without saving: ``ok`` (it parses) and
    ``problems`` (line, column, message, severity error|warning, source
    syntax|header|strict)."""
    await owner_of(request)
    hub = hub_of(request)
    data = await read_json_object(request, hub.settings.max_body_bytes, exact=("code",))
    code = data.get("code")
    if not isinstance(code, str):
        raise BadRequest("'code' must be the job's source text")
    return await hub.catalog.problems(code)


async def _form_file(request: Request) -> tuple[str, str, dict[str, Any]]:
    """(file name, its text, the other fields) from a multipart upload."""
    await read_body(request, hub_of(request).settings.max_body_bytes)
    try:
        form = await request.form()
    except Exception:
        raise BadRequest("Send the job as multipart/form-data with a 'file' field") from None
    upload = form.get("file")
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    refuse_lone_surrogates(fields, ("code",))
    fields = {clean_text(k): clean_text(v) for k, v in fields.items()}
    if isinstance(upload, UploadFile):
        raw = await upload.read()
        filename = upload.filename or ""
    elif "code" in fields:
        raw, filename = str(fields["code"]).encode(), ""
    else:
        raise BadRequest("The upload has no 'file' field")
    try:
        return filename, raw.decode("utf-8-sig"), fields
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
    caller = await owner_of(request)
    filename, code, fields = await _form_file(request)
    name = _name_from(filename, str(fields.get("name", "")).strip())
    job = await hub_of(request).catalog.save(name, code, by=caller.name)
    return {"success": True, "job": job}


@router.post("/execute")
async def execute(request: Request) -> Response:
    caller = await owner_of(request)
    try:
        return await _execute(request, caller)
    except WebJobsError as exc:  # this route always streams, refusals included
        return refusal(exc, request.method, request.url.path, stream=True)


async def _execute(request: Request, caller: Caller) -> Response:
    hub = hub_of(request)
    filename, code, fields = await _form_file(request)
    params = parse_json(fields.get("params") or "{}", "'params'")
    try:
        await hub.catalog.check(code)  # a body that does not parse never runs
    except JobDoesNotParse as exc:  # for a run, that is the job failing: JOB-001
        raise JobFailed(exc.message, line=exc.line, column=exc.column) from None
    name = _name_from(filename, str(fields.get("name", "")).strip())
    job = hub.runner.describe(name if JOB_NAME_RE.match(name) else "adhoc", code)
    origin = "editor" if fields.get("source") == "editor" else "adhoc"
    flags = {"enableLogger": str(fields.get("enableLogger", ""))}
    view: dict[str, Any] = {"method": "POST", "url": str(request.url), "path": request.url.path,
                            "query": {}, "headers": {}, "ip": address_of(request)}
    inbound = Inbound(params, view, flags)
    return await answer_run(request, hub.runner, job, inbound, caller, origin, force_stream=True)


@router.get("/deleted")
async def deleted(request: Request) -> dict[str, Any]:
    """Deleted jobs whose versions are kept; ``deletedAt`` is epoch seconds (null for
    a job deleted before deletions were recorded)."""
    await owner_of(request)
    return {"jobs": await asyncio.to_thread(hub_of(request).catalog.deleted)}


@router.post("/deleted/{name}/restore")
async def restore_deleted(name: str, request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    job = await hub_of(request).catalog.restore_deleted(name, caller.name)
    return {"success": True, "job": job}


@router.get("/{name}/code")
async def code(name: str, request: Request) -> Response:
    await owner_of(request)
    stored = await asyncio.to_thread(hub_of(request).catalog.current, name)
    # The version this code is, for the editor's ``baseVersion`` when it saves.
    headers = {"X-Job-Version": str(stored.version)} if stored.version else {}
    return Response(stored.code, media_type="text/javascript", headers=headers)


@router.delete("/{name}")
async def delete(name: str, request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    await hub_of(request).catalog.delete(name, caller.name)
    return {"success": True}


@router.post("/{job_id}/stop")
async def stop(job_id: str, request: Request) -> Response:
    await owner_of(request)
    done = await hub_of(request).runner.stop(job_id)
    if done.here:
        return JSONResponse({"success": True, "stopped": True, "node": done.node})
    # Another node runs it: the stop is passed on there, and the run ends shortly.
    return JSONResponse({"success": True, "stopped": False, "passedOn": True,
                         "node": done.node})


# One operation a method, each with an id of its own (one route for both gave the spec a
# duplicate operation id). Runs take hub/api/run_route.py's short cut; these describe them.
@router.post("/{name}", operation_id="run_job_post")
@router.get("/{name}", operation_id="run_job")
async def run_job(name: str, request: Request) -> Response:
    hub = hub_of(request)
    job = await hub.runner.load(name)
    caller = await caller_of(request, page_job=job.header.mode == "page")
    hub.runner.authorise(job, caller)
    address = address_of(request)
    if caller.kind == "anonymous":  # only public jobs get this far without credentials
        await hub.public_limiter.admit(address)
    inbound = await read_inbound(request, hub.settings.max_body_bytes, address)
    attached = await attached_answer(request, hub, job, inbound, caller)
    if attached is not None:  # a tab the owner's debugger is attached to
        return attached
    return await answer_run(request, hub.runner, job, inbound, caller)
