"""The scheduler: fires each enabled schedule's occurrences, once per cluster.

One loop task per node keeps a heap of ``(due, token, schedule id, kind, attempt)``
and sleeps until the earliest due instant (not a poll), or until something changes
the heap. Everything slow happens in tasks of their own: the occurrences due at one
instant are claimed together (one commit) and their rows read again in one query by
one task, and each claimed run is a task of its own. The table is read again every
``refresh_s`` to pick up what other nodes created, changed or switched off.

Once per cluster
    Every node that finds an occurrence due INSERTs a claim keyed by the occurrence's
    UTC time (``2026-11-29T10:00:00Z``; retries ``...Z#retry2``; the summary of many
    missed ones ``...Z#missed``). Only the node whose INSERT lands goes on; a store
    that cannot be reached means the occurrence is not fired (never unclaimed).

Stopping a schedule
    The row is read again after the claim: switched off or deleted on any node, it
    fires no more, even before this node's next refresh.

Overlap
    ``skip`` is judged on the claiming node: when this node is still running the
    schedule's previous run, it takes the claim (so no other node runs it) and
    reports the occurrence missed. A run still going on ANOTHER node is not seen;
    that would need a lease in the row. ``allow`` runs side by side.

Retries
    A failed run with retries left is retried 30 s later, doubling each attempt, at
    most 24 h apart. ``RetryAt``/``RetryAttempt`` in the row keep it over a restart
    (or for any node); one already due fires at once. A success clears it.

Missed occurrences
    When this node first sees a schedule (start, reload, a refresh finding a new or
    retimed one), and when its own loop fell behind (a suspended machine), the
    occurrences from the row's ``NextRun`` up to ``grace_s`` ago that nobody claimed
    were missed by the whole cluster. Each one this node claims is reported (the first
    100, then one summary); with catch-up ``one`` the latest is run instead. Newer
    ones (within the grace) are run late rather than reported: a live node may be
    claiming them right now, and the claim settles who. The grace is at least two
    refresh periods, so a schedule made on another node is never "missed" merely
    because this node read it a refresh later.

Stopping
    :meth:`stop` ends the loop and the scheduler's own work at once; jobs already
    running are given ``drain_s`` to finish (their outcome is recorded), then
    cancelled.
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
from hub.schedule.store import ScheduleStore
from hub.schedule.timing import (
    HUB_DOWN,
    Clock,
    Due,
    Entry,
    Firing,
    SystemClock,
    cached_cron,
    first_from,
    missed_summary,
    next_after,
    occurrence_key,
    plan_missed,
    retry_delay,
)
from shared.errors import WebJobsError

__all__ = ["HUB_DOWN", "OVERLAPPED", "Clock", "Firing", "Scheduler", "SystemClock"]

log = logging.getLogger("webhub.schedule")
T = TypeVar("T")

OVERLAPPED = "the previous run was still going"
GRACE_S = 5.0
DRAIN_S = 30.0
APPLY_SLICE = 500             # schedules adopted between turns of the event loop
CATCH_UP_PARALLEL = 4          # the database pool's size: more would only queue
PRUNE_EVERY_S = 3600.0
CLAIM_KEEP_S = 7 * 86400.0     # far beyond any grace or refresh: a live node never asks

FireFn = Callable[[Schedule, Firing], Awaitable[str]]
MissedFn = Callable[[Schedule, float, str], None]
_Item = tuple[float, int, int, str, int]     # due, token, schedule id, run|retry, attempt


class Scheduler:
    """``fire(schedule, firing)`` runs the job and returns its outcome ("success";
    anything else counts as failed); ``missed(schedule, time, reason)`` records an
    occurrence that did not run. Both are called on the event loop, so ``missed``
    must be quick. ``node`` names this hub in claims; ``clock`` is faked by tests."""

    def __init__(self, store: ScheduleStore, fire: FireFn, missed: MissedFn, node: str,
                 clock: Clock | None = None, refresh_s: float = 5.0, *,
                 grace_s: float | None = None, drain_s: float = DRAIN_S) -> None:
        self.store = store
        self.fire = fire
        self.missed = missed
        self.node = node
        self.clock: Clock = clock or SystemClock()
        self.refresh_s = refresh_s
        self.grace_s = max(GRACE_S, 2 * refresh_s) if grace_s is None else grace_s
        self.drain_s = drain_s
        self._entries: dict[int, Entry] = {}
        self._heap: list[_Item] = []
        self._tokens = itertools.count()
        self._running: dict[int, int] = {}           # schedule id -> runs going here
        self._tasks: set[asyncio.Task[None]] = set()
        self._job_tasks: set[asyncio.Task[Any]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()
        self._busy = 0
        self._asleep_until: float | None = None
        self._next_refresh = 0.0
        self._next_prune = 0.0
        self._warned: set[tuple[object, str]] = set()
        self._catch_up_slots = asyncio.Semaphore(CATCH_UP_PARALLEL)

    # -- life cycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Load the enabled schedules and start the loop. A store that is down now is
        logged and tried again at each refresh."""
        if self._loop_task is not None:
            return
        try:
            await self.reload()
        except WebJobsError as exc:
            self._warn(("store", "reload"), "Schedules could not be loaded: %s", exc)
        self._next_refresh = self.clock.now() + self.refresh_s
        self._loop_task = asyncio.create_task(self._loop(), name=f"scheduler-{self.node}")

    async def reload(self) -> int:
        """Read the enabled schedules now; how many this node schedules."""
        rows = await asyncio.to_thread(self.store.list_schedules, True)
        await self._apply(rows, self.clock.now())
        return len(self._entries)

    async def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
            self._loop_task = None
        for task in self._tasks - self._job_tasks:
            task.cancel()
        if self._job_tasks:
            await asyncio.wait(set(self._job_tasks), timeout=self.drain_s)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def status(self) -> list[dict[str, Any]]:
        return [{"id": e.schedule.id, "name": e.schedule.name, "job": e.schedule.job_name,
                 "cron": e.schedule.cron, "timezone": e.schedule.timezone,
                 "next": None if math.isinf(e.due) else e.due,
                 "retryAt": e.retry[0] if e.retry else None,
                 "running": self._running.get(sid, 0) > 0}
                for sid, e in sorted(self._entries.items())]

    async def wait_idle(self) -> None:
        """Return once the loop sleeps with nothing due and no work of the scheduler's
        own is under way (jobs inside ``fire`` do not count). For tests and benches."""
        while not self._idle():
            await self._changed.wait()

    def _idle(self) -> bool:
        return (self._asleep_until is not None and self._asleep_until > self.clock.now()
                and not self._wake.is_set() and self._busy == 0)

    def _poke(self) -> None:
        # Wakes every wait_idle; a fresh event for the next change.
        self._changed.set()
        self._changed = asyncio.Event()

    # -- the schedules in memory -----------------------------------------------------

    async def _apply(self, rows: list[Schedule], now: float) -> None:
        seen: set[int] = set()
        for done, row in enumerate(rows, 1):
            if done % APPLY_SLICE == 0:
                self._wake.set()
                await asyncio.sleep(0)   # let due occurrences fire amid a big (re)load
            try:
                self._adopt(row, now)
                seen.add(row.id)
            except Exception as exc:   # one bad row (cron, zone, value) must not stop the rest
                self._warn((row.id, row.cron, row.timezone),
                           "Schedule %d (%s) is not scheduled: %s", row.id, row.name, exc)
        for sid in set(self._entries) - seen:
            del self._entries[sid]   # its heap items are skipped when they come up
        self._wake.set()

    def _adopt(self, row: Schedule, now: float) -> None:
        old = self._entries.get(row.id)
        if old is not None and (old.schedule.cron, old.schedule.timezone) == (row.cron,
                                                                                row.timezone):
            old.schedule = row
            self._sync_retry(old)
            return
        entry = Entry(row, cached_cron(row.cron, row.timezone))
        self._entries[row.id] = entry
        self._plan_from(entry, row.next_run, now)
        self._sync_retry(entry)

    def _plan_from(self, entry: Entry, start: float | None, now: float) -> None:
        """Schedule ``entry``'s occurrences from ``start``: the long-past ones are missed
        (handled by a catch-up task), the rest go on the heap."""
        cutoff = now - self.grace_s
        if start is None:
            self._push_run(entry, next_after(entry.cron, now))
        elif start <= cutoff:
            self._spawn(self._catch_up(entry.schedule.id, start, cutoff))
            self._push_run(entry, next_after(entry.cron, cutoff))
        else:
            self._push_run(entry, first_from(entry.cron, start))

    def _push_run(self, entry: Entry, due: float) -> None:
        entry.due, entry.run_token = due, next(self._tokens)
        heapq.heappush(self._heap, (due, entry.run_token, entry.schedule.id, "run", 0))

    def _sync_retry(self, entry: Entry) -> None:
        row = entry.schedule
        want = ((row.retry_at, row.retry_attempt)
                if row.retry_at is not None and row.retry_attempt > 0 else None)
        if want != entry.retry and want != entry.retry_taken:
            self._set_retry(entry, want)

    def _set_retry(self, entry: Entry, want: tuple[float, int] | None) -> None:
        entry.retry = want
        if want is not None:
            heapq.heappush(self._heap, (want[0], next(self._tokens), entry.schedule.id,
                                        "retry", want[1]))
            self._wake.set()

    # -- the loop -----------------------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            now = self.clock.now()
            self._take_due(now)
            if now >= self._next_refresh:
                self._next_refresh = now + self.refresh_s
                self._spawn(self._refresh())
            wake_at = min(self._heap[0][0] if self._heap else math.inf, self._next_refresh)
            await self._sleep(wake_at)

    async def _sleep(self, until: float) -> None:
        sleeper = asyncio.ensure_future(self.clock.sleep_until(until))
        waker = asyncio.ensure_future(self._wake.wait())
        self._asleep_until = until
        self._poke()
        try:
            await asyncio.wait((sleeper, waker), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._asleep_until = None
            sleeper.cancel()
            waker.cancel()

    def _take_due(self, now: float) -> None:
        due_now: list[Due] = []
        while self._heap and self._heap[0][0] <= now:
            due, token, sid, kind, attempt = heapq.heappop(self._heap)
            entry = self._entries.get(sid)
            if entry is None:
                continue
            try:
                self._take(entry, (due, token, sid, kind, attempt), now, due_now)
            except Exception as exc:   # e.g. a cron with no time left: drop, never stop
                self._warn((sid, "due"), "Schedule %d is not scheduled: %s", sid, exc)
                del self._entries[sid]
        if due_now:
            self._spawn(self._occur(due_now))

    def _take(self, entry: Entry, item: _Item, now: float, due_now: list[Due]) -> None:
        due, token, sid, kind, attempt = item
        if kind == "retry":
            if entry.retry == (due, attempt):
                entry.retry, entry.retry_taken = None, (due, attempt)
                due_now.append(Due(sid, due, attempt, "retry"))
        elif token != entry.run_token:
            return   # replaced by a newer plan for this schedule
        elif due < now - self.grace_s:
            # The loop itself fell behind (a suspended machine): as after downtime.
            self._plan_from(entry, due, now)
        else:
            due_now.append(Due(sid, due, 0, "scheduled"))
            self._push_run(entry, next_after(entry.cron, due))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        self._busy += 1
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._busy -= 1
        if not task.cancelled() and (exc := task.exception()) is not None:
            self._warn(("task", type(exc).__name__), "Scheduler task failed: %r", exc)
        self._poke()

    # -- one occurrence -------------------------------------------------------------

    async def call_store(self, what: str, call: Callable[..., T], *args: Any) -> T | None:
        """A store call off the event loop; None (logged once) when the store fails."""
        try:
            done = await asyncio.to_thread(call, *args)
        except WebJobsError as exc:
            self._warn(("store", what), "Schedule store failed (%s): %s", what, exc)
            return None
        self._warned.discard(("store", repr((what,))))   # a new failure is told again
        return done

    async def _occur(self, due: list[Due]) -> None:
        """Claim the occurrences due together in one go (one commit, not one each: a
        hundred due in the same second must all start well within it), read their
        rows again, and run each claimed one that is still enabled as a task."""
        won = await self.call_store("claim", self.store.claim_many,
                                [(d.sid, d.key) for d in due], self.node)
        if not won:
            return
        mine = [d for d in due if (d.sid, d.key) in won]
        rows = await self.call_store("get", self.store.get_many, [d.sid for d in mine])
        for d in mine:
            row = (rows or {}).get(d.sid)
            if row is None or not row.enabled:
                continue   # switched off or deleted (or unreadable): never run blind
            if d.reason == "retry" and (row.retry_at, row.retry_attempt) != (d.t, d.attempt):
                continue   # superseded (a newer run succeeded or failed meanwhile)
            if row.overlap == "skip" and self._running.get(d.sid):
                self._report(row, d.t, OVERLAPPED)
                continue
            self._spawn(self._run_job(row, Firing(d.t, d.attempt, d.reason)))

    async def _run_job(self, row: Schedule, firing: Firing) -> None:
        task = asyncio.current_task()
        assert task is not None
        # A job task (with the recording of its outcome) is what stop() lets finish.
        self._job_tasks.add(task)
        try:
            outcome = await self._fire(row, firing)
            await self._after_run(row, firing, outcome)
        finally:
            self._job_tasks.discard(task)

    async def _fire(self, row: Schedule, firing: Firing) -> str:
        sid = row.id
        self._running[sid] = self._running.get(sid, 0) + 1
        self._busy -= 1          # the job's own time is not the scheduler's work
        self._poke()
        try:
            return await self.fire(row, firing)
        except Exception as exc:
            self._warn((sid, "fire"), "Schedule %d could not run job %s: %r", sid,
                       row.job_name, exc)
            return "failed"
        finally:
            self._busy += 1
            self._running[sid] -= 1
            if not self._running[sid]:
                del self._running[sid]

    async def _after_run(self, row: Schedule, firing: Firing, outcome: str) -> None:
        entry = self._entries.get(row.id)
        nxt = next_after(entry.cron, firing.occurrence) if entry else None
        await self.call_store("record", self.store.record_fire, row.id, firing.occurrence, nxt,
                          outcome)
        if outcome == "success":
            if firing.attempt or row.retry_at is not None:
                await self.call_store("retry", self.store.set_retry, row.id, None, 0)
                if entry is not None:
                    entry.retry = None
            return
        attempt = firing.attempt + 1
        if attempt > row.max_retries:
            if firing.attempt:
                await self.call_store("retry", self.store.set_retry, row.id, None, 0)
            return
        # Whole seconds: the time is compared after a round trip through any database.
        at = float(math.ceil(self.clock.now() + retry_delay(attempt)))
        await self.call_store("retry", self.store.set_retry, row.id, at, attempt)
        if entry is not None:
            self._set_retry(entry, (at, attempt))

    def _report(self, row: Schedule, t: float, reason: str) -> None:
        try:
            self.missed(row, t, reason)
        except Exception as exc:
            self._warn((row.id, "missed"), "Schedule %d: a missed run could not be recorded: "
                       "%r", row.id, exc)

    # -- missed occurrences, refresh ----------------------------------------------------

    async def _catch_up(self, sid: int, start: float, cutoff: float) -> None:
        async with self._catch_up_slots:
            entry = self._entries.get(sid)
            if entry is None:
                return
            row = entry.schedule
            # Up to thousands of cron steps: off the loop, which must wake on time.
            plan = await asyncio.to_thread(plan_missed, entry.cron, start, cutoff)
            latest = plan.latest if row.catch_up == "one" else None
            missed = [(t, occurrence_key(t), HUB_DOWN) for t in plan.listed if t != latest]
            missed += missed_summary(plan, latest)
            if missed:
                won = await self.call_store("claim", self.store.claim_many,
                                        [(sid, key) for _, key, _ in missed], self.node)
                if won is None:
                    return   # nothing claimed: another node (or a later start) reports them
                for t, key, reason in missed:
                    if (sid, key) in won:
                        self._report(row, t, reason)
            if latest is not None:
                self._spawn(self._occur([Due(sid, latest, 0, "catch-up")]))
            await self.call_store("next", self.store.set_next_run, sid, plan.resume)

    async def _refresh(self) -> None:
        rows = await self.call_store("refresh", self.store.list_schedules, True)
        if rows is None:
            return
        now = self.clock.now()
        await self._apply(rows, now)
        if now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY_S
            await self.call_store("prune", self.store.prune_claims, now - CLAIM_KEEP_S)

    def _warn(self, key: tuple[object, ...], message: str, *args: object) -> None:
        """Log a problem once at WARNING; the same problem again only at DEBUG."""
        mark = (key[0], repr(key[1:]))
        level = logging.DEBUG if mark in self._warned else logging.WARNING
        self._warned.add(mark)
        log.log(level, message, *args)
