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

from hub.engine import hidden, sandbox, scripts, warm

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


async def set_up(kind: str) -> sandbox.PreparedContext:
    return warm.build() if kind == "warm" else await sandbox.prepare_context()


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


async def _live_run(kind: str) -> tuple[list[Any], str | None, sandbox.RawOutcome]:
    context = await set_up(kind)
    try:
        lines: list[Any] = []
        context.on_log = lines.extend
        source = "for (let i = 0; i < 3; i++) console.log('line ' + i); return 'é✓'"
        spec = {**SPEC, "live": True}
        if isinstance(context, warm.WarmIsolate):
            outcome = await warm.run(context, source, spec, 64, live=True)
        else:
            outcome = await sandbox.run_in_context(context, source, spec, 64, live=True)
        assert context.channel is not None
        return lines, context.channel.outcome(), outcome
    finally:
        context.close()


@pytest.mark.parametrize("kind", ["warm", "fresh"])
def test_the_worker_reads_what_the_sandbox_writes(kind: str) -> None:
    lines, left, outcome = asyncio.run(_live_run(kind))
    assert [line[:2] for line in lines] == [["log", f"line {i}"] for i in range(3)]
    assert left is not None and left.endswith('\n"é✓"')  # the short outcome, in memory
    assert outcome.meta["ok"] and outcome.body == '"é✓"'


def test_the_layout_the_sandbox_gets_is_hidden_py_s() -> None:
    first = sandbox.sandbox_script(scripts.FRESH_HOST).split(scripts.JOIN)[0]
    assert first == hidden.protocol_script()
    layout = json.loads(first.split("=", 1)[1].rstrip(";"))
    assert layout["memoryBytes"] == hidden.OUTCOME_AT + 8 + hidden.OUTCOME_BYTES
    assert layout["outcomeAt"] == layout["ringAt"] + layout["ringBytes"]
