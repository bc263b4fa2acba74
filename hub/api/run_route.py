"""The route that runs a job, matched before every other route of the hub.

``/api/webjobs/{name}`` is the hub's busiest path and also its catch-all: it is
declared last (in ``routes``) so that ``/api/webjobs/available`` and the other
literal paths win. FastAPI then tries some sixty routes before it reaches it,
which cost more of a run's request than the rest of the hub's HTTP work. This
router, included first, holds the same endpoint under a path whose name segment
refuses every literal segment another route declares under the prefix; such a
name falls through to the routes in their declared order, exactly as before.

``RunFirst`` goes one step further: a middleware just outside Starlette's exception
middleware, it hands a request the run route matches straight to that route, with
the exception handlers that middleware would have given it. What it skips is what
the route never used (FastAPI's router walk, its exit stack for dependencies, a
second layer of the same exception handling), work every run would pay for (the
bench's CPU per run shows it); every other request, and every run while
OpenTelemetry watches the app (it names the route as the router picks it), goes the
usual way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fastapi import APIRouter
from starlette.convertors import Convertor, register_url_convertor
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from hub.api.routes import PREFIX, run_job

_CONVERTOR = "webjob_name"


class _UnclaimedName(Convertor[str]):
    """One path segment that no literal route under the prefix claims."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


def literal_segments(routes: Iterable[BaseRoute]) -> set[str]:
    """The single literal segments (``/api/webjobs/<segment>``) of ``routes``."""
    single = re.compile(re.escape(PREFIX) + r"/([^/{}]+)")
    return {m.group(1) for route in routes
            if (m := single.fullmatch(str(getattr(route, "path", ""))))}


def run_router(claimed: set[str]) -> APIRouter:
    """The run route, refusing the ``claimed`` segments (see the module docstring)."""
    pattern = _UnclaimedName.regex
    if claimed:
        words = "|".join(re.escape(word) for word in sorted(claimed))
        pattern = f"(?!(?:{words})\\Z)[^/]+"
    # Starlette keeps convertors by name and reads the pattern as a route is made;
    # every app of this process has the same routes.
    register_url_convertor(_CONVERTOR, type("_Unclaimed", (_UnclaimedName,), {"regex": pattern})())
    router = APIRouter(prefix=PREFIX)
    # A plain Starlette route: the endpoint takes only the request, so FastAPI's
    # parameter machinery (a noticeable share of the hub's CPU per run) is skipped.
    route = Route(f"{PREFIX}/{{name:{_CONVERTOR}}}", _run_named, methods=["GET", "POST"],
                  include_in_schema=False)
    route.methods = {"GET", "POST"}  # Starlette adds HEAD; a HEAD must not run a job
    router.routes.append(route)
    return router


class RunFirst:
    """Plain ASGI, added before every other middleware (so it sits innermost, on the
    exception middleware): a run goes to ``route`` directly (see the module docstring)."""

    def __init__(self, app: ASGIApp, route: Route) -> None:
        self.app = app
        self.route = route
        # What ExceptionMiddleware puts in the scope for the route's own handling; a
        # Starlette that keeps them elsewhere gets no short cut, not a wrong one.
        handlers = (getattr(app, "_exception_handlers", None),
                    getattr(app, "_status_handlers", None))
        usable = isinstance(app, ExceptionMiddleware) and None not in handlers
        self.handlers = handlers if usable else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and self.handlers is not None
                and "fastapi.telemetry" not in scope):
            match, child = self.route.matches(scope)
            if match is Match.FULL:
                scope["starlette.exception_handlers"] = self.handlers
                if "app" in scope:  # as the router would have left it
                    scope.setdefault("router", scope["app"].router)
                scope.update(child)
                await self.route.handle(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _run_named(request: Request) -> Response:
    return await run_job(request.path_params["name"], request)
