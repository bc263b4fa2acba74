"""Getting a run onto a worker: the node's concurrency gate, and a worker from the
pool within what is left of the queue timeout.

Both waits end with ``TooManyRequests`` (SYS-429): a run never waits without bound,
even when every worker is dead or still starting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from hub.engine.pool import WorkerPool, WorkerProcess
from shared.errors import TooManyRequests


def _busy(timeout_ms: int, what: str) -> TooManyRequests:
    return TooManyRequests(f"{what} on this node; try again shortly",
                           retry_after=max(1, timeout_ms // 1000))


class ConcurrencyGate:
    """At most ``limit`` runs at once; a waiter gives up after ``timeout_ms``."""

    def __init__(self, limit: int, timeout_ms: int) -> None:
        self.limit = limit
        self.timeout_ms = timeout_ms
        self._sem = asyncio.Semaphore(limit)
        self.queued = 0

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        self.queued += 1
        try:
            async with asyncio.timeout(self.timeout_ms / 1000):
                await self._sem.acquire()
        except TimeoutError:
            raise _busy(self.timeout_ms, "Too many jobs are running") from None
        finally:
            self.queued -= 1
        try:
            yield
        finally:
            self._sem.release()

    @property
    def running(self) -> int:
        return self.limit - self._sem._value

    @property
    def saturated(self) -> bool:
        """Every slot is taken and runs are already waiting for one."""
        return self.running >= self.limit and self.queued > 0


async def acquire_worker(pool: WorkerPool, wait_s: float, timeout_ms: int) -> WorkerProcess:
    """A warm worker within ``wait_s``; ``TooManyRequests`` when none turns up."""
    try:
        async with asyncio.timeout(max(0.0, wait_s)):
            return await pool.acquire()
    except TimeoutError:
        raise _busy(timeout_ms, "No worker is ready") from None
