"""The scheduler: fires each enabled schedule's occurrences, once per cluster.

One loop task per node keeps a heap of ``(due, token, schedule id, kind, attempt)``
and sleeps until the earliest due instant (not a poll), or until something changes
the heap. Everything slow happens in tasks of their own: the occurrences due at one
instant are claimed together and their rows read again, and each claimed run is a
task of its own. Changes made on other nodes arrive as notifications where the
database can send them (one row read again); elsewhere the table is read again
every ``refresh_s``.

Once per cluster
    Every node that finds an occurrence due INSERTs a claim keyed by the occurrence's
    UTC time (``2026-11-29T10:00:00Z``; retries ``...Z#retry2``). Only the node whose
    INSERT adds the row goes on; a lost claim is no error. A store that cannot be
    reached means the occurrence is not fired (it is accounted for later).

Stopping a schedule
    The row is read again after the claim: switched off or deleted on any node, it
    fires no more, even before this node hears of the change.

Overlap
    ``skip``: a run still going on this node, or a lease on the schedule held by
    another node (renewed while its run goes on), makes the occurrence missed; the
    skipped ones of an hour are one record, counted in the lease row. A loop
    that wakes late runs only the latest of a schedule's occurrences that fell due
    meanwhile, so a stall never starts a batch of runs side by side. ``allow`` runs
    side by side.

Retries
    A failed (or interrupted) run with retries left is retried 30 s later, doubling
    each attempt, at most 24 h apart. ``RetryAt``/``RetryAttempt`` in the row keep it
    over a restart (or for any node); one already due fires at once.

Missed and interrupted occurrences
    See :mod:`hub.schedule.upkeep`: gaps behind the schedule's watermark are reported
    once, by the node whose compare-and-set lands; a dead node's runs are reported
    ``interrupted`` by the node that takes them over.

Stopping
    :meth:`stop` ends the loop and the scheduler's own work at once; jobs already
    running are given ``drain_s`` to finish (their outcome is recorded), then
    cancelled and reported ``interrupted`` (a store that fails then leaves their run
    rows to the next start of this node).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import math
import os
from collections.abc import Callable
from typing import Any

from hub.schedule.launch import LEASE_S, OVERLAPPED, FireFn, Item, Launcher, MissedFn
from hub.schedule.model import Schedule
from hub.schedule.store import NOTIFY_CHANNEL, ScheduleStore
from hub.schedule.timing import (
    DB_DOWN,
    HUB_DOWN,
    STALLED,
    UNCLAIMED,
    Clock,
    Due,
    Entry,
    Firing,
    Missed,
    SystemClock,
    Timeline,
    cached_cron,
    first_from,
    next_after,
)
from hub.schedule.upkeep import NodeLiveness, Upkeep
from hub.store.notify import Listener
from shared.errors import WebJobsError

__all__ = ["DB_DOWN", "HUB_DOWN", "LEASE_S", "OVERLAPPED", "STALLED", "UNCLAIMED", "Clock",
           "Firing", "Missed", "NodeLiveness", "Scheduler", "SystemClock"]

log = logging.getLogger("webhub.schedule")

GRACE_S = 5.0
DRAIN_S = 30.0
POLL_S = 15.0                  # where the database cannot notify
SAFETY_POLL_S = 600.0          # where it can: notifications and resyncs do the work
UPKEEP_S = 5.0
STALL_S = 1.0                  # a loop waking this late was stalled
APPLY_SLICE = 500              # schedules adopted between turns of the event loop
PRUNE_EVERY_S = 3600.0
CLAIM_KEEP_S = 7 * 86400.0     # far beyond any grace or refresh: a live node never asks

InterruptedFn = Callable[[Schedule, Firing, str], None]


def _random_id() -> str:
    return f"job_{os.urandom(8).hex()}"


class Scheduler(Launcher):
    """``fire(schedule, firing)`` runs the job and returns its outcome ("success";
    anything else counts as failed); ``missed(schedule, missed)`` records occurrences
    that did not run, ``interrupted(schedule, firing, node)`` a run whose node died.
    All are called on the event loop, so the last two must be quick. ``node`` names
    this hub in claims; ``liveness`` says which nodes beat (the others' runs are
    taken over); ``new_id`` makes history ids; ``clock`` is faked by tests."""

    def __init__(self, store: ScheduleStore, fire: FireFn, missed: MissedFn, node: str,
                 clock: Clock | None = None, refresh_s: float | None = None, *,
                 grace_s: float = GRACE_S, drain_s: float = DRAIN_S,
                 liveness: NodeLiveness | None = None,
                 interrupted: InterruptedFn | None = None,
                 new_id: Callable[[], str] = _random_id, lease_s: float = LEASE_S,
                 upkeep_s: float = UPKEEP_S) -> None:
        super().__init__(store, fire, missed, node, clock or SystemClock(), new_id=new_id,
                         lease_s=lease_s)
        self.interrupted = interrupted
        self.refresh_s = refresh_s if refresh_s is not None else (
            SAFETY_POLL_S if store.notifies else POLL_S)
        self._listening_refresh_s = self.refresh_s
        self.grace_s = grace_s
        self.drain_s = drain_s
        self.upkeep_s = upkeep_s
        self.upkeep = Upkeep(self, liveness)
        self._loop_task: asyncio.Task[None] | None = None
        self._listener: Listener | None = None
        self._asleep_until: float | None = None
        self._next_refresh = 0.0
        self._next_upkeep = 0.0
        self._next_prune = 0.0

    # -- life cycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Load the enabled schedules, report the runs this node's last life left
        open, listen for changes and start the loop. A store that is down now is
        logged and tried again at each refresh."""
        if self._loop_task is not None:
            return
        self.timeline = Timeline(self.clock.now())
        try:
            await self.reload()
        except WebJobsError as exc:
            self.warn(("store", "reload"), "Schedules could not be loaded: %s", exc)
        await self.upkeep.sweep(own=True)
        self._listen()
        now = self.clock.now()
        self._next_refresh = now + self.refresh_s
        self._next_upkeep = now
        self._loop_task = asyncio.create_task(self._loop(), name=f"scheduler-{self.node}")

    def _listen(self) -> None:
        if not self.store.notifies:
            return
        loop = asyncio.get_running_loop()

        # Both run on the listener's thread: hand over to the loop.
        def on_message(channel: str, payload: str) -> None:
            with contextlib.suppress(RuntimeError):   # the loop has closed
                loop.call_soon_threadsafe(self._heard, payload)

        def on_resync() -> None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._listening_again)

        def on_lost() -> None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._listener_away)

        try:
            self._listener = self.store.db.listen([NOTIFY_CHANNEL], on_message, on_resync,
                                                  on_lost=on_lost)
        except WebJobsError as exc:
            self.warn(("store", "listen"), "Schedule changes are polled for (every %.0f "
                       "s): listening failed: %s", POLL_S, exc)
            self.refresh_s = POLL_S

    def _listener_away(self) -> None:
        """The listener lost its connection: other nodes' changes are polled for until
        it is back (pooled connections may still work while it is away)."""
        self.refresh_s = POLL_S
        self._next_refresh = min(self._next_refresh, self.clock.now() + POLL_S)
        self._wake.set()

    def _listening_again(self) -> None:
        self.refresh_s = self._listening_refresh_s
        self._heard(None)

    def _heard(self, payload: str | None) -> None:
        """A schedule changed on some node (its id), or anything may have (None)."""
        if payload is not None and payload.isascii() and payload.isdigit():
            self._spawn(self.reload_one(int(payload)))
        else:
            self._spawn(self._refresh())

    async def reload(self) -> int:
        """Read the enabled schedules now; how many this node schedules."""
        rows = await asyncio.to_thread(self.store.list_schedules, True)
        await self._apply(rows, self.clock.now())
        return len(self._entries)

    async def reload_one(self, schedule_id: int) -> None:
        """Read one schedule again (it changed)."""
        found = await self.call_store("get", self.store.get_many, [schedule_id])
        if found is None:
            return   # the store failed: the next resync or poll reads it
        got = found.get(schedule_id)
        if got is None or not got.enabled:
            self._entries.pop(schedule_id, None)
            return
        try:
            self._adopt(got, self.clock.now())
        except Exception as exc:
            self.warn((got.id, got.cron, got.timezone),
                       "Schedule %d (%s) is not scheduled: %s", got.id, got.name, exc)
            self._entries.pop(schedule_id, None)
        self._wake.set()

    async def stop(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(Exception):
                self._listener.close()
            self._listener = None
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
            self._loop_task = None
        for task in self._tasks - self._job_tasks:
            task.cancel()
        if self._job_tasks:
            await asyncio.wait(set(self._job_tasks), timeout=self.drain_s)
        cut_short = bool(self._job_tasks)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if cut_short:   # the runs cancelled are reported interrupted (and retried) now
            await self.upkeep.sweep(own=True)

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
                self.warn((row.id, row.cron, row.timezone),
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
        """Schedule ``entry``'s occurrences from ``start``; those older than the grace
        are left to the accounting of gaps (:mod:`hub.schedule.upkeep`)."""
        cutoff = now - self.grace_s
        if start is None:
            self._push_run(entry, next_after(entry.cron, now))
        elif start <= cutoff:
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
            self.set_retry(entry, want)

    # -- the loop -----------------------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            now = self.clock.now()
            self._take_due(now)
            if now >= self._next_refresh:
                self._next_refresh = now + self.refresh_s
                self._spawn(self._refresh())
            if now >= self._next_upkeep:
                self._next_upkeep = now + self.upkeep_s
                self._spawn(self.upkeep.run(now))
            wake_at = min(self._heap[0][0] if self._heap else math.inf, self._next_refresh,
                          self._next_upkeep)
            await self._sleep(wake_at)
            woke = self.clock.now()
            if woke - wake_at > STALL_S:
                self.timeline.stalled(wake_at, woke)
                self.warn(("stall",), "The scheduler of node %s woke %.1f s late (the node "
                          "was stalled)", self.node, woke - wake_at)

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
        latest: dict[int, Due] = {}
        retries: list[Due] = []
        while self._heap and self._heap[0][0] <= now:
            item = heapq.heappop(self._heap)
            entry = self._entries.get(item[2])
            if entry is None:
                continue
            try:
                self._take(entry, item, now, latest, retries)
            except Exception as exc:   # e.g. a cron with no time left: drop, never stop
                self.warn((item[2], "due"), "Schedule %d is not scheduled: %s", item[2], exc)
                del self._entries[item[2]]
        if latest or retries:
            self._spawn(self._occur([*retries, *latest.values()]))

    def _take(self, entry: Entry, item: Item, now: float, latest: dict[int, Due],
              retries: list[Due]) -> None:
        due, token, sid, kind, attempt = item
        if kind == "retry":
            if entry.retry == (due, attempt):
                entry.retry, entry.retry_taken = None, (due, attempt)
                retries.append(Due(sid, due, attempt, "retry"))
        elif token != entry.run_token:
            return   # replaced by a newer plan for this schedule
        elif due < now - self.grace_s:
            # The loop fell far behind (a stalled or suspended node): the gap is
            # accounted for, not run.
            self._push_run(entry, next_after(entry.cron, now - self.grace_s))
        else:
            # Several due in one pass (a loop waking late): only the latest runs; the
            # earlier ones are other nodes' to claim, or a gap to account for.
            latest[sid] = Due(sid, due, 0, "scheduled")
            self._push_run(entry, next_after(entry.cron, due))

    # -- one occurrence -------------------------------------------------------------

    def _claim_round(self, due: list[Due]) -> set[tuple[int, str]]:
        """In a thread: claim, then move the watermark past the runs claimed at it."""
        won = self.store.claim_many([(d.sid, d.key) for d in due], self.node)
        moves = [(d.sid, d.t, next_after(e.cron, d.t)) for d in due
                 if d.reason != "retry" and (d.sid, d.key) in won
                 and (e := self._entries.get(d.sid)) is not None]
        if moves:
            self.store.advance(moves)
        return won

    async def _occur(self, due: list[Due]) -> None:
        """Claim the occurrences due together in one go (one statement, not one each: a
        hundred due in the same second must all start well within it), then launch
        the ones this node won."""
        won = await self.call_store("claim", self._claim_round, due)
        if won:
            await self.launch([d for d in due if (d.sid, d.key) in won])

    # -- refresh ------------------------------------------------------------------------

    async def _refresh(self) -> None:
        rows = await self.call_store("refresh", self.store.list_schedules, True)
        if rows is None:
            return
        now = self.clock.now()
        await self._apply(rows, now)
        if now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY_S
            await self.call_store("prune", self.store.prune_claims, now - CLAIM_KEEP_S)
