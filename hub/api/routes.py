"""The HTTP routes under /api/webjobs. Thin: each one reads the request, calls a
service and shapes the answer. Bodies are ``shared.wire.jobs`` shapes; the job run
route ``/{name}`` is declared last, so every literal path wins over it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response

from hub.api.answers import NDJSON, refusal
from hub.api.attach import attached_answer
from hub.api.deps import (
    CatalogDep,
    HistoryDep,
    NodeHealthDep,
    OwnerDep,
    RunnerDep,
    SchedulingDep,
    SettingsDep,
    address_of,
    caller_of,
    hub_of,
)
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
from hub.api.typed import NO_BODY, TypedBody
from hub.auth import Caller
from hub.services.catalog import Catalog, job_name_from_file
from hub.services.runs import JobRunner, RunTicket
from shared.errors import BadJobName, BadRequest, JobDoesNotParse, JobFailed, WebJobsError
from shared.names import JOB_NAME_RE
from shared.text import clean_text
from shared.wire.health import Health
from shared.wire.jobs import (
    CheckAnswer,
    CheckRequest,
    DeletedJobs,
    JobDeletedAnswer,
    JobList,
    JobSaved,
    PassedOn,
    RunningList,
    SaveRequest,
    StoppedHere,
)

PREFIX = "/api/webjobs"
router = APIRouter(prefix=PREFIX)

# How long /health waits for a busy node's worker to come free before saying it has none.
HEALTH_WAIT_S = 0.5
# The size cap of these bodies is WEBJOB_MAX_BODY_BYTES, given at each read.
SAVE_BODY = TypedBody(SaveRequest, 0, exact=("code",))
CHECK_BODY = TypedBody(CheckRequest, 0, exact=("code",))


def _form(fields: dict[str, Any]) -> dict[str, Any]:
    """A multipart/form-data request body's documentation."""
    schema = {"type": "object", "properties": fields}
    return {"requestBody": {"required": True,
                            "content": {"multipart/form-data": {"schema": schema}}}}


_TEXT = {"type": "string"}
_FILE = {"type": "string", "format": "binary", "description": "the job's source (UTF-8)"}
UPLOAD_DOC = _form({"file": _FILE, "name": {**_TEXT, "description": "default: the file's"},
                    "code": {**_TEXT, "description": "the source, when no file is sent"}})
EXECUTE_DOC = _form({
    "file": _FILE, "code": _TEXT, "name": _TEXT,
    "params": {**_TEXT, "description": "the run's parameters, a JSON object as text"},
    "enableLogger": {**_TEXT, "description": "1: console lines as they happen"},
    "source": {"type": "string", "enum": ["editor", "adhoc"]}})
# A run's stream: log lines, then a metadata line and the payload, or one failure line
# (shared.ndjson).
STREAM_DOC: dict[int | str, dict[str, Any]] = {200: {"content": {NDJSON: {"schema": {
    "type": "string", "description": "NDJSON lines as shared.ndjson describes them"}}}}}
CODE_DOC: dict[int | str, dict[str, Any]] = {200: {
    "content": {"text/javascript": {"schema": {"type": "string"}}},
    "headers": {"X-Job-Version": {"schema": {"type": "integer"},
                                  "description": "the version this code is"}}}}


@router.get("/health", response_model=Health, response_model_exclude_none=True)
async def health(node: NodeHealthDep) -> object:
    """``ok`` is whether this node could run a job now. It stays a 200 either way: the
    console reads it to show the node's state, and management routes still work when
    runs cannot."""
    return await node.health(HEALTH_WAIT_S)


@router.get("/available", response_model=JobList)
async def available(_owner: OwnerDep, catalog: CatalogDep, history: HistoryDep,
                    scheduling: SchedulingDep, settings: SettingsDep,
                    node: NodeHealthDep) -> object:
    jobs = await catalog.available()
    stats = await history.job_stats([job["name"] for job in jobs])
    schedules = await scheduling.schedules_of()
    running_here = node.running_here()
    for job in jobs:
        job["stats"] = stats_json(stats.get(job["name"]), job["name"] in running_here)
        job["schedules"] = schedules.get(job["name"], [])
        job["scheduled"] = any(s["enabled"] for s in job["schedules"])
    # What the console's editor checks and completes against: the approved require()
    # modules (WEBJOB_MODULES) and the limits a header may ask for (WEBJOB_MAX_*).
    return {"jobs": jobs, "store": catalog.store_kind, "modules": list(settings.modules),
            "maxima": settings.maxima.as_job_view()}


@router.get("/running", response_model=RunningList)
async def running(_owner: OwnerDep, runner: RunnerDep) -> object:
    runs = [{"jobId": r.job_id, "jobName": r.job_name, "source": r.source,
             "runtime": r.runtime_ms, "node": r.node} for r in await runner.in_flight()]
    return {"running": runs}


@router.post("/save", response_model=JobSaved, openapi_extra=SAVE_BODY.doc)
async def save(request: Request, caller: OwnerDep, catalog: CatalogDep,
               settings: SettingsDep) -> object:
    data = await read_json_object(request, settings.max_body_bytes, exact=SAVE_BODY.exact)
    if not isinstance(data.get("name"), str):  # a name problem is the name's code, HUB-007
        raise BadJobName("'name' must be the job's name, as a string")
    body = SAVE_BODY.check(data)
    job = await catalog.save(body.name, body.code, by=caller.name,
                             base_version=_base_version(body.baseVersion))
    return {"success": True, "job": job}


def _base_version(base: int | None) -> int | None:
    """``baseVersion``: the version the editor opened (0 for a new job); null or absent
    saves over whatever is there."""
    if base is None or 0 <= base < 2**53:
        return base
    raise BadRequest("'baseVersion' must be the version the editor opened (a whole number, "
                     "0 for a new job) or null to save over the job as it is")


@router.post("/check", response_model=CheckAnswer, openapi_extra=CHECK_BODY.doc)
async def check(request: Request, _owner: OwnerDep, catalog: CatalogDep,
                settings: SettingsDep) -> object:
    """The save's own checks on ``code`` without saving: ``ok`` (it parses) and
    ``problems`` (line, column, message, severity error|warning, source
    syntax|header|strict)."""
    body = await CHECK_BODY.read(request, settings.max_body_bytes)
    return await catalog.problems(body.code)


async def _form_file(request: Request, limit: int) -> tuple[str, str, dict[str, Any]]:
    """(file name, its text, the other fields) from a multipart upload."""
    await read_body(request, limit)
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


@router.post("/upload", response_model=JobSaved, openapi_extra=UPLOAD_DOC)
async def upload(request: Request, caller: OwnerDep, catalog: CatalogDep,
                 settings: SettingsDep) -> object:
    filename, code, fields = await _form_file(request, settings.max_body_bytes)
    name = job_name_from_file(filename, str(fields.get("name", "")).strip())
    job = await catalog.save(name, code, by=caller.name)
    return {"success": True, "job": job}


@router.post("/execute", response_class=Response, responses=STREAM_DOC,
             openapi_extra=EXECUTE_DOC)
async def execute(request: Request, caller: OwnerDep, catalog: CatalogDep,
                  runner: RunnerDep, settings: SettingsDep) -> Response:
    try:
        return await _execute(request, caller, catalog, runner, settings.max_body_bytes)
    except WebJobsError as exc:  # this route always streams, refusals included
        return refusal(exc, request.method, request.url.path, stream=True)


async def _execute(request: Request, caller: Caller, catalog: Catalog, runner: JobRunner,
                   limit: int) -> Response:
    filename, code, fields = await _form_file(request, limit)
    params = parse_json(fields.get("params") or "{}", "'params'")
    try:
        await catalog.check(code)  # a body that does not parse never runs
    except JobDoesNotParse as exc:  # for a run, that is the job failing: JOB-001
        raise JobFailed(exc.message, line=exc.line, column=exc.column) from None
    name = job_name_from_file(filename, str(fields.get("name", "")).strip())
    version = await catalog.version_with(name, code)
    job = runner.describe(name if JOB_NAME_RE.match(name) else "adhoc", code, version)
    origin = "editor" if fields.get("source") == "editor" else "adhoc"
    flags = {"enableLogger": str(fields.get("enableLogger", ""))}
    view: dict[str, Any] = {"method": "POST", "url": str(request.url), "path": request.url.path,
                            "query": {}, "headers": {}, "ip": address_of(request)}
    inbound = Inbound(params, view, flags)
    return await answer_run(request, runner, job, inbound, caller, origin, force_stream=True)


@router.get("/deleted", response_model=DeletedJobs)
async def deleted(_owner: OwnerDep, catalog: CatalogDep) -> object:
    """Deleted jobs whose versions are kept; ``deletedAt`` is epoch seconds (null for
    a job deleted before deletions were recorded)."""
    return {"jobs": await catalog.deleted()}


@router.post("/deleted/{name}/restore", response_model=JobSaved, openapi_extra=NO_BODY)
async def restore_deleted(name: str, caller: OwnerDep, catalog: CatalogDep) -> object:
    job = await catalog.restore_deleted(name, caller.name)
    return {"success": True, "job": job}


@router.get("/{name}/code", response_class=Response, responses=CODE_DOC)
async def code(name: str, _owner: OwnerDep, catalog: CatalogDep) -> Response:
    stored = await catalog.current(name)
    # The version this code is, for the editor's ``baseVersion`` when it saves.
    headers = {"X-Job-Version": str(stored.version)} if stored.version else {}
    return Response(stored.code, media_type="text/javascript", headers=headers)


@router.delete("/{name}", response_model=JobDeletedAnswer)
async def delete(name: str, caller: OwnerDep, catalog: CatalogDep) -> object:
    await catalog.delete(name, caller.name)
    return JobDeletedAnswer(success=True)


@router.post("/{job_id}/stop", response_model=StoppedHere | PassedOn, openapi_extra=NO_BODY)
async def stop(job_id: str, _owner: OwnerDep, runner: RunnerDep) -> object:
    done = await runner.stop(job_id)
    if done.here:
        return StoppedHere(success=True, stopped=True, node=done.node)
    # Another node runs it: the stop is passed on there, and the run ends shortly.
    return PassedOn(success=True, stopped=False, passedOn=True, node=done.node)


async def run_job(name: str, request: Request) -> Response:
    """Run the job ``name`` for this request. Plain (the request only): RunFirst
    (hub.api.run_route) calls it without FastAPI's parameter machinery."""
    hub = hub_of(request)
    job = await hub.runner.load(name)
    caller = await caller_of(request, page_job=job.header.mode == "page")
    hub.runner.authorise(job, caller)
    address = address_of(request)
    if caller.kind == "anonymous":  # only public jobs get this far without credentials
        ticket = await hub.runner.admit_public(job, caller, address, request.method,
                                               hub.public_limiter)
    else:
        ticket = RunTicket()
    with ticket:  # a ticket no run took releases the row its admission wrote
        inbound = await read_inbound(request, hub.settings.max_body_bytes, address)
        attached = await attached_answer(request, hub, job, inbound, caller)
        if attached is not None:  # a tab the owner's debugger is attached to
            return attached
        return await answer_run(request, hub.runner, job, inbound, caller, ticket=ticket)


# Last: every literal path above, and in the routers included before this one, wins.
# One operation a method, each with an id of its own; what a job answers is its own.
@router.post("/{name}", operation_id="run_job_post", response_class=Response)
@router.get("/{name}", operation_id="run_job", response_class=Response)
async def run_job_route(name: str, request: Request) -> Response:
    return await run_job(name, request)
