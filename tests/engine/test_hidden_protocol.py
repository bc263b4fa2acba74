"""The hidden protocol between the worker and the sandbox (hub/engine/hidden.py),
checked on both sides: the sandbox's files name no hidden global hidden.py does not
declare, none but the host object is left once a context is set up, and what the
sandbox writes into the channel memory is what the worker reads from it."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from hub.engine import channel, hidden, sandbox, scripts, warm

ENGINE = Path(__file__).parents[2] / "hub" / "engine"
HIDDEN_NAME = re.compile(r"__webjob_[a-z_]+")
SPEC: dict[str, Any] = {"params": {}, "request": {"method": "GET", "caller": {"kind": "anonymous"}},
                        "limits": {}, "approved": [], "named": []}


def engine_files() -> list[Path]:
    js = [p for p in (ENGINE / "js").rglob("*.js") if "modules" not in p.parts]
    return js + sorted(ENGINE.glob("*.py"))


def test_every_hidden_name_in_the_engine_is_declared_once_in_hidden_py() -> None:
    used = {name for path in engine_files()
            for name in HIDDEN_NAME.findall(path.read_text("utf-8"))}
    assert used and used <= set(hidden.ALL), sorted(used - set(hidden.ALL))


async def set_up(kind: str, slots: int = 1) -> sandbox.PreparedContext:
    return warm.build(slots=slots) if kind == "warm" else await sandbox.prepare_context()


@pytest.mark.parametrize("kind", ["warm", "fresh"])
def test_only_the_host_object_is_left_on_the_global(kind: str) -> None:
    async def left() -> Any:
        context = await set_up(kind)
        try:
            return json.loads(context.racer.eval(
                "JSON.stringify(Object.getOwnPropertyNames(globalThis)"
                ".filter((n) => n.startsWith('__webjob')))"))
        finally:
            context.close()
    assert asyncio.run(left()) == [hidden.HOST]


async def _live_run(kind: str) -> tuple[list[Any], str | None, sandbox.RawOutcome, dict[str, Any]]:
    # A warm isolate holds several runs, each in its own slot of the channel memory: the
    # run goes to a slot past the first, so the slots' offsets are checked on both sides.
    context = await set_up(kind, slots=3)
    try:
        lines: list[Any] = []
        source = "for (let i = 0; i < 3; i++) console.log('line ' + i); return 'é✓'"
        spec = {**SPEC, "live": True}
        if isinstance(context, warm.WarmIsolate):
            slot = context.slots[1]
            slot.take(lines.extend, None)
            try:
                outcome = await warm.run(context, source, spec, 64, live=True, slot=slot)
            finally:
                slot.free()
        else:
            slot = context.slots[0]
            outcome = await sandbox.run_in_context(context, source, spec, 64, live=True,
                                                   on_log=lines.extend)
        assert context.memory is not None
        others = {"current": channel.current_slot(context.memory),
                  "untouched": [s.channel.outcome() for s in context.slots if s is not slot]}
        return lines, slot.channel.outcome(), outcome, others
    finally:
        context.close()


@pytest.mark.parametrize("kind", ["warm", "fresh"])
def test_the_worker_reads_what_the_sandbox_writes(kind: str) -> None:
    lines, left, outcome, others = asyncio.run(_live_run(kind))
    assert [line[:2] for line in lines] == [["log", f"line {i}"] for i in range(3)]
    assert left is not None and left.endswith('\n"é✓"')  # the short outcome, in its slot
    assert outcome.meta["ok"] and outcome.body == '"é✓"'
    assert others["untouched"] == ([None, None] if kind == "warm" else [])  # no other slot's
    if kind == "warm":  # the header names the slot whose code ran
        assert others["current"] == 1


@pytest.mark.parametrize("slots", [1, 3])
def test_the_layout_the_sandbox_gets_is_hidden_py_s(slots: int) -> None:
    first = sandbox.sandbox_script(scripts.FRESH_HOST, slots=slots).split(scripts.JOIN)[0]
    assert first == hidden.protocol_script(slots)
    layout = json.loads(first.split("=", 1)[1].rstrip(";"))
    assert layout["slots"] == slots
    assert layout["slotBytes"] == hidden.OUTCOME_AT + 8 + hidden.OUTCOME_BYTES
    assert layout["inboxAt"] == hidden.inbox_at(slots) == (
        layout["slotsAt"] + slots * layout["slotBytes"])
    assert layout["memoryBytes"] == hidden.memory_bytes(slots) == (
        layout["inboxAt"] + layout["inboxBytes"])
    assert layout["outcomeAt"] == layout["ringAt"] + layout["ringBytes"]
    # the header holds its cells
    assert layout["currentAt"] + 4 <= layout["idleAt"] and layout["idleAt"] + 4 <= layout["slotsAt"]
    assert hidden.slot_at(slots - 1) + layout["slotBytes"] == layout["inboxAt"]
