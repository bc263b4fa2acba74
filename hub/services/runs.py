"""Running jobs for the hub: from a stored (or uploaded) job to a ``RunResult``.

It resolves the header and limits, builds the engine's ``RunRequest``, records
the run in history (when a worker starts it, and when it ends), logs one line per
finished run (with the ``ref`` every failure carries) and keeps the hub's
warnings about headers. On a hub database the nodes share, each run is in the
cluster's registry while it is in flight (:mod:`hub.cluster.runs`): every node
lists it, and a stop sent to any node reaches it. A run's identity is its
:class:`RunTicket`, made as its request is admitted: on PostgreSQL a public request's
rate-limit hit writes the run's row in the same statement (:meth:`JobRunner.admit_public`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

from hub.auth import Caller, check_job_access
from hub.cluster.nodes import NodeRegistry
from hub.cluster.registry import LiveRun, RunsStore
from hub.cluster.runs import ClusterRuns
from hub.engine.engine import BridgeHost, DebugHost, Engine, RunRequest, RunResult, new_ref
from hub.engine.modules import installed_builds, mentioned
from hub.limiting import RequestLimit, carried_hit
from hub.logsetup import RunFields, run_fields
from hub.secrets.logmask import LOG_MASK
from hub.services.answer_rules import answer_problem
from hub.services.history import History, RunStart, record_caller
from hub.services.job_console import ServerConsole
from hub.services.run_start import StartHooks
from hub.settings import Settings
from hub.store.base import JobStore, check_job_name
from hub.telemetry.hooks import NO_TELEMETRY, RunTelemetry
from shared.errors import JobFailed, NotFound
from shared.header import JobHeader, ResolvedLimits, parse_header, resolve_limits
from shared.ndjson import LogLine

log = logging.getLogger("webhub.runs")


@dataclass(frozen=True)
class InFlight:
    """A run in flight somewhere in the cluster, for ``/running``."""

    job_id: str
    job_name: str
    source: str
    runtime_ms: int
    node: str


@dataclass(frozen=True)
class Stopped:
    """Where a stop went: ``here`` (this node stopped the run) or passed on to ``node``."""

    node: str
    here: bool


@dataclass(frozen=True)
class LoadedJob:
    name: str
    code: str
    header: JobHeader
    resolved: ResolvedLimits
    version: int | None = None
    # the approved modules' builds the code mentions, as the engine takes them
    modules: list[dict[str, str]] = field(default_factory=list)


class SecretValues(Protocol):
    """Where a run's declared secrets are read from (the hub database), afresh each run."""

    def values(self, names: Sequence[str]) -> dict[str, str]: ...


_DESCRIBED_KEPT = 512  # jobs whose description is remembered (all of them, usually)


def new_job_id() -> str:
    return f"job_{int(time.time() * 1000)}{os.urandom(3).hex()}"


class RunTicket:
    """A run's identity (``job_id``, ``ref``, when it ``started``), made as its request is
    admitted. When admission wrote the run's row in the cluster's registry, the run takes
    the row over (:meth:`take`); used as a context manager, a ticket no run took releases
    its row on the way out, whatever ends the request (a body refused, a client gone,
    a debugger's answer, an exception)."""

    def __init__(self, cluster: ClusterRuns | None = None, in_registry: bool = False) -> None:
        self.job_id, self.ref, self.started = new_job_id(), new_ref(), time.time()
        self._cluster = cluster  # where the run is known since its admission
        self.in_registry = in_registry
        self._done = False

    def take(self) -> bool:
        """The run begins: whether its row is written already (never again by the run)."""
        taken = not self._done and self.in_registry
        self._done = True
        return taken

    def release(self) -> None:
        if not self._done and self._cluster is not None:
            self._cluster.leave(self.job_id)
        self._done = True

    def __enter__(self) -> RunTicket:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.release()


def checked_answer(result: RunResult) -> RunResult:
    """``result``, or its failure (JOB-001) when its answer cannot go out as HTTP: a
    header with a line break, a redirect to ``javascript:``... (hub.services.answer_rules).
    Checked here, once, so every answer form and the run's history agree."""
    if result.error is not None:
        return result
    problem = answer_problem(result.meta)
    if problem is None:
        return result
    error = JobFailed(result.redactor.text(f"The job's answer cannot be sent: {problem}"))
    return dataclasses.replace(result, ok=False, meta={}, body=b"", error=error)


class JobRunner:

    def __init__(self, settings: Settings, store: JobStore, engine: Engine,
                 history: History | None = None, secrets: SecretValues | None = None,
                 nodes: NodeRegistry | None = None,
                 telemetry: RunTelemetry = NO_TELEMETRY) -> None:
        self.settings = settings
        self.telemetry = telemetry  # the app's metrics and traces (hub.telemetry)
        self.secrets = secrets
        self.store = store
        self.engine = engine
        self.history = history
        self._noted: set[tuple[str, str]] = set()
        self.module_builds = installed_builds(list(settings.modules))
        # The same source always describes the same way: most requests run a job
        # unchanged since its last run, so neither its header nor the modules it
        # mentions are worked out again.
        self._described: dict[tuple[str, str, int | None], LoadedJob] = {}
        self.nodes = nodes
        self.cluster = _cluster_runs(nodes, engine, history)

    def describe(self, name: str, code: str, version: int | None = None) -> LoadedJob:
        key = (name, code, version)
        known = self._described.get(key)
        if known is not None:
            return known
        if len(self._described) >= _DESCRIBED_KEPT:
            self._described.clear()
        job = self._described[key] = self._describe(name, code, version)
        return job

    def _describe(self, name: str, code: str, version: int | None) -> LoadedJob:
        header = parse_header(code, name)
        resolved = resolve_limits(header, self.settings.maxima)
        for note in resolved.notes:
            if (name, note) not in self._noted:  # once per job and note, not per read
                self._noted.add((name, note))
                log.info("[WebJob:%s] %s", name, note)
        modules = [b.as_message() for b in mentioned(code, self.module_builds)]
        return LoadedJob(name, code, header, resolved, version, modules)

    async def load(self, name: str) -> LoadedJob:
        """The job, read afresh from the store (a database store in a thread, so a
        slow server never holds up the event loop)."""
        check_job_name(name)
        stored = (await asyncio.to_thread(self.store.get, name) if self.store.reads_may_block
                  else self.store.get(name))
        if stored is None:
            raise NotFound(f"There is no job named '{name}'")
        return self.describe(name, stored.code, stored.version or None)

    def authorise(self, job: LoadedJob, caller: Caller) -> None:
        check_job_access(caller, job.name, job.header.access)

    async def admit_public(self, job: LoadedJob, caller: Caller, address: str, method: str,
                           limit: RequestLimit) -> RunTicket:
        """An anonymous request's public rate-limit hit (refused: ``TooManyRequests``,
        before its body is read), and its run's ticket. Where the cluster's runs have
        rows and the limit counts in PostgreSQL, the hit's statement writes the run's
        row too (with the ended rows' deletes); elsewhere the row, if any, is written
        as the run starts."""
        cluster = self.cluster
        hit = carried_hit(limit, address) if cluster is not None and cluster.carries_rows else None
        if cluster is None or hit is None:
            await limit.admit(address)
            return RunTicket()
        ticket = RunTicket(cluster)
        live = LiveRun(ticket.job_id, cluster.node, job.name, "http", ticket.started,
                       record_caller(caller), ticket.ref, job.version, method)
        ticket.in_registry = await cluster.admit(live, hit)
        return ticket

    async def run(self, job: LoadedJob, *, caller: Caller, params: Any, request: dict[str, Any],
                  origin: str = "http", pretty: bool = False,
                  on_log: Callable[[LogLine], None] | None = None,
                  on_start: Callable[[], None] | None = None,
                  job_id: str | None = None, schedule: tuple[str, str] | None = None,
                  debugger: DebugHost | None = None, bridge: BridgeHost | None = None,
                  ticket: RunTicket | None = None) -> RunResult:
        """``ticket``: the run's identity from its admission (``job_id`` when none)."""
        ticket = ticket or RunTicket()
        req, console, starting = await self._prepared(
            job, caller, job_id or ticket.job_id, ticket.ref, params=params, request=request,
            origin=origin, pretty=pretty, on_log=on_log, on_start=on_start, debugger=debugger,
            bridge=bridge)
        cluster = self.cluster
        if cluster is not None and not ticket.take():
            await cluster.enter(_live_run(req, job, caller, schedule, cluster.node,
                                          ticket.started))
        try:
            with (LOG_MASK.hold(req.secrets.values()), run_fields(console.fields),  # to the end
                  self.telemetry.watch(req, caller.kind) as watch):
                starting.first(watch.started)
                if self.history is None:
                    result = await self._engine_result(req)
                else:
                    result = await self._recorded(req, job, caller, params, schedule, starting)
                watch.ended(result)
                result.ref = req.ref
                console.ended(result.logs)
                self._log_result(job.name, result, origin, req.ref)
        finally:
            starting.close()
            if cluster is not None:
                cluster.leave(req.job_id)
        return result

    async def _prepared(self, job: LoadedJob, caller: Caller, job_id: str, ref: str, *,
                        params: Any, request: dict[str, Any], origin: str, pretty: bool,
                        on_log: Callable[[LogLine], None] | None,
                        on_start: Callable[[], None] | None, debugger: DebugHost | None,
                        bridge: BridgeHost | None
                        ) -> tuple[RunRequest, ServerConsole, StartHooks]:
        """The engine's request for the run (its secrets' values read now), the server
        log's copy of its console, and the hooks its start calls."""
        names = job.header.secrets
        values = await self._secret_values(names)
        console = ServerConsole(self.settings.job_log_lines,
                                RunFields(job_id, job.name, ref, _caller_label(caller)))
        starting = StartHooks(on_start)
        req = RunRequest(
            job_id=job_id, job_name=job.name, source=job.code,
            limits=job.resolved.limits, params=params,
            request={**request, "caller": caller.as_job_view()}, origin=origin, pretty=pretty,
            sign_key=self.settings.sign_key,
            on_log=console.watching(on_log),  # the server log's copy of the console
            on_start=starting, staff_id=caller.staff_id, ref=ref,
            approved_modules=list(self.settings.modules),
            modules=job.modules,
            debugger=debugger, bridge=bridge, secret_names=names, secrets=values,
            isolation=job.header.isolation)
        return req, console, starting

    # -- the cluster's runs ---------------------------------------------------------------

    async def in_flight(self) -> list[InFlight]:
        """This node's runs (as the engine sees them), then the other live nodes'."""
        now = time.monotonic()
        node = self.settings.node
        runs = [InFlight(r.job_id, r.job_name, r.origin, int((now - r.started) * 1000), node)
                for r in self.engine.running()]
        if self.cluster is None:
            return runs
        wall = time.time()
        others = await asyncio.to_thread(self.cluster.in_flight)
        return runs + [InFlight(r.job_id, r.job_name, r.source,
                                max(0, int((wall - r.started) * 1000)), r.node)
                       for r in others if r.node != node]

    async def stop(self, job_id: str) -> Stopped:
        """Stop the run here, or pass the stop on to the node running it."""
        if self.engine.stop(job_id):
            return Stopped(self.settings.node, here=True)
        owner = None
        if self.cluster is not None:
            owner = await asyncio.to_thread(self.cluster.request_stop, job_id)
        if owner is None:
            raise NotFound(f"No run '{job_id}' is in flight on any node")
        return Stopped(owner, here=False)

    async def _engine_result(self, req: RunRequest) -> RunResult:
        """``req`` run and its answer checked."""
        return checked_answer(await self.engine.run(req))

    async def _secret_values(self, names: Sequence[str]) -> dict[str, str]:
        """The values of the declared secrets that are set, read now (so a change is
        seen by the next run on every node); none without a declaration."""
        if not names or self.secrets is None:
            return {}
        return await asyncio.to_thread(self.secrets.values, names)

    async def _recorded(self, req: RunRequest, job: LoadedJob, caller: Caller, params: Any,
                        schedule: tuple[str, str] | None, starting: StartHooks) -> RunResult:
        """Run ``req``, recording it from the moment a worker takes it (``starting``; a
        run refused by a full queue never started, so it is not in history)."""
        assert self.history is not None
        history = self.history
        start = RunStart(req.job_id, job.name, job.version, req.origin, caller, params,
                         str(req.request.get("method") or ""), req.ref,
                         schedule[0] if schedule else None,
                         schedule[1] if schedule else None, redactor=req.redactor)
        record = None

        def started() -> None:
            nonlocal record
            record = history.begin(start)

        starting.first(started)
        try:
            result = await self._engine_result(req)
        except BaseException:
            if record is not None:
                history.end_abruptly(record, "the run ended without an outcome")
            raise
        if record is None:  # finished without a worker ever starting it
            record = history.begin(start)
        history.end(record, result, list(result.calls))
        return result

    def _log_result(self, name: str, result: RunResult, origin: str, ref: str) -> None:
        if result.error is None:  # failures are the log's business; successes only at DEBUG
            log.debug("[WebJob:%s] %s ok in %d ms (%s)", name, result.job_id, result.runtime_ms,
                      origin)
            return
        result.error.ref = ref
        log.info("[WebJob:%s] %s failed %s: %s ref=%s (%s)", name, result.job_id,
                 result.error.code, result.error.message, ref, origin)


def _caller_label(caller: Caller) -> str:
    """Who ran it, for the log: ``user:alice``, ``apikey:3``, ``schedule``, ``anonymous``."""
    if caller.kind in ("system", "schedule", "anonymous"):
        return caller.kind
    return f"{caller.kind}:{caller.name if caller.name is not None else caller.id}"


def _cluster_runs(nodes: NodeRegistry | None, engine: Engine,
                  history: History | None) -> ClusterRuns | None:
    """The cluster's registry of runs, on a hub database several nodes can share; on the
    embedded SQLite file a node is alone and its runs stay its own."""
    if nodes is None or not nodes.store.beats or history is None:
        return None
    return ClusterRuns(RunsStore(nodes.store.db), nodes, stop=engine.stop,
                       interrupt=history.mark_interrupted, history_shared=history.shared)


def _live_run(req: RunRequest, job: LoadedJob, caller: Caller,
              schedule: tuple[str, str] | None, node: str, started: float) -> LiveRun:
    return LiveRun(req.job_id, node, job.name, req.origin, started, record_caller(caller),
                   req.ref, job.version, str(req.request.get("method") or ""),
                   schedule[0] if schedule else None, schedule[1] if schedule else None)
