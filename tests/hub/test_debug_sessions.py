"""Debug sessions on their own, with a fake clock: pausing rules, commands, and the
10-minute sweep of a session nobody drives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hub.api.debug_routes import COMMAND_BODY
from hub.auth import SYSTEM, Caller
from hub.services.debugging import (
    IDLE_LIMIT_S,
    DebugSession,
    DebugSessions,
    DebugStack,
    owner_key,
)
from shared.errors import BadRequest, Conflict, NotFound
from shared.ndjson import DebugPause
from shared.wire.debug import DebugCommand


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def pause(line: int, kind: str = "step") -> dict[str, Any]:
    return {"kind": kind, "line": line, "column": 0, "vars": {"x": {"type": "number",
                                                                      "value": line}}}


async def next_pause(session: DebugSession) -> DebugPause:
    """The next pause (each comes after the stack that led to it)."""
    while not isinstance(event := await session.events.get(), DebugPause):
        assert isinstance(event, DebugStack)
    return event


def test_a_session_left_alone_for_ten_minutes_is_stopped() -> None:
    async def scenario() -> None:
        clock, stopped = Clock(), list[str]()
        sessions = DebugSessions(clock)
        session = sessions.open("ann", "job", stopped.append, True, set())
        parked = asyncio.ensure_future(session.call("debug.pause", pause(3)))
        event = await next_pause(session)
        assert isinstance(event, DebugPause) and event.line == 3
        clock.now += IDLE_LIMIT_S - 1
        assert sessions.sweep() == 0 and not parked.done()
        clock.now += 2
        assert sessions.sweep() == 1
        assert stopped == ["The debug session was left alone for 10 minutes"]
        assert (await parked)["stop"] is True
        with pytest.raises(NotFound):
            sessions.get(session.id, "ann")

    asyncio.run(scenario())


def test_driving_keeps_a_session_alive_and_only_its_owner_drives_it() -> None:
    async def scenario() -> None:
        clock = Clock()
        sessions = DebugSessions(clock)
        session = sessions.open("ann", "job", lambda _m: None, True, set())
        parked = asyncio.ensure_future(session.call("debug.pause", pause(1)))
        await next_pause(session)
        clock.now += IDLE_LIMIT_S - 10
        await session.command(DebugCommand("step"))
        assert await parked == {}
        clock.now += 20
        assert sessions.sweep() == 0
        with pytest.raises(NotFound):
            sessions.get(session.id, "bob")

    asyncio.run(scenario())


def test_pausing_rules_and_bad_commands() -> None:
    async def scenario() -> None:
        session = DebugSessions(Clock()).open("ann", "job", lambda _m: None, False, {5})
        assert await session.call("debug.pause", pause(4)) == {}  # no breakpoint there
        parked = asyncio.ensure_future(session.call("debug.pause", pause(5)))
        assert (await next_pause(session)).line == 5
        with pytest.raises(BadRequest, match="not a debugger command"):
            await session.command(DebugCommand("jump"))
        with pytest.raises(BadRequest, match="line numbers"):
            await session.command(DebugCommand("config", breakpoints=(0,)))
        await session.command(DebugCommand("detach"))
        assert await parked == {}
        assert await session.call("debug.pause", pause(9, "breakpoint")) == {}  # detached
        with pytest.raises(Conflict):
            await session.command(DebugCommand("expand", handle=1))  # not paused

    asyncio.run(scenario())


def test_config_changes_how_an_attached_sessions_next_requests_start() -> None:
    async def scenario() -> None:
        sessions = DebugSessions(Clock())
        session = sessions.attach("ann", "page", lambda _m: None, True)
        await session.command(DebugCommand("config", stepFromStart=False))
        assert session.step_from_start is False  # the next request runs to a breakpoint
        await session.command(DebugCommand("config", stepFromStart=True))
        assert session.step_from_start is True

    asyncio.run(scenario())


def test_an_owner_named_system_is_not_the_system_token() -> None:
    namesake = Caller("user", id=7, name="system", user_class="OWNER", via="token")
    renamed = Caller("user", id=7, name="sys-admin", user_class="OWNER", via="session")
    assert owner_key(namesake) != owner_key(SYSTEM)
    assert owner_key(namesake) == owner_key(renamed)  # the same user, whatever the name
    sessions = DebugSessions(Clock())
    mine = sessions.attach(owner_key(SYSTEM), "page", lambda _m: None, True)
    with pytest.raises(NotFound):
        sessions.get(mine.id, owner_key(namesake))
    assert sessions.tagged(mine.id, owner_key(namesake), "page") is None
    assert sessions.tagged(mine.id, owner_key(SYSTEM), "page") is mine


def test_a_commands_body_is_checked_by_its_wire_shape() -> None:
    """Types are the wire's (HUB-001 naming the field, before any session sees it);
    a line from 1 up and a known command are the session's."""
    with pytest.raises(BadRequest, match=r"'breakpoints\.0' must be a whole number"):
        COMMAND_BODY.check({"command": "config", "breakpoints": ["ten"]})
    with pytest.raises(BadRequest, match="'command' must be a string"):
        COMMAND_BODY.check({"command": 5})
    with pytest.raises(BadRequest, match="'stepFromStart' must be true or false"):
        COMMAND_BODY.check({"command": "config", "stepFromStart": "yes"})
    assert COMMAND_BODY.check({"command": "expand", "handle": 3}) == DebugCommand(
        "expand", handle=3)
