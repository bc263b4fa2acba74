"""The debugger's door for the routes: debug runs, replays of recorded runs and live
attach, over the runner, the catalog, history and the engine. Async at its boundary:
what blocks (instrumenting a job, reading a stored version) runs in a thread here.

The sessions themselves (when a run parks, the commands, the sweep of idle ones) are
:mod:`hub.services.debug_sessions`; the names a route needs from there are re-exported
here, so a route imports only this module."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any

from hub.auth import Caller
from hub.engine.engine import BridgeHost, Engine, RunResult
from hub.engine.instrument import instrument
from hub.history.record import RunRecord
from hub.services.catalog import Catalog
from hub.services.debug_sessions import (
    IDLE_LIMIT_S,
    DebugSession,
    DebugSessions,
    DebugStack,
    breakpoint_lines,
    encode_event,
    owner_key,
    session_node,
)
from hub.services.history import History
from hub.services.outside import ReplayBridge
from hub.services.runs import JobRunner, LoadedJob, new_job_id
from hub.store.base import JOB_NAME_RE
from shared.errors import BadRequest, JobFailed, NotFound
from shared.ndjson import DebugAnswer, DebugRequest, DebugStart
from shared.wire.debug import DebugCommand, DebugCommandAnswer

__all__ = ["IDLE_LIMIT_S", "DebugJob", "DebugPlan", "DebugRun", "DebugSession", "DebugSessions",
           "DebugStack", "Debugging", "Replay", "breakpoint_lines", "encode_event",
           "owner_key", "session_node"]


@dataclass(frozen=True)
class DebugJob:
    """A job ready for a debug run: as loaded, with its instrumented code and the
    lines a pause can stop on."""

    job: LoadedJob
    code: str
    pausable: tuple[int, ...]


@dataclass(frozen=True)
class DebugPlan:
    """How a debug run starts: whose session it is (:func:`owner_key` of the owner who
    asked), the run's parameters and request view, how it steps; a replay's bridge
    answers its calls from the recording."""

    driver: str
    params: Any
    step: bool
    lines: frozenset[int]
    view: dict[str, Any]
    bridge: BridgeHost | None = None
    pause_on_exception: bool = False


@dataclass(frozen=True)
class Replay:
    """A recorded run, to run again: the job as it ran, who ran it, with what."""

    job: DebugJob
    caller: Caller
    params: Any
    method: str
    recorded_id: str  # the recorded run's job id
    bridge: ReplayBridge


@dataclass(frozen=True)
class DebugRun:
    """A debug run under way: its session, the run itself and the stream's first line."""

    session: DebugSession
    run: asyncio.Future[RunResult]
    start: DebugStart


class Debugging:
    """What the debugger's routes do, over this hub's parts. Holds no state of its own
    (the sessions are ``sessions``), so one is cheap to make per request."""

    def __init__(self, runner: JobRunner, catalog: Catalog, history: History, engine: Engine,
                 sessions: DebugSessions) -> None:
        self.runner, self.catalog, self.history = runner, catalog, history
        self.engine, self.sessions = engine, sessions

    async def job(self, name: str, code: str | None) -> DebugJob:
        """The saved job, or the unsaved ``code`` given, instrumented (it must parse)."""
        if code is None:
            loaded = await self.runner.load(name)
        elif not code.strip():
            raise BadRequest("'code' must be the job's source text")
        else:
            loaded = self.runner.describe(name if JOB_NAME_RE.match(name) else "debug", code)
        return await self._instrumented(loaded)

    async def replay(self, run_id: str) -> Replay:
        """The recorded run ``run_id``, ready to run again under the debugger."""
        record = await self.history.get(run_id) if len(run_id) <= 100 else None
        if record is None:
            raise NotFound(f"No run '{run_id[:100]}' in history")
        job = await self._instrumented(await self._recorded_job(record))
        caller = Caller(record.caller.kind, record.caller.id, record.caller.name,
                        record.caller.user_class)
        return Replay(job, caller, record.params if record.params is not None else {},
                      record.method or "POST", record.job_id, ReplayBridge(list(record.calls)))

    def start(self, caller: Caller, job: DebugJob, plan: DebugPlan) -> DebugRun:
        """Start the debug run as ``caller``; the session is the plan's driver's (for a
        replay, not the recorded caller's)."""
        job_id = new_job_id()
        session = self.sessions.open(plan.driver, job.job.name,
                                     lambda message: self.stop(job_id, message), plan.step,
                                     set(plan.lines))
        session.job_id, session.pause_on_exception = job_id, plan.pause_on_exception
        run = asyncio.ensure_future(self.runner.run(
            dataclasses.replace(job.job, code=job.code), caller=caller, params=plan.params,
            request=plan.view, origin="debug", on_log=session.log, job_id=job_id,
            debugger=session, bridge=plan.bridge))
        return DebugRun(session, run, DebugStart(session.id, job_id, job.job.code,
                                                 list(job.pausable)))

    def stop(self, job_id: str, message: str) -> None:
        self.engine.stop(job_id, message)

    def close(self, session: DebugSession) -> None:
        """Forget the session: the stream that drove it has ended."""
        self.sessions.close(session.id)

    def session(self, session_id: str, caller: Caller) -> DebugSession:
        """The caller's own session ``session_id`` (NotFound for anyone else's)."""
        return self.sessions.get(session_id, owner_key(caller))

    async def command(self, session_id: str, caller: Caller,
                      given: DebugCommand) -> DebugCommandAnswer:
        return await self.session(session_id, caller).command(given)

    async def attach(self, caller: Caller, name: str, step_from_start: bool,
                     pause_on_exception: bool) -> DebugSession:
        """A live session on page job ``name``: the tab's tagged requests run under it."""
        job = await self.runner.load(name)
        holder: list[DebugSession] = []

        def stop_current(message: str) -> None:  # the request parked now, if any
            self.stop(holder[0].job_id, message)

        session = self.sessions.attach(owner_key(caller), job.name, stop_current,
                                       step_from_start)
        holder.append(session)
        session.pause_on_exception = pause_on_exception
        return session

    def tagged(self, session_id: str, caller: Caller, job_name: str) -> DebugSession | None:
        """The attached session a request is tagged with, if it drives this job for
        this caller; None for anyone else (the request then runs normally)."""
        owner = owner_key(caller) if caller.is_owner else None
        return self.sessions.tagged(session_id, owner, job_name)

    async def run_attached(self, session: DebugSession, job: LoadedJob, caller: Caller,
                           params: Any, request: dict[str, Any],
                           method_path: tuple[str, str]) -> RunResult | None:
        """One tagged request of the tab (its ``method_path`` as the watcher is told),
        run under its session; None when the job does not parse (it then fails the
        same way without the debugger)."""
        done = await asyncio.to_thread(instrument, job.code)
        if not done.ok:
            return None
        session.job_id = new_job_id()
        # Each request parks before line one (or runs to a breakpoint), as a new run.
        session.step_mode, session.step_depth = session.step_from_start, None
        session.started = False
        session.events.put_nowait(DebugRequest(session.job_id, *method_path))
        return await self.runner.run(
            dataclasses.replace(job, code=done.code), caller=caller, params=params,
            request=request, origin="debug", on_log=session.log, job_id=session.job_id,
            debugger=session)

    @staticmethod
    def answered(session: DebugSession, status: int, result: RunResult) -> None:
        """Tell the session's watcher how its tagged request was answered."""
        session.events.put_nowait(DebugAnswer(
            session.job_id, status, result.error is None,
            result.error.code if result.error else None))

    async def _instrumented(self, job: LoadedJob) -> DebugJob:
        done = await asyncio.to_thread(instrument, job.code)
        if not done.ok:
            raise JobFailed(f"{done.error} (line {done.line})", line=done.line,
                            column=done.column)
        return DebugJob(job, done.code, done.pausable)

    async def _recorded_job(self, record: RunRecord) -> LoadedJob:
        """The job as it was when the run ran: its recorded version, else today's code."""
        if record.job_version:
            stored = await self.catalog.get_version(record.job_name, record.job_version)
            if stored is not None:
                return self.runner.describe(record.job_name, stored.code, record.job_version)
        return await self.runner.load(record.job_name)
