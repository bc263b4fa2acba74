"""Live attach: the debugger drives a page job's real browser requests.

``POST /api/webjobs/debug/<name>/attach`` opens a session and gives the URL to open.
The tab is tagged by ``_debug=<session>`` in that URL, then by a cookie scoped to
``/api/webjobs``, so its form posts and redirects stay under the debugger: each
tagged request runs instrumented and parks at pauses while the browser waits.
``GET /api/webjobs/debug-session/<id>/events`` streams what happens (each request
arriving, pauses, console lines, each answer). A request tagged with an unknown,
expired, detached or another owner's session runs normally, as does every request
from anyone else.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hub.api.answers import NDJSON, plain_response
from hub.api.deps import Hub, hub_of, owner_of
from hub.api.inbound import Inbound, read_json_object
from hub.auth import DEBUG_COOKIE, Caller
from hub.engine.instrument import instrument
from hub.services.debugging import IDLE_LIMIT_S, DebugSession, encode_event, owner_key
from hub.services.runs import LoadedJob, new_job_id
from shared.errors import BadRequest
from shared.ndjson import DebugAnswer, DebugRequest

router = APIRouter(prefix="/api/webjobs")
COOKIE = DEBUG_COOKIE
TAG = "_debug"


@router.post("/debug/{name}/attach")
async def attach(name: str, request: Request) -> dict[str, Any]:
    caller = await owner_of(request)
    hub = hub_of(request)
    job = await hub.runner.load(name)
    data = await read_json_object(request, 64 * 1024)
    step = data.get("stepFromStart", True)
    if not isinstance(step, bool):
        raise BadRequest("'stepFromStart' must be true or false")
    on_exception = data.get("pauseOnException", False)
    if not isinstance(on_exception, bool):
        raise BadRequest("'pauseOnException' must be true or false")
    holder: list[DebugSession] = []

    def stop_current(message: str) -> None:  # the request parked now, if any
        hub.engine.stop(holder[0].job_id, message)

    session = hub.debug_sessions.attach(owner_key(caller), job.name, stop_current, step)
    holder.append(session)
    session.pause_on_exception = on_exception
    return {"session": session.id, "url": f"/api/webjobs/{job.name}?{TAG}={session.id}"}


@router.get("/debug-session/{session_id}/events")
async def events(session_id: str, request: Request) -> StreamingResponse:
    caller = await owner_of(request)
    session = hub_of(request).debug_sessions.get(session_id, owner_key(caller))

    async def stream() -> AsyncIterator[bytes]:
        ended = asyncio.ensure_future(session.ended.wait())
        try:
            while not session.ended.is_set():
                getter = asyncio.ensure_future(session.events.get())
                await asyncio.wait({getter, ended}, timeout=15,
                                   return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield encode_event(getter.result())
                    continue
                getter.cancel()
                yield b"\n"  # a blank line keeps proxies from closing an idle stream
        finally:
            ended.cancel()

    return StreamingResponse(stream(), media_type=NDJSON)


def debug_tag(request: Request) -> tuple[str, bool] | None:
    """The session a request is tagged with, and whether the tag came in the URL."""
    given = request.query_params.get(TAG)
    if given:
        return given, True
    kept = request.cookies.get(COOKIE)
    return (kept, False) if kept else None


async def attached_answer(request: Request, hub: Hub, job: LoadedJob, inbound: Inbound,
                          caller: Caller) -> Response | None:
    """Run a tagged request under its attached debugger; None to run it normally."""
    tag = debug_tag(request)
    if tag is None:
        return None
    owner = owner_key(caller) if caller.is_owner else None
    session = hub.debug_sessions.tagged(tag[0], owner, job.name)
    if session is None:
        return None
    done = await asyncio.to_thread(instrument, job.code)
    if not done.ok:
        return None  # a job that does not parse fails the same way without the debugger
    session.job_id = new_job_id()
    # Each request parks before line one (or runs to a breakpoint), as a new run.
    session.step_mode, session.step_depth = session.step_from_start, None
    session.started = False
    session.events.put_nowait(DebugRequest(session.job_id, request.method, request.url.path))
    result = await hub.runner.run(
        dataclasses.replace(job, code=done.code), caller=caller, params=inbound.params,
        request=inbound.request, origin="debug", on_log=session.log, job_id=session.job_id,
        debugger=session)
    answer = plain_response(result)
    session.events.put_nowait(DebugAnswer(
        session.job_id, answer.status_code, result.error is None,
        result.error.code if result.error else None))
    if tag[1]:  # the tab keeps its tag for its own posts and redirects
        answer.set_cookie(COOKIE, session.id, max_age=int(IDLE_LIMIT_S), path="/api/webjobs",
                          httponly=True, samesite="lax")
    return answer
