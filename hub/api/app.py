"""The hub's ASGI application: routes, error mapping, start-up and shut-down."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from hub.abuse import parse_trusted_proxies
from hub.api.answers import error_response, refusal
from hub.api.attach import router as attach_router
from hub.api.auth_routes import router as auth_router
from hub.api.debug_routes import router as debug_router
from hub.api.deps import Hub
from hub.api.docs_page import router as docs_router
from hub.api.forwarding import ForwardToSessionNode, PeerUrl
from hub.api.history_routes import router as history_router
from hub.api.inbound import ClientGone
from hub.api.key_routes import router as keys_router
from hub.api.memory import GiveBackMemory
from hub.api.probe_routes import router as probe_router
from hub.api.routes import router
from hub.api.run_route import RunFirst, fast_run_route, reserved_names
from hub.api.schedule_routes import router as schedule_router
from hub.api.secret_routes import router as secret_router
from hub.api.security_headers import NoSniff
from hub.api.store_routes import router as store_router
from hub.api.telemetry_routes import instrument
from hub.api.telemetry_routes import router as telemetry_router
from hub.api.typed import install_wire_schemas
from hub.auth import Identity
from hub.cluster.nodes import NodeRegistry, NodeStore
from hub.engine.engine import Engine, EngineConfig, new_ref
from hub.limiting import node_limits
from hub.outside.database import Database
from hub.outside.demo_data import seed_if_new
from hub.outside.isolation import warn_if_hub_tables_reachable
from hub.outside.netpolicy import NetPolicy
from hub.outside.own_servers import own_server_entries, own_server_hosts
from hub.schedule.store import ScheduleStore
from hub.secrets.logmask import install_log_mask
from hub.services.catalog import Catalog
from hub.services.debugging import DebugSessions
from hub.services.history import History, open_history
from hub.services.identity import IdentityService
from hub.services.json_bodies import close_parsers
from hub.services.keys import KeyService
from hub.services.outside import HubBridge
from hub.services.readiness import Readiness
from hub.services.runs import JobRunner
from hub.services.scheduling import RegistryLiveness, Scheduling
from hub.services.secrets import secrets_service
from hub.settings import Settings
from hub.store.hubdb import open_hub_database
from hub.store.identity import open_identity_store
from hub.store.migrations import prepare_at_start
from hub.store.opening import open_job_store
from hub.telemetry.hooks import NO_TELEMETRY, RunTelemetry
from hub.telemetry.prometheus import HubMetrics, LiveFigures
from hub.telemetry.scrape import ScrapeAccess
from hub.telemetry.traces import RunTracer, tracer_from_env
from shared.errors import BadRequest, InternalError, NotFound, WebJobsError

if TYPE_CHECKING:  # the SDK is imported only when traces are on
    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger("webhub")
SIGN_IN_RATE = 30  # sign-in attempts a minute per address, whatever the names
PRUNE_EVERY_S = 3600.0
SWEEP_EVERY_S = 30.0
Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def build_hub(settings: Settings, telemetry: RunTelemetry = NO_TELEMETRY) -> Hub:
    users = open_identity_store(settings.hub_db)
    store = open_job_store(settings)
    history = open_history(settings)
    outside = outside_bridge(settings)
    engine = Engine(EngineConfig(max_concurrent=settings.max_concurrent,
                                 queue_timeout_ms=settings.queue_timeout_ms,
                                 spare_workers=settings.spare_workers,
                                 runs_per_worker=settings.runs_per_worker,
                                 max_result_mb=settings.max_result_mb,
                                 max_payload_mb=settings.max_payload_mb,
                                 max_console_mb=settings.max_console_mb),
                    telemetry.bridge(outside))
    secrets = secrets_service(settings, store)
    nodes = NodeRegistry(NodeStore(open_hub_database(settings.hub_db)),
                         settings.node, settings.node_timeout_s, settings.node_url)
    nodes.check_name_free()  # a second start of a node's name stops here, clearly
    runner = JobRunner(settings, store, engine, history, secrets, nodes, telemetry)
    identity = Identity(users, settings.system_token, settings.session_idle_hours * 3600)
    catalog = Catalog(store, runner, engine, files_dir=settings.jobs_dir)
    scheduling = Scheduling(ScheduleStore(open_hub_database(settings.hub_db)), runner, history,
                            settings.node, liveness=RegistryLiveness(nodes))
    limits = node_limits(settings, SIGN_IN_RATE)
    if telemetry.metrics is not None:
        telemetry.metrics.watch(LiveFigures(engine.metrics, history.recorder.spooled,
                                            lambda: not history.recorder.store_down,
                                            engine.worker_loads))
    return Hub(settings, engine, runner, catalog, users, identity,
               telemetry.request_limit(limits.public, "public"),
               IdentityService(users, identity, telemetry.sign_in_guard(limits.sign_in),
                               telemetry.request_limit(limits.sign_in_rate, "sign_in_rate")),
               parse_trusted_proxies(settings.trusted_proxies), outside, history, scheduling,
               DebugSessions(node=settings.node), secrets, KeyService(users, runner), nodes,
               limits)


async def _prune_now_and_then(history: History) -> None:
    """Retention and size caps, applied soon after start and then hourly, in a thread
    (a first prune of a big history may take a while; the hub serves meanwhile)."""
    while True:
        try:
            gone = await asyncio.to_thread(history.store.prune, time.time())
            if gone:
                log.info("run history: %d runs past retention or the size cap removed", gone)
        except Exception as exc:  # a store that is down now is pruned next time
            log.info("run history not pruned: %s", getattr(exc, "message", type(exc).__name__))
        await asyncio.sleep(PRUNE_EVERY_S)


def outside_bridge(settings: Settings) -> HubBridge:
    try:
        policy = NetPolicy.from_settings(settings.http_allow, settings.http_deny,
                                         settings.http_test_loopback_port)
    except ValueError as exc:
        raise BadRequest(f"WEBJOB_HTTP_*: {exc}") from None
    mongo = settings.mongo_url if settings.history_store == "mongo" else None
    own = own_server_entries(own_server_hosts([settings.hub_db, settings.job_db], mongo))
    policy = dataclasses.replace(policy, own_servers=tuple(own))
    if policy.test_loopback_port is not None:
        log.warning("WEBJOB_HTTP_TEST_LOOPBACK_PORT is set: jobs may call 127.0.0.1:%d. "
                    "This is for tests only; never set it in production.",
                    policy.test_loopback_port)
    embedded = settings.home / "business.db"
    if settings.job_db == f"sqlite:///{embedded}":  # the embedded default gets demo data
        seed_if_new(embedded)
    warn_if_hub_tables_reachable(settings)
    database = Database(settings.job_db, settings.job_db_pool, settings.job_db_session_sql,
                        max_value_mb=settings.max_payload_mb, max_rows=settings.job_db_max_rows)
    return HubBridge(database, policy)


def create_app(settings: Settings, *, span_exporter: SpanExporter | None = None) -> FastAPI:
    """The hub's app. Traces are on with ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, or with
    ``span_exporter`` (a test's in-memory exporter)."""
    # Before any store: the schema upgraded in place (one node at a time) and this
    # node's WEBHUB_SECRET checked against the cluster's; a refusal stops the start.
    prepare_at_start(settings)
    scrape_access = ScrapeAccess(settings.metrics_allow, settings.metrics_token,
                                 settings.system_token)
    tracer = tracer_from_env(settings.node, span_exporter)
    telemetry = RunTelemetry(HubMetrics(), tracer, settings.node)
    hub = build_hub(settings, telemetry)
    app = FastAPI(title="WebJobs hub", lifespan=_hub_lifespan(hub, settings, tracer),
                  docs_url=None, redoc_url=None)
    app.state.hub = hub
    app.state.prometheus, app.state.scrape_access = telemetry.metrics, scrape_access
    app.state.readiness = Readiness(hub.engine, hub.catalog, hub.history, hub.users.db)
    _add_routes(app, hub, settings)
    install_wire_schemas(app)
    if tracer is not None:
        instrument(app, tracer)
    return app


def _hub_lifespan(hub: Hub, settings: Settings, tracer: RunTracer | None) -> Lifespan:
    """The app's lifespan: the hub's parts started in order, served, then closed."""
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        install_log_mask()  # after uvicorn set up its logging: no secret value in a log line
        await _start_parts(hub)
        pruner = asyncio.create_task(_prune_now_and_then(hub.history))
        sweeper = asyncio.create_task(_sweep_debug_sessions(hub.debug_sessions))
        log.info("hub %s ready: %d concurrent runs, %d spare workers, jobs in %s, "
                 "history in %s", settings.node, settings.max_concurrent,
                 settings.spare_workers, _where_jobs(settings), settings.history_store)
        # What start-up made lives as long as the hub: out of the collector's way, so its
        # passes over the young objects of each request stay short. Its garbage is
        # collected first, or the freeze would keep it for the process's life.
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()  # a process may make and stop many hubs (a test run does)
            for task in (pruner, sweeper):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await _close_parts(hub)
            if tracer is not None:
                tracer.shutdown()  # the spans still batched go out
    return lifespan


async def _start_parts(hub: Hub) -> None:
    await hub.engine.start()
    await hub.catalog.start()  # strays in the jobs folder; other nodes' saves heard
    if hub.nodes is not None:
        await hub.nodes.start()
    if hub.runner.cluster is not None:
        await hub.runner.cluster.start()
    await hub.scheduling.start()


async def _close_parts(hub: Hub) -> None:
    await hub.scheduling.stop()
    await hub.catalog.close()
    await hub.engine.close()
    if hub.runner.cluster is not None:
        await hub.runner.cluster.close()
    if hub.nodes is not None:
        await hub.nodes.stop()
    await hub.outside.close()
    if hub.limits is not None:
        await hub.limits.close()
    await asyncio.to_thread(hub.history.close)
    await asyncio.to_thread(close_parsers)
    hub.users.close()


def _add_routes(app: FastAPI, hub: Hub, settings: Settings) -> None:
    """The routers, the run route's short cut and the middleware, in their order."""
    routers = [auth_router, keys_router, history_router, store_router, schedule_router,
               secret_router, debug_router, attach_router, probe_router, telemetry_router,
               docs_router, router]
    for each in routers:  # the run route is routes.py's last: literal paths win
        app.include_router(each)
    _install_error_handlers(app)
    # The names the routes spell out are no job's: not saved, not run by the short cut.
    claimed = reserved_names(app.router.routes)
    hub.catalog.reserve(claimed)
    # First, so innermost: see hub.api.run_route.
    app.add_middleware(RunFirst, route=fast_run_route(), claimed=claimed)
    app.add_middleware(ForwardToSessionNode, node=settings.node, peer_url=_peer_url(hub),
                       max_body_bytes=settings.max_body_bytes)
    app.add_middleware(NoSniff)
    app.add_middleware(GiveBackMemory)


def _peer_url(hub: Hub, keep_s: float = 5.0) -> PeerUrl:
    """Where another node of the cluster answers (for its debug sessions). The live
    nodes' addresses are read at most every few seconds: a tagged request needs no
    sign-in, so a stream of made-up session ids must not cost a database read each."""
    kept: list[tuple[float, dict[str, str]]] = []

    async def url_of(node: str) -> str | None:
        if hub.nodes is None:
            return None
        now = time.monotonic()
        if not kept or kept[0][0] <= now:
            alive = await asyncio.to_thread(hub.nodes.alive_nodes)
            kept[:] = [(now + keep_s, {n.node: n.url for n in alive if n.url})]
        return kept[0][1].get(node)
    return url_of


async def _sweep_debug_sessions(sessions: DebugSessions) -> None:
    """Debug sessions nobody drove for 10 minutes are stopped (checked every 30 s)."""
    while True:
        await asyncio.sleep(SWEEP_EVERY_S)
        stale = sessions.sweep()
        if stale:
            log.info("%d idle debug sessions stopped", stale)


def _where_jobs(settings: Settings) -> str:
    return "the hub database" if settings.job_store == "db" else str(settings.jobs_dir)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(WebJobsError)
    async def known(request: Request, exc: WebJobsError) -> Response:
        return refusal(exc, request.method, request.url.path)

    @app.exception_handler(ClientGone)
    async def gone(request: Request, exc: ClientGone) -> Response:
        return Response(status_code=499)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return refusal(BadRequest("The request is not valid"), request.method, request.url.path)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        err = (NotFound("No such route") if exc.status_code == 404
               else BadRequest(str(exc.detail)))
        return refusal(err, request.method, request.url.path)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        ref = new_ref()
        log.error("unexpected error on %s %s ref=%s", request.method, request.url.path, ref,
                  exc_info=exc)
        return error_response(InternalError("The hub hit an internal error", ref=ref))
