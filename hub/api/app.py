"""The hub's ASGI application: routes, error mapping, start-up and shut-down."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from hub.abuse import RateLimiter, SignInThrottle, parse_trusted_proxies
from hub.api.answers import error_response, refusal
from hub.api.auth_routes import router as auth_router
from hub.api.deps import Hub
from hub.api.key_routes import router as keys_router
from hub.api.routes import router
from hub.api.streaming import ClientGone
from hub.auth import Identity
from hub.engine.engine import Engine, EngineConfig, new_ref
from hub.outside.database import Database
from hub.outside.demo_data import seed_if_new
from hub.outside.netpolicy import NetPolicy
from hub.services.catalog import Catalog
from hub.services.outside import HubBridge
from hub.services.runs import JobRunner
from hub.settings import Settings
from hub.store.files import FileJobStore
from hub.store.identity import open_identity_store
from shared.errors import BadRequest, InternalError, NotFound, WebJobsError

log = logging.getLogger("webhub")
SIGN_IN_RATE = 30  # sign-in attempts a minute per address, whatever the names


def build_hub(settings: Settings) -> Hub:
    store = FileJobStore(settings.jobs_dir)
    outside = outside_bridge(settings)
    engine = Engine(EngineConfig(max_concurrent=settings.max_concurrent,
                                 queue_timeout_ms=settings.queue_timeout_ms,
                                 spare_workers=settings.spare_workers), outside)
    runner = JobRunner(settings, store, engine)
    users = open_identity_store(settings.hub_db)
    identity = Identity(users, settings.system_token, settings.session_idle_hours * 3600)
    return Hub(settings, engine, runner, Catalog(store, runner, engine), users, identity,
               RateLimiter(settings.public_rate), SignInThrottle(), RateLimiter(SIGN_IN_RATE),
               parse_trusted_proxies(settings.trusted_proxies), outside)


def outside_bridge(settings: Settings) -> HubBridge:
    try:
        policy = NetPolicy.from_settings(settings.http_allow, settings.http_deny,
                                         settings.http_test_loopback_port)
    except ValueError as exc:
        raise BadRequest(f"WEBJOB_HTTP_*: {exc}") from None
    if policy.test_loopback_port is not None:
        log.warning("WEBJOB_HTTP_TEST_LOOPBACK_PORT is set: jobs may call 127.0.0.1:%d. "
                    "This is for tests only; never set it in production.",
                    policy.test_loopback_port)
    embedded = settings.home / "business.db"
    if settings.job_db == f"sqlite:///{embedded}":  # the embedded default gets demo data
        seed_if_new(embedded)
    database = Database(settings.job_db, settings.job_db_pool, settings.job_db_session_sql)
    return HubBridge(database, policy)


def create_app(settings: Settings) -> FastAPI:
    hub = build_hub(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.catalog.store.report_non_jobs()  # type: ignore[attr-defined]
        await hub.engine.start()
        log.info("hub %s ready: %d concurrent runs, %d spare workers, jobs in %s",
                 settings.node, settings.max_concurrent, settings.spare_workers, settings.jobs_dir)
        try:
            yield
        finally:
            await hub.engine.close()
            await hub.outside.close()
            hub.users.close()

    app = FastAPI(title="WebJobs hub", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.hub = hub
    app.include_router(auth_router)
    app.include_router(keys_router)
    app.include_router(router)
    _install_error_handlers(app)
    return app


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
