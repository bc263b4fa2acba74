"""RunFirst: a request the run route matches goes straight to it, handled as the
router and Starlette's exception middleware would have handled it; anything else
takes the usual way (hub.api.run_route)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from hub.api.app import create_app
from hub.api.run_route import RunFirst
from hub.settings import load_settings


class Refused(LookupError):
    pass


class Door:
    """RunFirst on an exception middleware whose app (the router) notes each call."""

    def __init__(self) -> None:
        self.routed: list[str] = []
        self.seen: list[dict[str, Any]] = []
        route = Route("/api/webjobs/{name}", self.endpoint, methods=["GET", "POST"])
        self.inner = ExceptionMiddleware(self.router, handlers={LookupError: self.refusal})
        self.door = RunFirst(self.inner, route=route)

    async def router(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.routed.append(scope["path"])
        await PlainTextResponse("routed")(scope, receive, send)

    async def endpoint(self, request: Request) -> Response:
        self.seen.append(dict(request.scope))
        name = request.path_params["name"]
        if name == "refused":
            raise Refused(name)
        if name == "broken":
            raise RuntimeError(name)
        return PlainTextResponse(f"ran {name}")

    async def refusal(self, request: Request, exc: Exception) -> Response:
        return JSONResponse({"refused": str(exc)}, status_code=409)

    def call(self, method: str, path: str, **extra: Any) -> list[Message]:
        scope = {"type": "http", "method": method, "path": path, "root_path": "",
                 "query_string": b"", "headers": [], **extra}
        sent: list[Message] = []

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            sent.append(message)

        asyncio.run(self.door(scope, receive, send))
        return sent


def _answer(sent: list[Message]) -> tuple[int, bytes]:
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_a_run_goes_straight_to_its_route() -> None:
    door = Door()
    assert _answer(door.call("GET", "/api/webjobs/ping")) == (200, b"ran ping")
    assert _answer(door.call("POST", "/api/webjobs/ping")) == (200, b"ran ping")
    assert door.routed == []
    scope = door.seen[0]
    assert scope["path_params"] == {"name": "ping"}
    assert scope["starlette.exception_handlers"][0][LookupError] == door.refusal


def test_a_failure_of_the_run_gets_the_handler_it_always_had() -> None:
    door = Door()
    assert _answer(door.call("GET", "/api/webjobs/refused")) == (409, b'{"refused":"refused"}')
    with pytest.raises(RuntimeError, match="broken"):  # no handler: up to the server error one
        door.call("GET", "/api/webjobs/broken")
    assert door.routed == []


@pytest.mark.parametrize(("method", "path"), [
    ("HEAD", "/api/webjobs/ping"),     # no run (Starlette's route takes it): the router decides
    ("DELETE", "/api/webjobs/ping"),
    ("GET", "/api/webjobs/ping/code"),
    ("GET", "/api/webjobs/ping/"),
    ("GET", "/api/other"),
])
def test_anything_else_takes_the_usual_way(method: str, path: str) -> None:
    door = Door()
    assert _answer(door.call(method, path)) == (200, b"routed")
    assert door.routed == [path] and door.seen == []


def test_a_run_watched_by_opentelemetry_takes_the_usual_way() -> None:
    door = Door()
    door.call("GET", "/api/webjobs/ping", **{"fastapi.telemetry": object()})
    assert door.routed == ["/api/webjobs/ping"]


def test_no_short_cut_without_the_exception_middleware_below() -> None:
    door = Door()
    bare = RunFirst(door.router, route=door.door.route)
    assert bare.handlers is None
    door.door = bare
    door.call("GET", "/api/webjobs/ping")
    assert door.routed == ["/api/webjobs/ping"] and door.seen == []


def _get(app: Any, path: str) -> tuple[int, dict[bytes, bytes], bytes]:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": [(b"host", b"hub.test")],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 80), "state": {}}
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status, body = _answer(sent)
    return status, dict(sent[0]["headers"]), body


def test_the_hubs_runs_are_answered_through_the_short_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WEBJOB_JOBS_DIR", str(tmp_path / "jobs"))
    app = create_app(load_settings())
    routed: list[str] = []
    original = ExceptionMiddleware.__call__

    async def counting(self: ExceptionMiddleware, scope: Scope, receive: Receive,
                       send: Send) -> None:
        routed.append(scope["path"])
        await original(self, scope, receive, send)

    monkeypatch.setattr(ExceptionMiddleware, "__call__", counting)
    status, headers, body = _get(app, "/api/webjobs/no_such_job")
    assert status == 404 and b"no_such_job" in body
    assert headers[b"x-content-type-options"] == b"nosniff"
    assert routed == []
    assert _get(app, "/api/webjobs/health")[0] == 200
    assert routed == ["/api/webjobs/health"]
