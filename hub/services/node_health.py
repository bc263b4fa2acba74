"""This node's workers as the management routes see them: ``/health``'s answer and
which jobs run here now."""

from __future__ import annotations

from dataclasses import dataclass

from hub.engine.engine import Engine
from shared.wire.health import Health

__all__ = ["NO_WORKER", "NodeHealth", "RunSlots"]

NO_WORKER = "no worker can be had: every slot is busy or no worker is running"


@dataclass(frozen=True)
class RunSlots:
    """This node's run slots now (``/metrics`` shows them)."""

    running: int  # runs in a slot
    queued: int   # runs waiting for one
    most: int     # slots there are (WEBJOB_MAX_CONCURRENT)


class NodeHealth:
    def __init__(self, engine: Engine, node: str) -> None:
        self.engine = engine
        self.node = node

    async def health(self, wait_s: float) -> Health:
        """``ok``: a worker can be had within ``wait_s`` (false while every one is dead
        or starting, or every slot is taken with runs already queued)."""
        ready = await self.engine.ready(wait_s)
        counts = self.engine.metrics()
        return Health(ok=ready, node=self.node, workersRunning=counts["workersRunning"],
                      workersQueued=counts["workersQueued"], workersMax=counts["workersMax"],
                      workers=counts["workers"], idle=counts["idle"],
                      starting=counts["starting"], problem=None if ready else NO_WORKER,
                      runsInFlight=counts["runsInFlight"], runsPerWorker=counts["runsPerWorker"])

    def slots(self) -> RunSlots:
        counts = self.engine.metrics()
        return RunSlots(counts["workersRunning"], counts["workersQueued"],
                        counts["workersMax"])

    def running_here(self) -> set[str]:
        """The names of the jobs this node runs now."""
        return {run.job_name for run in self.engine.running()}
