"""``GET /health``'s answer: whether this node could run a job now, and its workers."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Health"]


@dataclass(frozen=True)
class Health:
    """Always a 200; ``ok`` false while no worker can be had (``problem`` says why)."""

    ok: bool
    node: str
    workersRunning: int  # worker processes holding runs now
    workersQueued: int  # runs waiting for a place
    workersMax: int  # worker processes that may hold runs at once (WEBJOB_MAX_CONCURRENT)
    workers: int  # worker processes alive or starting
    idle: int  # of those, ready and holding no run
    starting: int  # being started (a replacement, or the pool filling)
    problem: str | None = None  # only while not ok
    runsInFlight: int = 0  # runs on workers now (several can share one worker)
    runsPerWorker: int = 1  # runs one worker serves at once (WEBJOB_RUNS_PER_WORKER)
