"""The inbox: how a large payload for a run (its spec, a bridge answer) enters an
isolate that runs share.

As a literal in its eval, a payload of MBs costs V8's scanner about 10 ms a MB
before any code of the eval runs, so before the eval can name its run: that CPU went
to the run entered last, and a CPU stop meant for that run landed on the crossing.
Instead the worker writes the payload into the channel memory's inbox (hidden.py's
layout) a piece at a time, and each piece is taken by a small eval that enters the
run before it copies (prelude.js's ``receive``); the script that then starts the run
or answers its call says ``null`` and takes what arrived (``received``).
"""

from __future__ import annotations

import asyncio

from hub.engine import hidden, v8

# Below this, a payload is a literal in its eval (V8 scans 32 KB in about 0.3 ms).
INBOX_FROM = 32 * 1024


class Inbox:
    """The inbox of one isolate's channel memory. One payload crosses at a time: a
    piece is written, then taken, before the next is written."""

    def __init__(self, racer: v8.Racer, memory: memoryview, slots: int) -> None:
        at = hidden.inbox_at(slots)
        self.racer = racer
        self.area = memory[at:at + hidden.INBOX_BYTES]
        self.lock = asyncio.Lock()

    @staticmethod
    def wanted(size: int) -> bool:
        return size > INBOX_FROM

    async def hand_in(self, slot: int, data: bytes) -> None:
        """``data`` (ASCII JSON, as Python writes it) for the run in ``slot``."""
        whole = memoryview(data)
        async with self.lock:
            for start in range(0, len(data), hidden.INBOX_BYTES):
                piece = whole[start:start + hidden.INBOX_BYTES]
                self.area[:len(piece)] = piece
                await self.racer.eval_async(
                    f"{hidden.HOST}.receive({slot}, {len(data)}, {start}, {len(piece)})")
