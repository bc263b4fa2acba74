"""The run route is an ordinary route declared last; its short cut (RunFirst) never
takes a name another route spells out, and those names are derived from the routes:
adding a route reserves its name, from the short cut and from the job names saved."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute
from starlette.types import Message

from hub.api.app import create_app
from hub.api.routes import PREFIX
from hub.api.run_route import RunFirst, fast_run_route, reserved_names
from hub.settings import load_settings
from shared.errors import BadJobName
from shared.names import RESERVED_NAMES


@pytest.fixture()
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FastAPI:
    monkeypatch.setenv("WEBHUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WEBJOB_JOBS_DIR", str(tmp_path / "jobs"))
    return create_app(load_settings())


def _flat(routes: list[BaseRoute]) -> list[Any]:
    found: list[Any] = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        found += _flat(inner.routes) if inner is not None else [route]
    return found


def test_the_run_route_is_an_ordinary_route_and_the_last_under_the_prefix(app: FastAPI) -> None:
    under = [r for r in _flat(app.router.routes) if str(getattr(r, "path", "")).startswith(PREFIX)]
    runs = [r for r in under if r.path == f"{PREFIX}/{{name}}" and r.methods & {"GET", "POST"}]
    assert {m for r in runs for m in r.methods} == {"GET", "POST"}  # a HEAD runs nothing
    assert under[-len(runs):] == runs


def test_the_reserved_names_are_the_first_segments_the_routes_spell_out(app: FastAPI) -> None:
    claimed = reserved_names(app.router.routes)
    assert {"available", "running", "health", "save", "history", "debug", "store"} <= claimed
    assert not any("{" in name for name in claimed)
    # The console checks a new job's name against shared.names: it must know them all.
    assert claimed <= RESERVED_NAMES
    assert claimed <= app.state.hub.catalog.reserved


def test_adding_a_route_reserves_its_name(app: FastAPI) -> None:
    extra = APIRouter(prefix=PREFIX)

    @extra.get("/brand-new/{part}")
    async def brand_new(part: str) -> dict[str, str]:
        return {"part": part}

    assert "brand-new" not in reserved_names(app.router.routes)
    app.include_router(extra)
    claimed = reserved_names(app.router.routes)
    assert "brand-new" in claimed
    catalog = app.state.hub.catalog
    catalog.reserve(claimed)
    with pytest.raises(BadJobName, match="reserved"):
        catalog.check_new_name("Brand-New")
    door = RunFirst(_Recorder(), route=fast_run_route(), claimed=claimed)
    door.handlers = ({}, {})  # as on an exception middleware
    assert _call(door, "GET", f"{PREFIX}/brand-new") == "routed"


class _Recorder:
    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"routed"})


def _call(door: RunFirst, method: str, path: str) -> str:
    scope = {"type": "http", "method": method, "path": path, "root_path": "",
             "query_string": b"", "headers": []}
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(door(scope, receive, send))
    return b"".join(m.get("body", b"") for m in sent[1:]).decode()


@pytest.mark.parametrize(("path", "short_cut"), [
    ("/api/webjobs/public_ping", True),
    ("/api/webjobs/available2", True),
    ("/api/webjobs/History", True),        # the literal routes are case-sensitive too
    ("/api/webjobs/available", False),     # left to its own route
    ("/api/webjobs/save", False),
    ("/api/webjobs/available/", False),
    ("/api/webjobs/public_ping/code", False),
])
def test_the_short_cut_refuses_claimed_segments(path: str, short_cut: bool) -> None:
    route = fast_run_route()
    ran: list[str] = []

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        ran.append(scope["path_params"]["name"])
        await _Recorder()(scope, receive, send)

    route.app = endpoint
    door = RunFirst(_Recorder(), route=route, claimed={"available", "save"})
    door.handlers = ({}, {})
    _call(door, "GET", path)
    assert bool(ran) is short_cut
