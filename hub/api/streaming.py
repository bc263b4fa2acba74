"""Running a job for one HTTP request, with the client's disconnect in mind: a
client that goes away while its run is queued leaves the queue, and one that
goes away mid-run stops the run (its worker is killed) unless the run ends by
itself within a short grace."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from hub.api.answers import (
    NDJSON,
    error_response,
    plain_response,
    stream_status,
    stream_tail,
    wants_pretty,
    wants_stream,
)
from hub.api.inbound import ClientGone, Inbound
from hub.api.page_console import console_drawer
from hub.auth import Caller
from hub.services.run_outcome import RunResult, background
from hub.services.runs import JobRunner, LoadedJob, RunTicket
from shared.ndjson import LogLine, encode_line

T = TypeVar("T")


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


# Most runs end within a few milliseconds: only a longer wait pays for a watcher.
_WATCH_AFTER_S = 0.05
# A run already on a worker gets this long to end by itself once its client has
# gone: stopping it kills the worker, and a new one costs far more CPU (a process
# start and a warm isolate built) than most runs. A wrk or a browser hanging up on a busy hub
# would otherwise set off a burst of worker restarts.
_GRACE_S = 0.25


async def until_disconnect(request: Request, work: Awaitable[T],
                           started: asyncio.Event | None = None) -> T:
    """``work``'s result, or ``ClientGone`` once the client disconnects. ``started``
    (set when the run has a worker) grants the run its grace."""
    task = asyncio.ensure_future(work)
    await asyncio.wait({task}, timeout=_WATCH_AFTER_S)
    if task.done():
        return task.result()
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if task.done():
        return task.result()
    await _abandon(task, started is not None and started.is_set())
    raise ClientGone()


async def _abandon(task: asyncio.Future[Any], started: bool) -> None:
    """The client of ``task`` has gone: a started run may end by itself within the
    grace (its outcome goes nowhere), else it is stopped."""
    if started:
        await asyncio.wait({task}, timeout=_GRACE_S)
    if task.done():
        if not task.cancelled():
            task.exception()  # retrieved, so asyncio does not report it
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def answer_run(request: Request, runner: JobRunner, job: LoadedJob, inbound: Inbound,
                     caller: Caller, origin: str = "http", force_stream: bool = False,
                     ticket: RunTicket | None = None) -> Response:
    """The run's answer. ``ticket``: the run's identity from its admission (a new one
    when none); its job id is known before the run starts: a live answer's header
    names it."""
    accept = request.headers.get("accept", "")
    stream = force_stream or wants_stream(inbound.flag("raw"), inbound.flag("enableLogger"),
                                          accept)
    run_ticket = ticket or RunTicket()
    pretty = not stream and wants_pretty(accept)

    def start(on_log: Callable[[LogLine], None] | None = None,
              on_start: Callable[[], None] | None = None) -> Awaitable[RunResult]:
        return runner.run(job, caller=caller, params=inbound.params, request=inbound.request,
                          origin=origin, pretty=pretty, on_log=on_log, on_start=on_start,
                          ticket=run_ticket)

    if stream and inbound.flag("enableLogger"):
        return await _live_answer(request, start, run_ticket.job_id)
    started = asyncio.Event()
    result = await until_disconnect(request, start(on_start=started.set), started)
    if not stream:
        return plain_response(result, console_drawer(request, inbound, caller, result))
    if result.error is not None:
        return error_response(result.error, result.runtime_ms, stream=True,
                              job_id=result.job_id)
    explicit = force_stream or NDJSON in accept.lower()
    return Response(stream_tail(result), 200 if explicit else stream_status(result),
                    {"X-Job-Id": result.job_id}, media_type=NDJSON)


async def _live_answer(request: Request, start: Callable[..., Awaitable[RunResult]],
                       job_id: str) -> Response:
    """NDJSON with console lines as they happen. The status is sent before the
    outcome is known, so it is 200 once the run has a worker; a refusal from the
    queue (SYS-429) still gets its own status."""
    lines: asyncio.Queue[LogLine] = asyncio.Queue()
    started = asyncio.Event()
    task = asyncio.ensure_future(start(lines.put_nowait, started.set))
    waiter = asyncio.ensure_future(started.wait())
    try:
        await until_disconnect(request, asyncio.wait({task, waiter},
                                                     return_when=asyncio.FIRST_COMPLETED))
    except ClientGone:
        task.cancel()
        raise
    finally:
        waiter.cancel()  # when the run ended first (a refusal), nobody waits for the start
    if task.done():
        task.result()  # raises a refusal such as SYS-429

    async def body() -> AsyncIterator[bytes]:
        getter: asyncio.Future[LogLine] | None = None
        try:
            while True:
                getter = asyncio.ensure_future(lines.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    # Lines already queued behind it leave in the same chunk: one
                    # send through the middleware and one write, none held back.
                    chunk = [encode_line(getter.result())]
                    while not lines.empty():
                        chunk.append(encode_line(lines.get_nowait()))
                    yield b"".join(chunk)
                    continue
                getter.cancel()
                while not lines.empty():
                    yield encode_line(lines.get_nowait())
                yield stream_tail(task.result())
                return
        finally:
            if getter is not None:
                getter.cancel()
            if not task.done():  # the client went away: the run ends or is stopped
                background(_abandon(task, started=True))

    return StreamingResponse(body(), media_type=NDJSON, headers={"X-Job-Id": job_id})
