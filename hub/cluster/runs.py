"""Runs, cluster-wide: every node sees every run in flight, and any node may stop one.

Used when the hub database is a server (PostgreSQL, MariaDB, SQL Server) the nodes
share; a hub on the embedded SQLite file is one node and keeps its runs to itself.

* While other nodes are alive, :meth:`ClusterRuns.enter` writes a run's row before
  the engine is handed the run, so its code never starts unrecorded: a node killed
  at any moment leaves the row, and the row becomes an ``interrupted`` history
  record (on the node's own restart, or on another node once the node's heartbeat
  is overdue). A node alone writes no rows (nobody else could list, stop or mend its
  runs; its own restart marks what history shows ``running``): it learns of a
  joining node at the next heartbeat, at once where the database pushes
  notifications (``webhub_node_joined``), and then writes rows for the runs it has
  in flight. While the hub database does not answer heartbeats, runs go on without
  rows rather than wait on it.
* A run's row goes shortly after it ends: ended runs are deleted together by the
  next run's row (on PostgreSQL, in its statement) or on the next tick (at most
  ``poll_s`` later), one statement for all of them. A run given up while its row is
  being written (a client gone) has the row deleted once that statement is over.
* On PostgreSQL a public request's rate-limit hit writes its run's row (and the ended
  rows' deletes) in its own statement as the request is admitted
  (:meth:`ClusterRuns.admit`); a request refused leaves no row, one whose run never
  comes has its row deleted like an ended run's (never before that statement is over).
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
import functools
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from hub.cluster.nodes import JOIN_CHANNEL, SWEPT, NodeEntry, NodeRegistry
from hub.cluster.registry import STOP_CHANNEL, LiveRun, RunsStore
from hub.history.record import RunRecord
from hub.store.limits_store import CarryingHit
from shared.errors import StoreUnavailable

__all__ = ["POLL_S", "CarryingHit", "ClusterRuns", "Interrupter"]

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
        self._runs: dict[str, LiveRun] = {}  # this node's runs in flight
        self._written: set[str] = set()      # those with a row (or one being written)
        self._ended: list[str] = []          # rows to delete on the next tick
        # rows written as their public hit was counted, whose statement is not over
        self._landing: dict[str, asyncio.Future[tuple[bool, float]]] = {}
        self._stopping: set[str] = set()
        self.shared = False        # other nodes are alive: runs get their rows
        self._catch_up = False     # runs in flight without a row get theirs next tick
        self._rewrite = False      # every run in flight gets its row again next tick
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._warned = False
        self._listener: Any = None
        self._look_for_stops = True  # False while a listener is told of every stop
        self._away = False  # the listener lost its connection and is not back yet
        nodes.every_beat(self.look_around)
        nodes.on_rejoin(self._rejoined)

    # -- a run's life -------------------------------------------------------------------

    async def enter(self, run: LiveRun) -> None:
        """The run's row, written before its code may start, while other nodes are alive
        (a node alone writes none: nobody else could list, stop or mend its runs)."""
        self._runs[run.job_id] = run
        if not (self.shared and self.nodes.reachable):
            return
        self._written.add(run.job_id)
        ended, self._ended = self._ended, []
        writing = asyncio.ensure_future(asyncio.to_thread(self.store.enter, [run], ended))
        try:
            await asyncio.shield(writing)
        except StoreUnavailable as exc:
            self._ended[:0] = ended
            self._written.discard(run.job_id)
            if not self._warned:
                log.info("run %s not in the cluster's registry (%s); it runs on", run.job_id,
                         exc.message)
            self._warned = True
            return
        except asyncio.CancelledError:
            # The statement goes on in its thread: a DELETE queued now could run before
            # the INSERT commits, and leave the row behind for good.
            writing.add_done_callback(functools.partial(self._given_up, run.job_id, ended))
            raise
        self._warned = False

    def _given_up(self, job_id: str, ended: Sequence[str],
                  writing: asyncio.Future[None]) -> None:
        """The write of a run given up meanwhile is over: its row goes (and, when the
        write failed, the ended rows it carried)."""
        if writing.cancelled() or writing.exception() is not None:
            self._ended[:0] = ended
        self.leave(job_id)

    @property
    def carries_rows(self) -> bool:
        """Whether a public run's row may go in its rate-limit hit's statement now."""
        return self.shared and self.nodes.reachable and self.store.carries

    async def admit(self, run: LiveRun, hit: CarryingHit) -> bool:
        """``hit`` counted in one statement with ``run``'s row (written only when it is
        counted) and the ended rows' deletes. True: the row is written, or may still be
        landing (its delete waits for that); False: the statement failed, no row (the
        run writes it as it starts). Refused: ``TooManyRequests`` and no row."""
        job_id = run.job_id
        ended, self._ended = self._ended, []
        try:
            writing = hit.start(self.store.entry_steps(run, ended))
        except BaseException:  # nothing sent: no row, the ended rows still to delete
            self._ended[:0] = ended
            raise
        self._runs[job_id] = run
        self._written.add(job_id)
        self._landing[job_id] = writing
        writing.add_done_callback(functools.partial(self._landed, job_id, ended))
        try:
            counted = await hit.settle(writing)
        except BaseException:  # refused or given up: the run never starts
            self.leave(job_id)
            raise
        return counted or not writing.done()

    def _landed(self, job_id: str, ended: Sequence[str],
                writing: asyncio.Future[tuple[bool, float]]) -> None:
        """A hit's statement is over. Refused, it wrote no row. Failed, it may still
        have landed before its connection was lost: its ended rows, and its own row
        once the run leaves, are deleted (again) later."""
        self._landing.pop(job_id, None)
        if writing.cancelled() or writing.exception() is not None:
            self._ended[:0] = ended
        elif not writing.result()[0]:
            self._written.discard(job_id)

    def leave(self, job_id: str) -> None:
        self._runs.pop(job_id, None)
        self._stopping.discard(job_id)
        landing = self._landing.get(job_id)
        if landing is not None:  # a DELETE sent now could run before that INSERT lands
            landing.add_done_callback(lambda _: self.leave(job_id))
        elif job_id in self._written:
            self._written.discard(job_id)
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
            await asyncio.to_thread(self._first_look)
        except StoreUnavailable as exc:
            log.info("node %s: earlier runs not checked at start (%s)", self.node, exc.message)
        self._task = asyncio.create_task(self._tick_loop(), name=f"cluster runs {self.node}")
        db = self.store.db
        if db.supports_notify:
            loop = asyncio.get_running_loop()

            def told(channel: str, payload: str) -> None:  # on the listener's thread
                loop.call_soon_threadsafe(self._told, channel, payload)

            self._listener = db.listen([STOP_CHANNEL, JOIN_CHANNEL], told, self._resync,
                                       on_lost=self._lost)

    def _first_look(self) -> None:
        self.sweep(self.node)
        self.look_around()

    def _told(self, channel: str, payload: str) -> None:
        if channel == STOP_CHANNEL:
            self._stop_here(payload)
        elif payload != self.node and not self.shared:  # a node joined: not alone now
            self.shared = self._catch_up = True
            self._wake.set()

    def _resync(self) -> None:
        """The listener (re)connected: stops sent meanwhile are looked for once."""
        self._away = False
        self._look_for_stops = True

    def _lost(self) -> None:
        """The listener lost its connection (pooled ones may still work): stops are
        looked for at every tick until it is back."""
        self._away = True

    def _rejoined(self) -> None:
        self._rewrite = True

    def _stop_here(self, job_id: str) -> None:
        if job_id in self._runs and job_id not in self._stopping and self._stop(job_id):
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
        ended, self._ended = self._ended + list(self._written), []
        if ended:
            with contextlib.suppress(StoreUnavailable):
                await asyncio.to_thread(self.store.leave, ended)

    async def _tick_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            self._wake.clear()
            ended, self._ended = self._ended, []
            missing = self._missing_rows()
            try:
                stops = await asyncio.to_thread(self._tick, ended, missing)
            except Exception as exc:  # tried again next tick
                self._ended[:0] = ended
                self._written.difference_update(run.job_id for run in missing)
                self._catch_up = True
                if not isinstance(exc, StoreUnavailable):
                    log.exception("node %s: the cluster's run registry failed", self.node)
                continue
            for job_id in stops:
                self._stop_here(job_id)

    def _missing_rows(self) -> list[LiveRun]:
        """Runs in flight to write rows for now (on the loop: a run that ends while they
        are written has its row deleted on a later tick). Not a run whose hit is still
        landing: that statement writes its row only if the hit is counted, and a refused
        one's run leaves with no delete sent."""
        if self._rewrite:
            self._rewrite = False
            missing = [run for run in self._runs.values() if run.job_id not in self._landing]
        elif self._catch_up and self.shared:
            self._catch_up = False
            missing = [run for run in self._runs.values() if run.job_id not in self._written]
        else:
            return []
        self._written.update(run.job_id for run in missing)
        return missing

    def _tick(self, ended: Sequence[str], missing: Sequence[LiveRun]) -> list[str]:
        if missing:
            self.store.enter(missing, ended)
        elif ended:
            self.store.leave(ended)
        if not self._written:
            return []
        if self._listener is not None and not self._away:  # told of each stop
            if not self._look_for_stops:
                return []
            self._look_for_stops = False
        return self.store.stops_for(self.node)

    # -- the other nodes -------------------------------------------------------------------

    def look_around(self) -> None:
        """After each heartbeat (in its thread): whether other nodes are alive, and each
        dead node this node wins taken over."""
        now, timeout = time.time(), self.nodes.timeout_s
        entries = self.nodes.store.nodes()
        shared = any(n.node != self.node and n.alive(now, timeout) and not n.swept
                     for n in entries)
        if shared and not self.shared:
            self._catch_up = True
        self.shared = shared
        for dead in entries:
            if dead.node != self.node and not dead.alive(now, timeout):
                self._take_over(dead)

    def _take_over(self, dead: NodeEntry) -> None:
        if not self.nodes.store.take_over(dead, self.node):
            return
        swept_by = f"{SWEPT}{self.node}"
        marked = 0
        if self._history_shared:
            # Only while the mark holds: a stalled node that joins again meanwhile
            # writes its rows anew, and those are its runs going on.
            leftovers = self.store.of_swept_node(dead.node, swept_by)
            marked = self._interrupt(dead.node, [run.as_record() for run in leftovers])
            if leftovers:
                self.store.leave_swept(dead.node, swept_by, [r.job_id for r in leftovers])
        self.nodes.store.forget(dead.node, swept_by)
        log.warning("node %s stopped beating %.0f s ago: taken for dead, %d of its runs "
                    "marked interrupted", dead.node, time.time() - dead.beat, marked)

    def sweep(self, node: str) -> int:
        """``node``'s runs in history and the registry become ``interrupted``; how many."""
        leftovers = self.store.of_node(node)
        marked = self._interrupt(node, [run.as_record() for run in leftovers])
        if leftovers:
            self.store.leave([run.job_id for run in leftovers])
        return marked
