"""Answers to a run's bridge calls (``db.exec``, ``http()``...), into its context."""

from __future__ import annotations

import json
from typing import Any

from hub.engine import hidden, v8
from hub.engine.sandbox import PreparedContext, RunSlot, keyed


async def reply_to_call(prepared: PreparedContext, slot: RunSlot, call_id: int, ok: bool,
                        value: Any) -> None:
    """Settle a bridge call the job is awaiting: an entry into the isolate on its run's
    behalf (a fresh context's host takes its key instead of a slot). A large answer
    crosses through the inbox first (hub/engine/inbox.py)."""
    text = json.dumps(value)
    key = keyed(prepared) + ", " if prepared.host_key else f"{slot.index}, "
    slot.calls_out = max(0, slot.calls_out - 1)
    inbox = prepared.through_inbox(len(text))
    if inbox is not None:
        await inbox.hand_in(slot.index, text.encode())
        payload = "null"
    else:
        payload = json.dumps(text)
    await prepared.racer.eval_async(
        f"{hidden.HOST}.reply({key}{int(call_id)}, {'true' if ok else 'false'}, {payload})")


async def reply_in_shared(prepared: PreparedContext, slot: RunSlot, call_id: int, ok: bool,
                          value: Any) -> None:
    """A reply into an isolate runs share. A stop meant for a neighbour can land on it
    (V8 keeps a stop that found its run's turn just over for the next code it runs): a
    run that broke no limit itself gets its answer again, once (a call already answered
    is not answered twice: the run forgets a call as it settles it)."""
    seq = slot.seq
    try:
        await reply_to_call(prepared, slot, call_id, ok, value)
    except v8.EvalError:
        if slot.breach is not None or not slot.held or slot.seq != seq:
            raise
        slot.calls_out += 1  # the first try counted it as answered
        await reply_to_call(prepared, slot, call_id, ok, value)
