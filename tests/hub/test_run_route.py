"""The run route is matched first, yet never takes a path another route spells out."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.routing import BaseRoute, Match

from hub.api.app import create_app
from hub.api.run_route import literal_segments, run_router
from hub.settings import load_settings
from hub.store.base import RESERVED_NAMES


@pytest.fixture()
def app_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[BaseRoute]:
    monkeypatch.setenv("WEBHUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WEBJOB_JOBS_DIR", str(tmp_path / "jobs"))
    app = create_app(load_settings())
    return [route for included in app.router.routes
            for route in getattr(getattr(included, "original_router", None), "routes", [])]


def _match(router_routes: list[BaseRoute], method: str, path: str) -> Match:
    scope = {"type": "http", "method": method, "path": path, "root_path": ""}
    return max((route.matches(scope)[0] for route in router_routes), key=lambda m: m.value)


def test_the_run_route_is_the_first_route_tried(app_routes: list[BaseRoute]) -> None:
    first = app_routes[0]
    assert str(getattr(first, "path", "")).startswith("/api/webjobs/{name:")
    assert getattr(first, "methods", None) == {"GET", "POST"}  # a HEAD runs nothing


def test_every_literal_segment_is_a_reserved_job_name(app_routes: list[BaseRoute]) -> None:
    claimed = literal_segments(app_routes)
    assert {"available", "running", "health", "save", "history"} <= claimed
    # A job could not be saved under any of them, so the fast route refusing them
    # costs no job its name.
    assert claimed <= RESERVED_NAMES


@pytest.mark.parametrize(("path", "expected"), [
    ("/api/webjobs/public_ping", Match.FULL),
    ("/api/webjobs/available2", Match.FULL),
    ("/api/webjobs/History", Match.FULL),       # the literal routes are case-sensitive too
    ("/api/webjobs/available", Match.NONE),     # left to its own route
    ("/api/webjobs/save", Match.NONE),
    ("/api/webjobs/available/", Match.NONE),
    ("/api/webjobs/public_ping/code", Match.NONE),
])
def test_the_run_route_refuses_claimed_segments(path: str, expected: Match) -> None:
    router = run_router({"available", "save"})
    assert _match(router.routes, "GET", path) == expected
