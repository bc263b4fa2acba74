"""The short cut of the run route, the hub's busiest path.

``GET|POST /api/webjobs/{name}`` is an ordinary route (``hub.api.routes.run_job_route``),
declared last so that every literal path under the prefix wins over it. FastAPI
reaches it after trying every other route, and that walk, its dependency machinery
and a second layer of exception handling cost more of a run's request than the rest
of the hub's HTTP work (the bench's CPU per run shows it).

``RunFirst``, a middleware just outside Starlette's exception middleware, hands a run
straight to the same endpoint, with the exception handlers that middleware would have
given it. A run is a GET or POST of one segment under the prefix that no route claims:
the claimed names are the literal first segments of the app's own routes
(:func:`reserved_names`), so a route added under the prefix takes its name from the
short cut, and from the job names a save accepts, by being declared. Every other
request, and every run while OpenTelemetry watches the app (it names the route as the
router picks it), goes the usual way.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from hub.api.routes import PREFIX, run_job

__all__ = ["RUN_METHODS", "RunFirst", "fast_run_route", "reserved_names"]

RUN_METHODS = frozenset({"GET", "POST"})  # a HEAD runs nothing
_FIRST_SEGMENT = re.compile(re.escape(PREFIX) + r"/([^/{}]+)(?:/.*)?")


def _all_routes(routes: Iterable[Any]) -> Iterable[Any]:
    """``routes`` and the routes of the routers included among them."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _all_routes(inner.routes)
        else:
            yield route


def reserved_names(routes: Iterable[BaseRoute]) -> frozenset[str]:
    """The literal first segments under the prefix of ``routes`` (``/api/webjobs/save``,
    ``/api/webjobs/debug/{name}``): names the hub's own routes take, so never a job's."""
    return frozenset(m.group(1) for route in _all_routes(routes)
                     if (m := _FIRST_SEGMENT.fullmatch(str(getattr(route, "path", "")))))


def fast_run_route() -> Route:
    """The run route as a plain Starlette route for RunFirst: the endpoint takes only
    the request, so FastAPI's parameter machinery is skipped. Not in any router."""
    return Route(f"{PREFIX}/{{name}}", _run_named, methods=sorted(RUN_METHODS),
                 include_in_schema=False)


class RunFirst:
    """Plain ASGI, added before every other middleware (so it sits innermost, on the
    exception middleware): a run goes to ``route`` directly (see the module docstring);
    a name in ``claimed`` is left to the router."""

    def __init__(self, app: ASGIApp, route: Route, claimed: Collection[str] = ()) -> None:
        self.app = app
        self.route = route
        self.claimed = frozenset(claimed)
        # What ExceptionMiddleware puts in the scope for the route's own handling; a
        # Starlette that keeps them elsewhere gets no short cut, not a wrong one.
        handlers = (getattr(app, "_exception_handlers", None),
                    getattr(app, "_status_handlers", None))
        usable = isinstance(app, ExceptionMiddleware) and None not in handlers
        self.handlers = handlers if usable else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and self.handlers is not None
                and scope["method"] in RUN_METHODS and "fastapi.telemetry" not in scope):
            match, child = self.route.matches(scope)
            if match is Match.FULL and child["path_params"]["name"] not in self.claimed:
                scope["starlette.exception_handlers"] = self.handlers
                if "app" in scope:  # as the router would have left it
                    scope.setdefault("router", scope["app"].router)
                scope.update(child)
                await self.route.handle(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _run_named(request: Request) -> Response:
    return await run_job(request.path_params["name"], request)
