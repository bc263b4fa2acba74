"""CPU per run in a warm isolate that holds several runs at once.

Every entry into the isolate is made on behalf of one run (its start, a bridge reply,
a timer) and writes that run's slot into the channel memory's header first (run.js's
``enter``); the microtasks that follow are the same run's until the queue drains. A
thread of the worker reads the isolate thread's own CPU clock every ``TICK_S`` and
charges what it grew by to the slot the header names, so a run that spins is charged
for it, and one that waits is not. A run over its CPU limit is first ended softly
(``on_over``: the worker ends it in the isolate at its next await, with an eval, as a
run whose runtime is up); one still running ``HARD_AFTER_S`` later is in a long turn
and is stopped with V8's ``TerminateExecution`` (it unwinds that run's code only).
Soft first because a stop that finds its run's turn just over waits in V8 for the next
code the isolate runs, another run's (a run that burns its CPU in short turns between
awaits made that likely). CPU that grows for a slot no run holds (what an ended run left
spinning) is stopped the hard way. If the isolate still burns CPU for the same slot
``HOPELESS_S`` after a stop, nothing in this process can stop it: ``on_hopeless`` ends
the worker.

The charge is as fine as the tick: a run that enters just before a tick may be charged
a few ms its neighbour spent. The header is written only from inside the isolate, at an
entry: the worker never names a run before V8 has given it its turn (an eval waits
behind a neighbour's turn, whose CPU must stay the neighbour's). So what V8 does before
an entry's first line — compiling a run's script, loading a module — is charged to the
run that entered last; a large spec or answer crosses through the inbox instead, on its
own run's account (inbox.py).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from hub.engine import hidden, v8
from hub.engine.channel import current_slot

TICK_S = 0.005
# How often the thread looks while no run is held, or only runs too short to watch: it
# is not woken for each run (a wake-up per run cost a tiny run's rate a third), so a run
# that spins is first seen within this, and charged from its start all the same.
IDLE_S = 0.05
# CPU an ended run's leftovers may spin for, without a pause, before they are stopped;
# longer while the worker starts a run (V8 compiling a long job text looks the same from
# here: CPU for a run that has not entered yet).
LEFTOVER_NS = 250_000_000
LEFTOVER_STARTING_NS = 3_000_000_000
# How long a stop may take before the isolate is given up on.
HOPELESS_S = 0.5
# How long a run over its CPU limit, ended softly, may go on running before it is
# stopped the hard way.
HARD_AFTER_S = 0.05


# Resident memory beyond the runs' own Memory: the worker's Python and V8 baseline and
# ordinary external buffers (the hub's watchdog for a run alone allows the same).
RSS_HEADROOM_MB = 192
_RSS_EVERY = 4  # ticks between reads of the resident memory
_PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_mb() -> int:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * _PAGE // (1024 * 1024)


@dataclass
class _Held:
    run: str
    limit_ns: int
    memory_mb: int
    spent_ns: int = 0
    # Stopped once: never again. What the isolate does while the run still holds its slot
    # (its stop being told on the worker's loop) is another's: an eval queued behind it.
    stopped: bool = False
    since_ns: int = dataclasses.field(default_factory=time.monotonic_ns)
    over_since: float = 0.0  # when it was ended softly, over its CPU limit (0: not yet)


class CpuMonitor:
    def __init__(self, racer: v8.Racer, memory: memoryview,
                 on_stop: Callable[[int, str, str], None],
                 on_hopeless: Callable[[str, str], None],
                 starting: Callable[[], bool] = lambda: False,
                 on_over: Callable[[int, str, str], None] | None = None) -> None:
        """``on_stop(slot, run, limit)`` (a hard stop), ``on_over(slot, run, limit)`` (end
        it softly) and ``on_hopeless(run, limit)`` are called on the monitor's thread;
        ``run`` is "" for leftovers of a run that has ended."""
        self._racer, self._memory = racer, memory
        self._on_stop, self._on_hopeless, self._on_over = on_stop, on_hopeless, on_over
        self._starting = starting
        self._lock = threading.Lock()
        self._held: dict[int, _Held] = {}
        self._last_run: dict[int, str] = {}  # slot -> the run that held it last
        self._soft_ended: dict[int, tuple[str, float]] = {}  # slot -> (run, when)
        self._wanted = threading.Event()
        self._closed = False
        self._leftover_ns = 0
        self._leftover_slot = -1
        self._tick_ns = int(TICK_S * 1e9)  # how long the last tick really took
        self._stopping: tuple[int, str, str, float] | None = None
        self._ticks = 0
        self._memory_stopped = False
        self._rss_base = 0  # resident MB when the thread first saw the runs held now
        self._last_cpu = 0  # the isolate thread's CPU clock when last charged
        self._thread = threading.Thread(target=self._watch, name="cpu-monitor", daemon=True)
        self._thread.start()

    def hold(self, slot: int, run: str, limit_ms: int, memory_mb: int = 0) -> None:
        with self._lock:
            if not self._held:
                self._last_cpu, self._rss_base = self._racer.cpu_ns(), 0
            else:
                self._charge_since_last()  # what the isolate spent so far is not this run's
            self._held[slot] = _Held(run, limit_ms * 1_000_000, memory_mb)
            self._last_run[slot] = run
            self._soft_ended.pop(slot, None)

    def release(self, slot: int) -> int:
        """The run in ``slot`` is over: the CPU charged to it, in ms."""
        with self._lock:
            self._charge_since_last()
            held = self._held.pop(slot, None)
            if not self._held:
                self._stopping = None  # judged on the ticks of the runs it held, not later ones
        return held.spent_ns // 1_000_000 if held is not None else 0

    def _charge_since_last(self) -> None:
        # Under the lock, on the worker's loop: charge only, no stops (the thread decides).
        now = self._racer.cpu_ns()
        grew, self._last_cpu = now - self._last_cpu, now
        held = self._held.get(current_slot(self._memory))
        if held is not None and grew > 0:
            held.spent_ns += grew

    def stop(self, slot: int, limit: str) -> bool:
        """Stop the run in ``slot`` if its code runs now (its runtime is up); False when
        it does not (it waits: the worker ends it with an eval instead)."""
        with self._lock:
            held = self._held.get(slot)
            if self._closed:
                return False
            if held is None or current_slot(self._memory) != slot or not self._busy():
                return False
            self._terminate(slot, held.run, limit)
        return True

    def close(self) -> None:
        """Stop watching, before the isolate closes (the thread reads its clock and may
        stop it: neither may happen to a closed isolate)."""
        with self._lock:
            self._closed = True
        self._wanted.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def _busy(self, least_ns: int = 3_500_000) -> bool:
        # Whether the isolate's thread burns CPU now: by default most of 5 ms (a spinning
        # run takes all of it; a short turn or a collection does not).
        first = self._racer.cpu_ns()
        time.sleep(0.005)
        return self._racer.cpu_ns() - first > least_ns

    def _terminate(self, slot: int, run: str, limit: str) -> None:
        # Under the lock. The run learns of it through ``on_stop`` (on the worker's loop).
        self._racer.terminate()
        held = self._held.get(slot)
        if held is not None:
            held.stopped = True
        self._stopping = (slot, run, limit, time.monotonic())
        self._on_stop(slot, run, limit)

    def _watch(self) -> None:
        last_wall = time.monotonic_ns()
        watching = False  # runs were held at the last look: look again after a tick
        while not self._closed:
            self._wanted.wait(TICK_S if watching else IDLE_S)  # set only by close()
            with self._lock:
                if self._closed:
                    return
                wall = time.monotonic_ns()
                self._tick_ns, last_wall = wall - last_wall, wall
                # ticks only for a run that has lasted: most runs end within a tick, and
                # each tick costs the worker's loop a hand-over of the GIL
                watching = any(wall - h.since_ns > 2 * TICK_S * 1e9 for h in self._held.values())
                if not watching:
                    continue
                if not self._rss_base:
                    self._rss_base = resident_mb()
                now = self._racer.cpu_ns()
                grew, self._last_cpu = now - self._last_cpu, now
                self._charge(grew)

    def _settled(self, slot: int) -> bool:
        # The outcome cell of the slot (channel.ConsoleChannel.settled, without the object).
        at = hidden.slot_at(slot) + hidden.OUTCOME_AT
        size = int.from_bytes(self._memory[at:at + 4], "little", signed=True)
        return size >= 0 or size == -2

    def _over_memory(self) -> bool:
        # Memory outside V8's heap (ArrayBuffers' backing stores) is not in its limit:
        # the process's resident memory is, against every held run's Memory together.
        self._ticks += 1
        if self._ticks % _RSS_EVERY:
            return False
        cap = self._rss_base + RSS_HEADROOM_MB + sum(h.memory_mb for h in self._held.values())
        return resident_mb() > cap

    def _spinning(self, slot: int, grew: int) -> bool:
        """Whether CPU has gone to ``slot``'s leftovers, tick after busy tick, for
        LEFTOVER_NS: a pause (a tick mostly idle) or another slot starts the count again,
        so short pieces of work for no run (a timer of an ended run, an end) never add up."""
        # a tenth of the tick: on a crowded machine a spinning thread gets far less than a core
        if grew < self._tick_ns / 10 or slot != self._leftover_slot:
            self._leftover_slot, self._leftover_ns = slot, 0
        self._leftover_ns += grew
        if self._leftover_ns <= (LEFTOVER_STARTING_NS if self._starting() else LEFTOVER_NS):
            return False
        self._leftover_ns = 0
        return True

    def _charge(self, grew: int) -> None:
        slot = current_slot(self._memory)
        stopping = self._stopping
        if stopping is not None:
            if grew < TICK_S * 1e9 / 4 or slot != stopping[0]:
                self._stopping = None  # the stop took
            elif time.monotonic() - stopping[3] > HOPELESS_S:
                self._on_hopeless(stopping[1], stopping[2])
                return
        if grew <= 0:
            return
        held = self._held.get(slot)
        if held is None:
            if self._stopping is None and self._still_running_after_soft_end(slot):
                return
            if self._spinning(slot, grew) and self._stopping is None:
                self._stop_running(slot, self._last_run.get(slot, ""), "leftover")
            return
        if held.stopped:
            return
        held.spent_ns += grew
        if self._stopping is not None:
            return
        if self._settled(slot):  # it has answered: what spins now is what it left behind
            if self._spinning(slot, grew):
                self._stop_running(slot, held.run, "leftover")
        elif held.spent_ns > held.limit_ns:
            self._over_cpu(slot, held)
        elif not self._memory_stopped and self._over_memory():
            # Once: the stopped run's memory stays until the isolate drops it, and the
            # isolate, retiring, only finishes its neighbours (their CPU is still watched).
            self._memory_stopped = self._stop_running(slot, held.run, "memory")

    def _over_cpu(self, slot: int, held: _Held) -> None:
        now = time.monotonic()
        if not held.over_since and self._on_over is not None:
            held.over_since = now
            self._soft_ended[slot] = (held.run, now)  # watched on once it has left
            self._on_over(slot, held.run, "cpu")
        elif not held.over_since or now - held.over_since > HARD_AFTER_S:
            self._stop_running(slot, held.run, "cpu")

    def _still_running_after_soft_end(self, slot: int) -> bool:
        """A run ended softly whose code still runs once the worker has let it go (its
        turn is long, or endless): stopped the hard way, as over its CPU."""
        run, since = self._soft_ended.get(slot, ("", 0.0))
        if not since or time.monotonic() - since <= HARD_AFTER_S:
            return False
        if self._stop_running(slot, run, "cpu"):
            del self._soft_ended[slot]
        return True

    def _stop_running(self, slot: int, run: str, limit: str) -> bool:
        """Stop ``slot``'s code if the isolate still runs it. Its turn may have ended since
        the tick was charged: a stop then would wait in V8 for the next code the isolate
        runs, another run's entry (a reply meant for it, its start). Not stopped now, it
        is charged on and stopped when it runs again."""
        # a fifth of the 5 ms: on a crowded machine a spinning thread gets far less than
        # a core, and a thread whose turn has ended gets none
        if current_slot(self._memory) != slot or not self._busy(1_000_000):
            return False
        if current_slot(self._memory) != slot:  # another run entered meanwhile
            return False
        self._terminate(slot, run, limit)
        return True
