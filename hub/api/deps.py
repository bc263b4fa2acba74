"""What every route needs from the running hub, kept on ``app.state``."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from hub.auth import Caller, check_owner, resolve_caller
from hub.engine.engine import Engine
from hub.services.catalog import Catalog
from hub.services.runs import JobRunner
from hub.settings import Settings


@dataclass
class Hub:
    settings: Settings
    engine: Engine
    runner: JobRunner
    catalog: Catalog


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def caller_of(request: Request) -> Caller:
    return resolve_caller(request.headers, hub_of(request).settings.system_token)


def owner_of(request: Request) -> Caller:
    caller = caller_of(request)
    check_owner(caller)
    return caller
