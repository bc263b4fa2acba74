"""The step debugger over HTTP (owner only): a debug run streams its events as
NDJSON, and the owner drives it with commands on its session."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hub.api.answers import NDJSON, masked_answer, refusal, stream_tail
from hub.api.deps import DebuggingDep, OwnerDep, SettingsDep, address_of
from hub.api.stream_doc import ndjson_answer
from hub.api.typed import TypedBody
from hub.services.debugging import (
    Debugging,
    DebugPlan,
    DebugRun,
    DebugStack,
    breakpoint_lines,
    encode_event,
    owner_key,
)
from shared.errors import BadRequest, WebJobsError
from shared.ndjson import (
    DebugExpanded,
    DebugStart,
    Failure,
    LogLine,
    MetaData,
    encode_line,
)
from shared.wire.debug import (
    DebugCommand,
    DebugCommandAnswer,
    DebugPaused,
    DebugReplayOptions,
    DebugRunOptions,
)

log = logging.getLogger("webhub.debug")
router = APIRouter(prefix="/api/webjobs")
SMALL_BODY = 64 * 1024
# A debug run's body may carry unsaved code: it is read up to the hub's own body limit.
RUN_BODY = TypedBody(DebugRunOptions, SMALL_BODY, required=False)
REPLAY_BODY = TypedBody(DebugReplayOptions, SMALL_BODY, required=False)
COMMAND_BODY = TypedBody(DebugCommand, SMALL_BODY)
RUN_LINES = (DebugStart | LogLine | DebugStack | DebugPaused | DebugExpanded | MetaData
             | Failure)
RUN_STREAM = ndjson_answer(RUN_LINES, "A debug line (the session), then stack, pause and log "
                                      "lines as they happen, then the run's outcome: a "
                                      "metadata line and the result, or a failure line")


def _method(asked: str) -> str:
    method = asked.upper()
    if method not in ("GET", "POST"):
        raise BadRequest("'method' must be GET or POST")
    return method


@router.post("/debug/{name}", **RUN_STREAM, openapi_extra=RUN_BODY.doc)
async def debug_run(name: str, request: Request, caller: OwnerDep, settings: SettingsDep,
                    debugging: DebuggingDep) -> Response:
    try:
        body = await RUN_BODY.read(request, settings.max_body_bytes)
        job = await debugging.job(name, body.code)
        method, lines = _method(body.method), breakpoint_lines(body.breakpoints)
    except WebJobsError as exc:  # this route always streams, refusals included
        return refusal(exc, request.method, request.url.path, stream=True)
    view = {"method": method, "url": str(request.url), "path": request.url.path, "query": {},
            "headers": {}, "ip": address_of(request)}
    plan = DebugPlan(owner_key(caller), body.params, body.stepFromStart, frozenset(lines),
                     view, pause_on_exception=body.pauseOnException)
    return _stream(debugging, debugging.start(caller, job, plan))


def _stream(debugging: Debugging, run: DebugRun) -> Response:
    return StreamingResponse(_events(debugging, run), media_type=NDJSON,
                             headers={"X-Job-Id": run.start.jobId,
                                      "X-Debug-Session": run.session.id})


@router.post("/debug/replay/{run_id}", **RUN_STREAM, openapi_extra=REPLAY_BODY.doc)
async def debug_replay(run_id: str, request: Request, owner: OwnerDep,
                       debugging: DebuggingDep) -> Response:
    """Re-run a recorded run under the debugger: the version that ran, its parameters,
    method and caller, and its recorded db.exec/http answers fed back in order."""
    try:
        body = await REPLAY_BODY.read(request)
        lines = breakpoint_lines(body.breakpoints)
        replay = await debugging.replay(run_id)
    except WebJobsError as exc:
        return refusal(exc, request.method, request.url.path, stream=True)
    view = {"method": replay.method, "url": str(request.url), "path": request.url.path,
            "query": {}, "headers": {}, "ip": address_of(request),
            "replayOf": replay.recorded_id}
    plan = DebugPlan(owner_key(owner), replay.params, body.stepFromStart, frozenset(lines),
                     view, replay.bridge, body.pauseOnException)
    log.info("[WebJob:%s] run %s replayed under the debugger by %s", replay.job.job.name,
             replay.recorded_id, owner.name)
    return _stream(debugging, debugging.start(replay.caller, replay.job, plan))


async def _events(debugging: Debugging, started: DebugRun) -> AsyncIterator[bytes]:
    """The session's events as they happen, then the run's outcome. A client that
    goes away stops the run."""
    session, run = started.session, started.run
    getter: asyncio.Future[Any] | None = None
    try:
        yield encode_line(started.start)
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
            debugging.stop(session.job_id, "The debugger went away")
        debugging.close(session)


@router.post("/debug-session/{session_id}/command", response_model=DebugCommandAnswer,
             openapi_extra=COMMAND_BODY.doc)
async def debug_command(session_id: str, request: Request, caller: OwnerDep,
                        debugging: DebuggingDep) -> object:
    debugging.session(session_id, caller)  # an unknown session is refused before its body
    body = await COMMAND_BODY.read(request)
    return await debugging.command(session_id, caller, body)
