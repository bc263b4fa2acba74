"""The step debugger over HTTP (owner only): a debug run streams its events as
NDJSON, and the owner drives it with commands on its session."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hub.api.answers import NDJSON, masked_answer, refusal, stream_tail
from hub.api.deps import Hub, address_of, hub_of, owner_of
from hub.api.inbound import read_json_object
from hub.auth import Caller
from hub.engine.engine import BridgeHost
from hub.engine.instrument import Instrumented, instrument
from hub.history.record import RunRecord
from hub.services.debugging import DebugSession, encode_event, owner_key
from hub.services.outside import ReplayBridge
from hub.services.runs import LoadedJob, new_job_id
from hub.store.base import JOB_NAME_RE
from shared.errors import BadRequest, JobFailed, NotFound, WebJobsError
from shared.ndjson import DebugStart, encode_line

log = logging.getLogger("webhub.debug")
router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 64 * 1024


async def _job_to_debug(hub: Hub, name: str, code: Any) -> LoadedJob:
    """The saved job, or the unsaved ``code`` given (it must parse)."""
    if code is None:
        return await hub.runner.load(name)
    if not isinstance(code, str) or not code.strip():
        raise BadRequest("'code' must be the job's source text")
    return hub.runner.describe(name if JOB_NAME_RE.match(name) else "debug", code)


def _pause_on_exception(data: dict[str, Any]) -> bool:
    """Whether an exception leaving the job pauses where it was thrown (off unless asked)."""
    wanted = data.get("pauseOnException", False)
    if not isinstance(wanted, bool):
        raise BadRequest("'pauseOnException' must be true or false")
    return wanted


def _options(data: dict[str, Any]) -> tuple[dict[str, Any], bool, set[int], str]:
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise BadRequest("'params' must be a JSON object")
    step = data.get("stepFromStart", True)
    if not isinstance(step, bool):
        raise BadRequest("'stepFromStart' must be true or false")
    lines = data.get("breakpoints", [])
    if not isinstance(lines, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in lines):
        raise BadRequest("'breakpoints' must be a list of line numbers")
    method = str(data.get("method", "POST")).upper()
    if method not in ("GET", "POST"):
        raise BadRequest("'method' must be GET or POST")
    return params, step, set(lines), method


@router.post("/debug/{name}")
async def debug_run(name: str, request: Request) -> Response:
    caller = await owner_of(request)
    hub = hub_of(request)
    try:
        data = await read_json_object(request, hub.settings.max_body_bytes)
        job = await _job_to_debug(hub, name, data.get("code"))
        params, step, lines, method = _options(data)
        on_exception = _pause_on_exception(data)
        done = await asyncio.to_thread(instrument, job.code)
        if not done.ok:
            raise JobFailed(f"{done.error} (line {done.line})", line=done.line,
                            column=done.column)
    except WebJobsError as exc:  # this route always streams, refusals included
        return refusal(exc, request.method, request.url.path, stream=True)
    view = {"method": method, "url": str(request.url), "path": request.url.path, "query": {},
            "headers": {}, "ip": address_of(request)}
    plan = _Plan(owner_key(caller), params, step, lines, view,
                 pause_on_exception=on_exception)
    return _start(hub, caller, job, done, plan)


@dataclasses.dataclass(frozen=True)
class _Plan:
    driver: str  # owner_key() of the owner who asked: the session is theirs
    params: Any
    step: bool
    lines: set[int]
    view: dict[str, Any]
    bridge: BridgeHost | None = None
    pause_on_exception: bool = False


def _start(hub: Hub, caller: Caller, job: LoadedJob, done: Instrumented,
           plan: _Plan) -> Response:
    """Start the debug run as ``caller`` and answer with its event stream; the
    session is the plan's driver's (for a replay, not the recorded caller's)."""
    job_id = new_job_id()
    session = hub.debug_sessions.open(plan.driver, job.name,
                                      lambda message: _stop(hub, job_id, message), plan.step,
                                      plan.lines)
    session.job_id, session.pause_on_exception = job_id, plan.pause_on_exception
    run = asyncio.ensure_future(hub.runner.run(
        dataclasses.replace(job, code=done.code), caller=caller, params=plan.params,
        request=plan.view, origin="debug", on_log=session.log, job_id=job_id,
        debugger=session, bridge=plan.bridge))
    start = DebugStart(session.id, job_id, job.code, list(done.pausable))
    return StreamingResponse(_events(hub, session, run, start), media_type=NDJSON,
                             headers={"X-Job-Id": job_id, "X-Debug-Session": session.id})


@router.post("/debug/replay/{run_id}")
async def debug_replay(run_id: str, request: Request) -> Response:
    """Re-run a recorded run under the debugger: the version that ran, its parameters,
    method and caller, and its recorded db.exec/http answers fed back in order."""
    owner = await owner_of(request)
    hub = hub_of(request)
    try:
        data = await read_json_object(request, SMALL_BODY)
        _, step, lines, _ = _options({k: v for k, v in data.items() if k != "params"})
        pause_on_exception = _pause_on_exception(data)
        record = await hub.history.get(run_id) if len(run_id) <= 100 else None
        if record is None:
            raise NotFound(f"No run '{run_id[:100]}' in history")
        job = await _recorded_job(hub, record)
        done = await asyncio.to_thread(instrument, job.code)
        if not done.ok:
            raise JobFailed(f"{done.error} (line {done.line})", line=done.line,
                            column=done.column)
    except WebJobsError as exc:
        return refusal(exc, request.method, request.url.path, stream=True)
    caller = Caller(record.caller.kind, record.caller.id, record.caller.name,
                    record.caller.user_class)
    view = {"method": record.method or "POST", "url": str(request.url),
            "path": request.url.path, "query": {}, "headers": {}, "ip": address_of(request),
            "replayOf": record.job_id}
    plan = _Plan(owner_key(owner), record.params if record.params is not None else {}, step,
                 lines, view, ReplayBridge(list(record.calls)), pause_on_exception)
    log.info("[WebJob:%s] run %s replayed under the debugger by %s", record.job_name,
             record.job_id, owner.name)
    return _start(hub, caller, job, done, plan)


async def _recorded_job(hub: Hub, record: RunRecord) -> LoadedJob:
    """The job as it was when the run ran: its recorded version, else today's code."""
    if record.job_version:
        stored = await asyncio.to_thread(hub.catalog.store.get_version, record.job_name,
                                         record.job_version)
        if stored is not None:
            return hub.runner.describe(record.job_name, stored.code, record.job_version)
    return await hub.runner.load(record.job_name)


def _stop(hub: Hub, job_id: str, message: str) -> None:
    hub.engine.stop(job_id, message)


async def _events(hub: Hub, session: DebugSession, run: asyncio.Future[Any],
                  start: DebugStart) -> AsyncIterator[bytes]:
    """The session's events as they happen, then the run's outcome. A client that
    goes away stops the run."""
    getter: asyncio.Future[Any] | None = None
    try:
        yield encode_line(start)
        while True:
            getter = asyncio.ensure_future(session.events.get())
            await asyncio.wait({getter, run}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield encode_event(getter.result())
                continue
            getter.cancel()
            while not session.events.empty():
                yield encode_event(session.events.get_nowait())
            yield stream_tail(masked_answer(run.result()))
            return
    finally:
        if getter is not None:
            getter.cancel()
        if not run.done():
            _stop(hub, session.job_id, "The debugger went away")
        hub.debug_sessions.close(session.id)


async def _caller_session(request: Request, session_id: str) -> tuple[Caller, DebugSession]:
    caller = await owner_of(request)
    return caller, hub_of(request).debug_sessions.get(session_id, owner_key(caller))


@router.post("/debug-session/{session_id}/command")
async def debug_command(session_id: str, request: Request) -> dict[str, Any]:
    _, session = await _caller_session(request, session_id)
    data = await read_json_object(request, SMALL_BODY)
    command = data.get("command")
    if not isinstance(command, str):
        raise BadRequest("'command' must be one of step, into, over, out, continue, stop, "
                         "config, detach, expand")
    return await session.command(command, data)
