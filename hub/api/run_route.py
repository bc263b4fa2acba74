"""The route that runs a job, matched before every other route of the hub.

``/api/webjobs/{name}`` is the hub's busiest path and also its catch-all: it is
declared last (in ``routes``) so that ``/api/webjobs/available`` and the other
literal paths win. FastAPI then tries some sixty routes before it reaches it,
which cost more of a run's request than the rest of the hub's HTTP work. This
router, included first, holds the same endpoint under a path whose name segment
refuses every literal segment another route declares under the prefix; such a
name falls through to the routes in their declared order, exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fastapi import APIRouter
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

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


async def _run_named(request: Request) -> Response:
    return await run_job(request.path_params["name"], request)
