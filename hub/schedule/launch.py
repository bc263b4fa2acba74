"""Launching the occurrences a scheduler claimed: the checks after the claim (still
enabled, not superseded, not overlapping), the lease and the run row, the run itself
with its lease renewed, and what follows it (the row's outcome, the retry policy).
Kept apart from the loop (:mod:`hub.schedule.scheduler`), which this is the base of,
with the state and the helpers both share (store calls, warnings, tasks).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from hub.schedule.model import Schedule
from hub.schedule.store import OpenRun, ScheduleStore
from hub.schedule.timing import (
    DB_DOWN,
    Clock,
    Due,
    Entry,
    Firing,
    Missed,
    Timeline,
    retry_delay,
)
from shared.errors import StoreUnavailable, WebJobsError

__all__ = ["LEASE_S", "OVERLAPPED", "SKIP_WINDOW_S", "FireFn", "Item", "Launcher", "MissedFn"]

log = logging.getLogger("webhub.schedule")
T = TypeVar("T")

OVERLAPPED = "the previous run was still going"
LEASE_S = 30.0
SKIP_WINDOW_S = 3600.0         # occurrences skipped for overlap: one record per window

FireFn = Callable[[Schedule, Firing], Awaitable[str]]
MissedFn = Callable[[Schedule, Missed], None]
Item = tuple[float, int, int, str, int]      # due, token, schedule id, run|retry, attempt
_Start = tuple[Schedule, Firing, str]        # row, firing, claim key


class Launcher:
    """The scheduler's state and its launching half (see the module doc)."""

    def __init__(self, store: ScheduleStore, fire: FireFn, missed: MissedFn, node: str,
                 clock: Clock, *, new_id: Callable[[], str], lease_s: float) -> None:
        self.store = store
        self.fire = fire
        self.missed = missed
        self.node = node
        self.new_id = new_id
        self.clock = clock
        self.lease_s = lease_s
        self.timeline = Timeline(clock.now())
        self._entries: dict[int, Entry] = {}
        self._heap: list[Item] = []
        self._tokens = itertools.count()
        self._running: dict[int, int] = {}           # schedule id -> runs going here
        self._tasks: set[asyncio.Task[None]] = set()
        self._job_tasks: set[asyncio.Task[Any]] = set()
        self.live_runs: set[str] = set()             # history ids of the runs going here
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()
        self._busy = 0
        self._warned: set[tuple[object, str]] = set()

    @property
    def entries(self) -> dict[int, Entry]:
        return self._entries

    def _poke(self) -> None:
        # Wakes every wait_idle; a fresh event for the next change.
        self._changed.set()
        self._changed = asyncio.Event()

    def set_retry(self, entry: Entry, want: tuple[float, int] | None) -> None:
        entry.retry = want
        if want is not None:
            heapq.heappush(self._heap, (want[0], next(self._tokens), entry.schedule.id,
                                        "retry", want[1]))
            self._wake.set()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        self._busy += 1
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._busy -= 1
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.warn(("task", type(exc).__name__), "Scheduler task failed: %r", exc)
        self._poke()

    async def call_store(self, what: str, call: Callable[..., T], *args: Any) -> T | None:
        """A store call off the event loop; None (logged once) when the store fails."""
        try:
            done = await asyncio.to_thread(call, *args)
        except WebJobsError as exc:
            if isinstance(exc, StoreUnavailable):
                self.timeline.store_failed()
            self.warn(("store", what), "Schedule store failed (%s): %s", what, exc)
            return None
        self.timeline.store_ok(self.clock.now())
        self._warned.discard(("store", repr((what,))))   # a new failure is told again
        return done

    async def launch(self, mine: list[Due]) -> None:
        """Run the claimed ``mine``: each whose row (read again) is still enabled, and
        not overlapping under ``overlap: skip``. A claim won that cannot go on because
        the store failed meanwhile is reported, never left silent."""
        rows = await self.call_store("get", self.store.get_many, [d.sid for d in mine])
        starts: list[_Start] = []
        for d in mine:
            if rows is None:
                self._report_one(d, DB_DOWN)
                continue
            row = rows.get(d.sid)
            if row is None or not row.enabled:
                continue   # switched off or deleted: never run blind
            if d.reason == "retry" and (row.retry_at, row.retry_attempt) != (d.t, d.attempt):
                continue   # superseded (a newer run succeeded or failed meanwhile)
            if row.overlap == "skip" and self._running.get(d.sid):
                self._spawn(self._skipped(row, d.t))
                continue
            self._running[d.sid] = self._running.get(d.sid, 0) + 1   # now: same batch
            starts.append((row, Firing(d.t, d.attempt, d.reason, self.new_id()), d.key))
        if starts:
            await self._begin(starts)

    def _report_one(self, d: Due, reason: str) -> None:
        entry = self._entries.get(d.sid)
        if entry is not None:
            self.report(entry.schedule, Missed(d.t, d.t, 1, reason))

    def _prepare(self, starts: list[_Start]) -> set[int]:
        """In a thread: take the leases of ``overlap: skip`` runs and note the runs as
        going on; the schedule ids another node holds the lease of."""
        until = self.clock.now() + self.lease_s
        wanted = [row.id for row, _, _ in starts if row.overlap == "skip"]
        held = set(wanted) - self.store.take_leases(wanted, self.node, until)
        self.store.begin_runs([OpenRun(row.id, key, self.node, f.occurrence, f.attempt,
                                       f.reason, f.job_id)
                               for row, f, key in starts if row.id not in held])
        return held

    async def _begin(self, starts: list[_Start]) -> None:
        held = await self.call_store("lease", self._prepare, starts)
        for row, firing, key in starts:
            if held is None:
                self._ran(row.id)
                self.report(row, Missed(firing.occurrence, firing.occurrence, 1, DB_DOWN))
            elif row.id in held:
                self._ran(row.id)
                self._spawn(self._skipped(row, firing.occurrence))
            else:
                self.live_runs.add(firing.job_id)
                self._spawn(self._run_job(row, firing, key))

    async def _skipped(self, row: Schedule, t: float) -> None:
        """An occurrence skipped for overlap, counted into its window's one record."""
        counted = await self.call_store("skip", self.store.count_skip, row.id, t,
                                        SKIP_WINDOW_S)
        if counted is None:
            self.report(row, Missed(t, t, 1, OVERLAPPED))
            return
        first, count = counted
        self.report(row, Missed(first, t, count, OVERLAPPED,
                                record_id=f"job_{int(first * 1000)}skip{row.id}"))

    def _ran(self, sid: int) -> None:
        self._running[sid] -= 1
        if not self._running[sid]:
            del self._running[sid]

    async def _run_job(self, row: Schedule, firing: Firing, key: str) -> None:
        task = asyncio.current_task()
        assert task is not None
        # A job task (with the recording of its outcome) is what stop() lets finish.
        self._job_tasks.add(task)
        leased = row.overlap == "skip"
        keeper = asyncio.create_task(self._keep_lease(row.id)) if leased else None
        try:
            try:
                outcome = await self._fire(row, firing)
            finally:
                if keeper is not None:
                    keeper.cancel()
            await self._after_run(row, firing, key, outcome)
        finally:
            self._job_tasks.discard(task)
            self.live_runs.discard(firing.job_id)

    async def _keep_lease(self, sid: int) -> None:
        while True:
            await self.clock.sleep_until(self.clock.now() + self.lease_s / 3)
            kept = await self.call_store("lease", self.store.renew_lease, sid, self.node,
                                         self.clock.now() + self.lease_s)
            if kept is False:
                self.warn((sid, "lease"), "Schedule %d: node %s lost its lease while the "
                           "run went on (another node may start the next)", sid, self.node)

    async def _fire(self, row: Schedule, firing: Firing) -> str:
        sid = row.id
        self._busy -= 1          # the job's own time is not the scheduler's work
        self._poke()
        try:
            return await self.fire(row, firing)
        except Exception as exc:
            self.warn((sid, "fire"), "Schedule %d could not run job %s: %r", sid,
                       row.job_name, exc)
            return "failed"
        finally:
            self._busy += 1
            self._ran(sid)

    def _end_round(self, row: Schedule, firing: Firing, key: str, outcome: str) -> bool:
        """In a thread: the run's row away, its outcome in the schedule's row; False
        when another node took the run over (it found this node dead)."""
        mine = self.store.end_run(row.id, key, self.node)
        self.store.record_fire(row.id, firing.occurrence, outcome)
        return mine

    async def _after_run(self, row: Schedule, firing: Firing, key: str, outcome: str) -> None:
        mine = await self.call_store("record", self._end_round, row, firing, key, outcome)
        if mine is False:
            return   # reported interrupted elsewhere, and retried by that node's rules
        await self.apply_retry_policy(row, firing.attempt, outcome)

    async def apply_retry_policy(self, row: Schedule, attempt: int, outcome: str) -> None:
        """After attempt ``attempt`` of ``row`` ended in ``outcome``: a pending retry
        cleared, or the next one set (in the row, for any node, and here)."""
        entry = self._entries.get(row.id)
        if outcome == "success":
            if attempt or row.retry_at is not None:
                await self.call_store("retry", self.store.set_retry, row.id, None, 0)
                if entry is not None:
                    entry.retry = None
            return
        following = attempt + 1
        if following > row.max_retries:
            if attempt:
                await self.call_store("retry", self.store.set_retry, row.id, None, 0)
            return
        # Whole seconds: the time is compared after a round trip through any database.
        at = float(math.ceil(self.clock.now() + retry_delay(following)))
        await self.call_store("retry", self.store.set_retry, row.id, at, following)
        if entry is not None:
            self.set_retry(entry, (at, following))

    def report(self, row: Schedule, missed: Missed) -> None:
        try:
            self.missed(row, missed)
        except Exception as exc:
            self.warn((row.id, "missed"), "Schedule %d: a missed run could not be recorded: "
                       "%r", row.id, exc)

    def warn(self, key: tuple[object, ...], message: str, *args: object) -> None:
        """Log a problem once at WARNING; the same problem again only at DEBUG."""
        mark = (key[0], repr(key[1:]))
        level = logging.DEBUG if mark in self._warned else logging.WARNING
        self._warned.add(mark)
        log.log(level, message, *args)
