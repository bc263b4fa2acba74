"""The value descriptions a real hub's debug runtime writes are the wire's DebugValue,
strictly: a field the runtime adds, renames or retypes fails here, not in the
debugger's variables tree. One run pauses where a value of every kind is in scope
(and expands its objects), then on an exception leaving the job."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from console_app.client import debug
from console_app.client.connection import CancelToken, HubConnection
from shared import wire
from shared.ndjson import DebugPause, DebugStart, Failure, MetaData, StreamEvent
from shared.wire.debug import DebugPaused, DebugValue

EVERY_KIND = """const n = 3
const half = 1.5
const nan = 0 / 0
const yes = true
const nothing = null
let unset
const text = 'hi'
const long = 'y'.repeat(300)
const big = 10n
const sym = Symbol('s')
function named() { return 1 }
const list = [1, 'two', { three: 3 }]
const obj = { a: 1, inner: { deep: [true] } }
const err = new RangeError('too big')
const got = params.p
debugger
let late = 1
throw new TypeError('leaving the job')"""
# Every field the runtime writes, each one seen at least once in the run below.
FIELDS = {"type", "value", "truncated", "length", "className", "size", "handle", "entries"}


def strict_values(described: dict[str, Any]) -> dict[str, DebugValue]:
    return {name: wire.decode(DebugValue, value, strict=True)
            for name, value in described.items()}


class RawStream:
    """The run's stream as the hub sent it: the client's own parse, before the
    debugger client makes its pauses typed (this test decodes them itself, strictly)."""

    def __init__(self, conn: HubConnection, name: str) -> None:
        body = {"params": {"p": 1}, "stepFromStart": False, "pauseOnException": True}
        self.lines: Iterator[StreamEvent] = conn.stream(
            "POST", f"/api/webjobs/debug/{name}", CancelToken(), json=body)
        self.session = ""

    def pauses(self) -> Iterator[DebugPause]:
        for event in self.lines:
            if isinstance(event, DebugStart):
                self.session = event.session
            if isinstance(event, DebugPause):
                yield event
            if isinstance(event, MetaData | Failure):
                return


def expanded_values(conn: HubConnection, session: str,
                    shown: dict[str, DebugValue]) -> dict[str, DebugValue]:
    """Every value below ``shown``'s handles, one level at a time, read strictly."""
    found: dict[str, DebugValue] = {}
    waiting = [v for v in shown.values() if v.handle is not None]
    while waiting:
        handle = waiting.pop().handle
        assert handle is not None
        answer = conn.call("POST", f"/api/webjobs/debug-session/{session}/command",
                           json={"command": "expand", "handle": handle})
        level = strict_values(answer["entries"])
        found.update({f"{handle}.{k}": v for k, v in level.items()})
        waiting += [v for v in level.values() if v.handle is not None]
    return found


def seen_fields(values: dict[str, DebugValue]) -> set[str]:
    seen: set[str] = set()
    for value in values.values():
        seen |= {k for k, v in wire.encode(value).items() if v is not None}
        seen |= seen_fields(value.entries or {})
    return seen


def test_a_real_sessions_values_decode_strictly(connection: HubConnection) -> None:
    name = f"dbgwire_{uuid.uuid4().hex[:8]}"
    connection.post("/api/webjobs/save", json={"name": name, "code": EVERY_KIND})
    try:
        stream = RawStream(connection, name)
        pauses = stream.pauses()
        first = next(pauses)
        typed = wire.decode(DebugPaused, wire.encode(first), strict=True)
        assert typed.reason == "breakpoint"
        inner = expanded_values(connection, stream.session, typed.vars)
        shown = {**typed.vars, **inner}
        kinds = {v.type for v in shown.values()} | {
            v.type for g in shown.values() for v in (g.entries or {}).values()}
        assert kinds >= {"number", "boolean", "null", "undefined", "string", "bigint",
                         "symbol", "function", "array", "object", "group", "tdz"}
        assert typed.vars["long"].truncated == 300 and typed.vars["err"].value == "too big"
        debug.command(connection, stream.session, "continue")
        thrown = wire.decode(DebugPaused, wire.encode(next(pauses)), strict=True)
        assert thrown.reason == "exception"
        assert thrown.vars["<exception>"].className == "TypeError"
        assert seen_fields({**shown, **thrown.vars}) == FIELDS
        debug.command(connection, stream.session, "continue")
        assert list(pauses) == []
    finally:
        connection.delete(f"/api/webjobs/{name}")
