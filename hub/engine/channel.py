"""The worker's side of one slot of the prelude's channel memory: a run's console
ring and its outcome area (see prelude.js; the layout is ``hidden``'s).

It reads console lines straight from the context's shared memory, with no call
into the isolate, so lines arrive even while the job spins. A job can scribble
on that memory; a frame that does not read back is the end of the channel,
never an exception.
"""

from __future__ import annotations

from typing import Any

from hub.engine import crossing, hidden

CAPACITY = hidden.RING_BYTES
OUTCOME_CAPACITY = hidden.OUTCOME_BYTES
_OUTCOME_AT = hidden.OUTCOME_AT


def current_slot(memory: memoryview) -> int:
    """The slot whose code the isolate runs now (or ran last); -1 for none."""
    return int.from_bytes(memory[hidden.CURRENT_AT:hidden.CURRENT_AT + 4], "little", signed=True)


def idle_after(memory: memoryview) -> int:
    """The number of the last run after whose settling the isolate ran a task of its own."""
    return int.from_bytes(memory[hidden.IDLE_AT:hidden.IDLE_AT + 4], "little", signed=True)


class ConsoleChannel:
    def __init__(self, memory: memoryview, slot: int = 0) -> None:
        at = hidden.slot_at(slot)
        self.memory = memory.cast("B")[at:at + hidden.SLOT_BYTES]
        self.ring = self.memory[hidden.RING_AT:hidden.RING_AT + CAPACITY]
        self.read = 0
        self.broken = False

    def _take(self, at: int, size: int) -> bytes:
        pos = at % CAPACITY
        first = min(size, CAPACITY - pos)
        return bytes(self.ring[pos:pos + first]) + bytes(self.ring[:size - first])

    def reset(self) -> None:
        """Before a run: no outcome yet, an empty ring (a warm isolate's channel
        serves run after run; the sandbox resets its side as the run starts)."""
        self.memory[_OUTCOME_AT:_OUTCOME_AT + 4] = (-1).to_bytes(4, "little", signed=True)
        self.memory[0:8] = bytes(8)
        self.read = 0
        self.broken = False

    def drain(self) -> list[list[Any]]:
        if self.broken:
            return []
        written = int.from_bytes(self.memory[0:4], "little", signed=True)
        if written < self.read or written - self.read > CAPACITY:
            self.broken = True
            return []
        lines = []
        while self.read < written:
            size = int.from_bytes(self._take(self.read, 4), "little")
            line = crossing.log_line(crossing.parse_json(self._take(self.read + 4, size)))
            if size > CAPACITY - 4 or line is None:
                self.broken = True
                break
            lines.append(line)
            self.read += 4 + size
        self.memory[4:8] = self.read.to_bytes(4, "little", signed=True)
        return lines

    def settled(self) -> bool:
        """The run has left its outcome here, or said it is too long for the area."""
        size = int.from_bytes(self.memory[_OUTCOME_AT:_OUTCOME_AT + 4], "little", signed=True)
        return size >= 0 or size == -2

    def settled_elsewhere(self) -> bool:
        """The run has settled with an outcome too long for the memory: ask for it."""
        size = int.from_bytes(self.memory[_OUTCOME_AT:_OUTCOME_AT + 4], "little", signed=True)
        return size == -2

    def outcome(self) -> str | None:
        """The outcome the prelude left in memory, if it was short enough."""
        size = int.from_bytes(self.memory[_OUTCOME_AT:_OUTCOME_AT + 4], "little", signed=True)
        if not 0 <= size <= OUTCOME_CAPACITY:
            return None
        start = _OUTCOME_AT + 8
        return bytes(self.memory[start:start + size]).decode("utf-8", errors="replace")
