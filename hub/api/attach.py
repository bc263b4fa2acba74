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
from collections.abc import AsyncIterator

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hub.api.answers import NDJSON, plain_response
from hub.api.deps import DebuggingDep, Hub, OwnerDep, debugging_of
from hub.api.inbound import Inbound
from hub.api.stream_doc import ndjson_answer
from hub.api.typed import TypedBody
from hub.auth import DEBUG_COOKIE, Caller
from hub.services.debugging import IDLE_LIMIT_S, DebugStack, encode_event
from hub.services.runs import LoadedJob
from shared.ndjson import DebugAnswer, DebugExpanded, DebugRequest, LogLine
from shared.wire.debug import DebugAttach, DebugAttached, DebugPaused

router = APIRouter(prefix="/api/webjobs")
COOKIE = DEBUG_COOKIE
TAG = "_debug"
ATTACH_BODY = TypedBody(DebugAttach, 64 * 1024, required=False)
SESSION_LINES = DebugRequest | DebugStack | DebugPaused | DebugExpanded | LogLine | DebugAnswer
SESSION_STREAM = ndjson_answer(SESSION_LINES, "What happens in the attached session, as it "
                                              "happens, until it ends (a blank line now and "
                                              "then while nothing does)")


@router.post("/debug/{name}/attach", response_model=DebugAttached,
             openapi_extra=ATTACH_BODY.doc)
async def attach(name: str, request: Request, caller: OwnerDep,
                 debugging: DebuggingDep) -> object:
    body = await ATTACH_BODY.read(request)
    session = await debugging.attach(caller, name, body.stepFromStart, body.pauseOnException)
    return DebugAttached(session.id, f"/api/webjobs/{session.job_name}?{TAG}={session.id}")


@router.get("/debug-session/{session_id}/events", **SESSION_STREAM)
async def events(session_id: str, caller: OwnerDep, debugging: DebuggingDep) -> Response:
    session = debugging.session(session_id, caller)

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
    debugging = debugging_of(hub)
    session = debugging.tagged(tag[0], caller, job.name)
    if session is None:
        return None
    result = await debugging.run_attached(session, job, caller, inbound.params,
                                          inbound.request, (request.method, request.url.path))
    if result is None:
        return None
    answer = plain_response(result)
    debugging.answered(session, answer.status_code, result)
    if tag[1]:  # the tab keeps its tag for its own posts and redirects
        answer.set_cookie(COOKIE, session.id, max_age=int(IDLE_LIMIT_S), path="/api/webjobs",
                          httponly=True, samesite="lax")
    return answer
