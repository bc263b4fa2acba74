"""A run the worker ends before its start has reached the isolate never runs there.

Found by a red-team pass: a large spec crosses through the inbox (hub/engine/inbox.py)
in evals of their own, so the worker's end could reach the isolate first; the end found
no run of that number and did nothing, the start then ran the job anyway, and once the
worker said the isolate was idle, the next run given the slot shared it with that
ghost, which made bridge calls in its name and wrote its outcome. Driven in this
process, as a worker drives its isolate (built on the loop that drives it, as a
worker's is: mini-racer answers evals on the loop it was made on)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from hub.engine import hidden, replies, sandbox, warm
from tests.engine.test_warm_engine import SPEC

GHOST = """
let i = 0;
setInterval(() => { db.exec('ghost-' + (i++), []).catch(() => {}); }, 5);
await new Promise((r) => setTimeout(r, 150));
return 'FORGED BY GHOST';
"""
VICTIM = "await new Promise((r) => setTimeout(r, 300)); return 'victim'"
ENDED = sandbox.RawOutcome({"ok": False, "code": "JOB-001", "message": "The run was ended"})


def on_an_isolate(scenario: Callable[[warm.WarmIsolate], Awaitable[Any]]) -> Any:
    async def go() -> Any:
        isolate = warm.build(slots=2)
        try:
            return await scenario(isolate)
        finally:
            isolate.close()
    return asyncio.run(go())


def spec(**params: Any) -> dict[str, Any]:
    return json.loads(json.dumps({**SPEC, "params": params}))


async def _end(isolate: warm.WarmIsolate, slot: sandbox.RunSlot) -> None:
    # as Worker.end / _end_in_isolate do for a run that waits
    slot.breach = ENDED
    slot.done.set()
    await isolate.racer.eval_async(f"{hidden.HOST}.end({slot.index}, {slot.seq})")


async def _victim_after(isolate: warm.WarmIsolate, slot: sandbox.RunSlot) -> tuple[Any, list[str]]:
    slot.free()
    assert await warm.settle(isolate) is warm.Fitness.KEEP
    calls: list[str] = []
    slot.take(None, lambda call: calls.append(call["args"]["sql"]))
    outcome = await warm.run(isolate, VICTIM, spec(), 64, False, slot)
    slot.free()
    return outcome.body, calls


def test_a_run_ended_while_its_spec_crosses_never_starts() -> None:
    async def go(isolate: warm.WarmIsolate) -> tuple[sandbox.RawOutcome, Any, list[str]]:
        slot = isolate.slots[0]
        slot.take(None, lambda call: None)
        assert isolate.inbox is not None
        await isolate.inbox.lock.acquire()  # another run's payload is crossing
        ghost = asyncio.ensure_future(
            warm.run(isolate, GHOST, spec(blob="g" * 100_000), 64, False, slot))
        while slot.seq == 0:  # its script is made: it waits for the inbox
            await asyncio.sleep(0.001)
        await _end(isolate, slot)
        isolate.inbox.lock.release()
        ended = await ghost
        return (ended, *await _victim_after(isolate, slot))

    ended, body, calls = on_an_isolate(go)
    assert ended.meta == ENDED.meta
    assert (body, calls) == ('"victim"', [])


def test_an_end_that_arrives_before_the_start_holds() -> None:
    """The isolate's side of it: an end for a run number not started yet is kept, and
    that start does nothing (whatever way its spec came)."""
    async def go(isolate: warm.WarmIsolate) -> tuple[sandbox.RawOutcome, Any, list[str]]:
        slot = isolate.slots[0]
        slot.take(None, lambda call: None)
        slot.seq = isolate.runs + 1  # the number warm.run will give it
        await _end(isolate, slot)
        ended = await warm.run(isolate, GHOST, spec(), 64, False, slot)
        return (ended, *await _victim_after(isolate, slot))

    ended, body, calls = on_an_isolate(go)
    assert ended.meta == ENDED.meta
    assert (body, calls) == ('"victim"', [])


def test_a_stop_left_over_for_a_neighbour_does_not_cost_a_run_its_answer() -> None:
    """Found by the same pass: V8 keeps a stop that found its run's turn just over for
    the next code the isolate runs, which may be the answer to another run's call. That
    run broke no limit: it gets its answer again."""
    async def go(isolate: warm.WarmIsolate) -> Any:
        slot = isolate.slots[0]
        asked: asyncio.Queue[int] = asyncio.Queue()
        slot.take(None, lambda call: asked.put_nowait(int(call["id"])))
        running = asyncio.ensure_future(warm.run(
            isolate, "return await db.exec('q', [])", spec(), 64, False, slot))
        call_id = await asked.get()
        isolate.racer.terminate()  # meant for a neighbour whose turn has just ended
        await replies.reply_in_shared(isolate, slot, call_id, True, "the answer")
        return (await running).body

    assert on_an_isolate(go) == '"the answer"'
