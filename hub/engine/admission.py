"""What a run that finds no place in time is told: ``TooManyRequests`` (SYS-429).
A run never waits without bound, even when every worker is dead or still starting
(the places themselves are the pool's, ``pool.WorkerPool.place``)."""

from __future__ import annotations

from shared.errors import TooManyRequests


def busy(timeout_ms: int, what: str) -> TooManyRequests:
    return TooManyRequests(f"{what} on this node; try again shortly",
                           retry_after=max(1, timeout_ms // 1000))
