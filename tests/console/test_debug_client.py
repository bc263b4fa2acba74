"""The debugger's client on a fake hub: what it sends is the hub's body shape (decoded
strictly, as the hub validates it), and what the hub's own code writes — a session's
command answers, its ``stack`` lines — is read into the console's types."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from console_app.client import debug
from console_app.client.connection import CancelToken, HubConnection
from console_app.client.errors import NotAHub
from hub.services.debugging import DebugSessions, DebugStack, encode_event
from shared import wire
from shared.ndjson import DebugPause, UnknownLine
from shared.wire import debug as wire_debug
from shared.wire.debug import DebugValue, StackFrame

Handler = Callable[[httpx.Request], httpx.Response]


def connection(answer: Handler) -> tuple[HubConnection, list[tuple[str, Any]]]:
    sent: list[tuple[str, Any]] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append((request.url.path, json.loads(request.content or b"null")))
        return answer(request)

    conn = HubConnection("http://hub.test")
    conn._http = httpx.Client(base_url=conn.url, transport=httpx.MockTransport(record))
    return conn, sent


def session_answers(given: wire_debug.DebugCommand) -> Any:
    """What a real session answers ``given`` with (nothing parked, so no expand)."""
    session = DebugSessions().open("ann", "job", lambda _m: None, True, set())
    return wire.encode(asyncio.run(session.command(given)))


def test_commands_send_the_wire_body_and_read_the_sessions_answers() -> None:
    def hub(request: httpx.Request) -> httpx.Response:
        given = wire.decode(wire_debug.DebugCommand, json.loads(request.content), strict=True)
        return httpx.Response(200, json=session_answers(given))

    conn, sent = connection(hub)
    assert debug.command(conn, "dbg_1", "continue") == wire_debug.DebugStepped(True, False)
    assert debug.command(conn, "dbg_1", "stop") == wire_debug.DebugDone(True)
    assert debug.configure(conn, "dbg_1", breakpoints=[9, 3, 9],
                           pause_on_exception=True) == wire_debug.DebugDone(True)
    assert [body for _, body in sent] == [
        {"command": "continue"}, {"command": "stop"},
        {"command": "config", "breakpoints": [3, 9], "pauseOnException": True}]
    assert {path for path, _ in sent} == {"/api/webjobs/debug-session/dbg_1/command"}
    with pytest.raises(ValueError, match="not a debugger command"):
        debug.command(conn, "dbg_1", "jump")


def test_expand_and_attach_read_their_shapes() -> None:
    def hub(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/attach"):
            wire.decode(wire_debug.DebugAttach, json.loads(request.content), strict=True)
            return httpx.Response(200, json=wire.encode(wire_debug.DebugAttached(
                "dbg_2", "/api/webjobs/page?_debug=dbg_2")))
        return httpx.Response(200, json=wire.encode(wire_debug.DebugExpansion(
            4, {"a": {"type": "number", "value": 1}}, 2, None)))

    conn, sent = connection(hub)
    assert debug.expand(conn, "dbg_1", 4) == debug.Expansion(
        4, {"a": DebugValue("number", 1)}, 2, None)
    attached = debug.attach(conn, "page", step_from_start=False)
    assert (attached.session, attached.url) == ("dbg_2", "/api/webjobs/page?_debug=dbg_2")
    assert sent == [("/api/webjobs/debug-session/dbg_1/command",
                     {"command": "expand", "handle": 4}),
                    ("/api/webjobs/debug/page/attach",
                     {"stepFromStart": False, "pauseOnException": False})]


def stream_of(*lines: bytes) -> Handler:
    def hub(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=httpx.ByteStream(b"".join(lines)),
                              headers={"Content-Type": "application/x-ndjson"})
    return hub


def test_a_debug_run_sends_its_options_and_reads_the_hubs_stack_lines() -> None:
    stack = DebugStack((StackFrame("inner", 3, 2), StackFrame("(job)", 10, 0)), 2)
    odd = b'{"type":"stack","frames":"none"}\n'
    conn, sent = connection(stream_of(encode_event(stack), odd))
    events = list(debug.start(conn, "calls", CancelToken(), params={"base": 1},
                              breakpoints=[4, 2], method="GET"))
    assert events[0] == wire_debug.DebugStack(
        (StackFrame("inner", 3, 2), StackFrame("(job)", 10, 0)), 2)
    assert isinstance(events[1], UnknownLine)  # a stack this console cannot read
    path, body = sent[0]
    assert path == "/api/webjobs/debug/calls" and "code" not in body
    assert wire.decode(wire_debug.DebugRunOptions, body, strict=True) == \
        wire_debug.DebugRunOptions({"base": 1}, None, "GET", True, (2, 4), False)


def test_unsaved_code_and_a_replay_send_their_bodies() -> None:
    conn, sent = connection(stream_of())
    list(debug.start(conn, "draft", CancelToken(), code="return 1"))
    list(debug.replay(conn, "run_1", CancelToken(), step_from_start=False,
                      pause_on_exception=True))
    assert sent[0][1]["code"] == "return 1"
    assert sent[1] == ("/api/webjobs/debug/replay/run_1", wire.encode(
        wire.decode(wire_debug.DebugReplayOptions, sent[1][1], strict=True)))
    assert sent[1][1] == {"stepFromStart": False, "breakpoints": [],
                          "pauseOnException": True}


def test_pauses_arrive_typed_and_a_value_of_another_shape_is_not_a_hub() -> None:
    pause = DebugPause(4, 2, "breakpoint", {"n": {"type": "number", "value": 1},
                                            "<globals>": {"type": "group", "entries": {
                                                "params": {"type": "object", "size": 0,
                                                           "className": "Object",
                                                           "handle": 1}}}})
    conn, _ = connection(stream_of(encode_event(pause)))
    events = list(debug.start(conn, "calls", CancelToken()))
    assert events == [wire_debug.DebugPaused(4, 2, "breakpoint", {
        "n": DebugValue("number", 1),
        "<globals>": DebugValue("group", entries={"params": DebugValue(
            "object", className="Object", size=0, handle=1)})})]
    odd = DebugPause(5, 0, "step", {"n": {"type": 3}})
    conn, _ = connection(stream_of(encode_event(odd)))
    with pytest.raises(NotAHub, match=r"pause at line 5 .*\$\.n\.type"):
        list(debug.start(conn, "calls", CancelToken()))


def test_an_expansion_of_another_shape_is_not_a_hub() -> None:
    conn, _ = connection(lambda _r: httpx.Response(200, json=wire.encode(
        wire_debug.DebugExpansion(4, {"a": {"value": 1}}, 0, None))))
    with pytest.raises(NotAHub, match=r"expand 4 .*\$\.a\.type: missing"):
        debug.expand(conn, "dbg_1", 4)
