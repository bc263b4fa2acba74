"""Runs, cluster-wide: every node sees every run in flight, and any node may stop one.

Used when the hub database is a server (PostgreSQL, MariaDB, SQL Server) the nodes
share; a hub on the embedded SQLite file is one node and keeps its runs to itself.

* :meth:`ClusterRuns.enter` writes the run's row before the engine is handed the run,
  so its code never starts unrecorded: a node killed at any moment leaves the row,
  and the row becomes an ``interrupted`` history record (on the node's own restart,
  or on another node once the node's heartbeat is overdue). While the hub database
  does not answer heartbeats, runs go on without rows rather than wait on it.
* A run's row goes shortly after it ends: ended runs are deleted together on the
  next tick (at most ``poll_s`` later), one statement for all of them.
* A stop asked on another node marks the row and, where the database pushes
  notifications, says so on ``webhub_run_stop``: the owner stops the run at once.
  Elsewhere (and after its listener reconnects) the owner looks for marks on each
  tick while it has runs in flight.
* After each heartbeat, dead nodes are looked for; one node takes each over (a
  compare-and-set on its node row) and marks its runs ``interrupted`` when history
  is shared (``sql`` or ``mongo``); a node's ``local`` history only it can mend.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from hub.cluster.nodes import SWEPT, NodeRegistry
from hub.cluster.registry import STOP_CHANNEL, LiveRun, RunsStore
from hub.history.record import RunRecord
from shared.errors import Conflict, StoreUnavailable

__all__ = ["POLL_S", "ClusterRuns", "Interrupter"]

log = logging.getLogger("webhub.cluster")
POLL_S = 1.0
# Marks a node's runs interrupted in history: (node, its runs the registry holds) -> count.
Interrupter = Callable[[str, Sequence[RunRecord]], int]


class ClusterRuns:
    def __init__(self, store: RunsStore, nodes: NodeRegistry, *, stop: Callable[[str], bool],
                 interrupt: Interrupter, history_shared: bool) -> None:
        self.store = store
        self.nodes = nodes
        self.node = nodes.node
        self.poll_s = min(POLL_S, nodes.interval_s)
        self._stop = stop
        self._interrupt = interrupt
        self._history_shared = history_shared
        self._entered: dict[str, LiveRun] = {}  # this node's runs with a row
        self._ended: list[str] = []        # their rows to delete on the next tick
        self._stopping: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        self._warned = False
        self._listener: Any = None
        self._look_for_stops = True  # False while a listener is told of every stop
        nodes.every_beat(self.sweep_dead)
        nodes.on_rejoin(self._enter_again)

    # -- a run's life -------------------------------------------------------------------

    async def enter(self, run: LiveRun) -> None:
        """The run's row, written before its code may start."""
        if not self.nodes.reachable:
            return
        try:
            await asyncio.to_thread(self.store.enter, run)
        except (StoreUnavailable, Conflict) as exc:
            if not self._warned:
                log.info("run %s not in the cluster's registry (%s); it runs on", run.job_id,
                         exc.message)
            self._warned = True
            return
        self._warned = False
        self._entered[run.job_id] = run

    def leave(self, job_id: str) -> None:
        if self._entered.pop(job_id, None) is not None:
            self._stopping.discard(job_id)
            self._ended.append(job_id)

    # -- what other nodes ask of the cluster ---------------------------------------------

    def in_flight(self) -> list[LiveRun]:
        """Every live node's runs (a worker thread: it reads the database)."""
        return self.store.in_flight(time.time() - self.nodes.timeout_s)

    def request_stop(self, job_id: str) -> str | None:
        """Pass a stop on to the run's node; its name, or None when no live node runs it."""
        now = time.time()
        return self.store.request_stop(job_id, now, now - self.nodes.timeout_s)

    # -- the node's own loop ---------------------------------------------------------------

    async def start(self) -> None:
        """This node's leftovers from a start that did not end cleanly become
        ``interrupted`` (before any run of this start), then the ticks begin."""
        try:
            await asyncio.to_thread(self.sweep, self.node)
        except StoreUnavailable as exc:
            log.info("node %s: earlier runs not checked at start (%s)", self.node, exc.message)
        self._task = asyncio.create_task(self._tick_loop(), name=f"cluster runs {self.node}")
        db = self.store.db
        if db.supports_notify:
            loop = asyncio.get_running_loop()

            def told(channel: str, job_id: str) -> None:  # on the listener's thread
                loop.call_soon_threadsafe(self._stop_here, job_id)

            self._listener = db.listen([STOP_CHANNEL], told, self._resync)

    def _resync(self) -> None:
        """The listener (re)connected: stops sent meanwhile are looked for once."""
        self._look_for_stops = True

    def _stop_here(self, job_id: str) -> None:
        if job_id in self._entered and job_id not in self._stopping and self._stop(job_id):
            self._stopping.add(job_id)
            log.info("run %s stopped at the request of another node", job_id)

    async def close(self) -> None:
        if self._listener is not None:
            await asyncio.to_thread(self._listener.close)
            self._listener = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        ended, self._ended = self._ended + list(self._entered), []
        if ended:
            with contextlib.suppress(StoreUnavailable):
                await asyncio.to_thread(self.store.leave, ended)

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)
            ended, self._ended = self._ended, []
            try:
                stops = await asyncio.to_thread(self._tick, ended)
            except Exception as exc:  # tried again next tick
                self._ended[:0] = ended
                if not isinstance(exc, StoreUnavailable):
                    log.exception("node %s: the cluster's run registry failed", self.node)
                continue
            for job_id in stops:
                self._stop_here(job_id)

    def _tick(self, ended: Sequence[str]) -> list[str]:
        if ended:
            self.store.leave(ended)
        if not self._entered:
            return []
        if self._listener is not None:  # told of each stop; looked for after a resync
            if not self._look_for_stops:
                return []
            self._look_for_stops = False
        return self.store.stops_for(self.node)

    def _enter_again(self) -> None:
        """Taken for dead while it stalled, this node joined again: its runs still in
        flight (swept by the node that took over) are put back in the registry."""
        for run in list(self._entered.values()):
            with contextlib.suppress(Conflict):
                self.store.enter(run)

    # -- dead nodes ------------------------------------------------------------------------

    def sweep_dead(self) -> None:
        """Take over each dead node this node wins (after a heartbeat, in its thread)."""
        for dead in self.nodes.dead_nodes():
            if dead.node == self.node or not self.nodes.store.take_over(dead, self.node):
                continue
            marked = self.sweep(dead.node) if self._history_shared else 0
            self.nodes.store.forget(dead.node, f"{SWEPT}{self.node}")
            log.warning("node %s stopped beating %.0f s ago: taken for dead, %d of its runs "
                        "marked interrupted", dead.node, time.time() - dead.beat, marked)

    def sweep(self, node: str) -> int:
        """``node``'s runs in history and the registry become ``interrupted``; how many."""
        leftovers = self.store.of_node(node)
        marked = self._interrupt(node, [run.as_record() for run in leftovers])
        if leftovers:
            self.store.leave([run.job_id for run in leftovers])
        return marked
