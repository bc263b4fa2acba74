"""The public rate limit and sign-in throttling counted in a server hub database
(:class:`DatabaseCounters`, one of :mod:`hub.limiting`'s shared stores, as
:mod:`hub.limits_redis` is the other)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from hub.abuse import Allowance
from hub.store.hubdb import HubDatabase
from hub.store.limits_store import LimitsStore, SignInCounts, Step, carries_writes
from shared.errors import InternalError, StoreUnavailable

__all__ = ["DB_THREADS", "DB_WAIT_S", "PRUNE_EVERY_S", "RATE_BUCKET_S", "SIGN_IN_BUCKETS",
           "DatabaseCounters", "HitOutcome"]

RATE_BUCKET_S = 1               # database buckets of the per-minute rates
SIGN_IN_BUCKETS = 60            # database buckets per sign-in window
PRUNE_EVERY_S = 60.0
DB_THREADS = 4                  # as many as the limits' connection pool holds
DB_WAIT_S = 2.0                 # a database call slower than this counts as an outage
# What a hit carrying other writes found: whether it was counted (its writes made), and
# the wait its refusal gives (0 when counted).
HitOutcome = tuple[bool, float]
T = TypeVar("T")


class DatabaseCounters:
    """:class:`LimitsStore` in threads of its own (a server database must not hold up
    the event loop, nor, when it hangs, the threads the rest of the hub shares), each
    call given up after ``wait_s``; old buckets pruned about once a minute by
    whichever call comes."""

    where = "The hub database"
    errors: tuple[type[BaseException], ...] = (StoreUnavailable, InternalError, TimeoutError)

    def __init__(self, db: HubDatabase, *, sign_in_window: float) -> None:
        self.store = LimitsStore(db)
        self._threads = ThreadPoolExecutor(DB_THREADS, thread_name_prefix="webhub-limits")
        self.wait_s = DB_WAIT_S
        self._width = _sign_in_width(sign_in_window)
        # The longest window counted here, and a bucket, and a margin.
        self._keep_s = max(sign_in_window, 60.0) + self._width + 60.0
        self._prune_at = 0.0

    async def _call(self, step: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await asyncio.wait_for(loop.run_in_executor(self._threads, step, *args),
                                      self.wait_s)

    def _prune_if_due(self, now: float) -> None:
        if time.monotonic() >= self._prune_at:
            self._prune_at = time.monotonic() + PRUNE_EVERY_S
            self.store.prune(now, self._keep_s)

    def _hit(self, counter: str, per_minute: int) -> float:
        now = time.time()
        wait = self.store.hit(counter, now, 60.0, RATE_BUCKET_S, per_minute)
        self._prune_if_due(now)
        return wait

    async def hit(self, counter: str, per_minute: int) -> float:
        return await self._call(self._hit, counter, per_minute)

    def _hit_with(self, counter: str, per_minute: int, steps: Sequence[Step]) -> HitOutcome:
        outcome = self.store.hit_with(counter, RATE_BUCKET_S, 60.0, per_minute, steps)
        self._prune_if_due(time.time())
        return outcome

    def start_hit_with(self, counter: str, per_minute: int,
                       steps: Sequence[Step]) -> asyncio.Future[HitOutcome]:
        """A hit and ``steps`` in one statement (PostgreSQL), sent in a thread; the
        future is done when the statement is over (nothing cancels it)."""
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._threads, self._hit_with, counter, per_minute, steps)

    @property
    def carries(self) -> bool:
        """Whether a hit may carry other writes (:meth:`start_hit_with`)."""
        return carries_writes(self.store.db)

    async def sign_in_attempt(self, counters: Sequence[str], allowances: Sequence[Allowance],
                              at: float, window: float,
                              lock: tuple[float, int]) -> SignInCounts:
        return await self._call(self.store.sign_in_attempt, counters,
                                [a.lock_after for a in allowances], at, window, self._width,
                                lock)

    async def withdraw(self, counters: Sequence[str], at: float, serial: int) -> None:
        await self._call(self.store.withdraw, counters, at, self._width, serial)

    async def clear(self, counter: str) -> None:
        await self._call(self.store.clear, counter)

    async def close(self) -> None:
        await asyncio.to_thread(self._threads.shutdown)
        self.store.db.close()


def _sign_in_width(window: float) -> int:
    return max(1, int(window // SIGN_IN_BUCKETS))
