"""``GET /health``'s answer: whether this node could run a job now, and its workers."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Health"]


@dataclass(frozen=True)
class Health:
    """Always a 200; ``ok`` false while no worker can be had (``problem`` says why)."""

    ok: bool
    node: str
    workersRunning: int  # runs holding a slot now
    workersQueued: int  # runs waiting for a slot
    workersMax: int  # slots (WEBJOB_MAX_CONCURRENT)
    workers: int  # worker processes alive or starting
    idle: int  # of those, ready for a run
    starting: int  # being started (a replacement, or the pool filling)
    problem: str | None = None  # only while not ok
