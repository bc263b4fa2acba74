"""Time for the scheduler: the clock it sleeps on, occurrence keys, retry back-off,
the plan for occurrences nobody claimed, why they were missed, and what the
scheduler holds per schedule.

Kept apart from :mod:`hub.schedule.scheduler` because all of it is plain data and
computation that tests check without a running loop.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Protocol

from hub.schedule.cron import CronSchedule, parse_cron
from hub.schedule.model import Schedule

__all__ = [
    "DB_DOWN",
    "HUB_DOWN",
    "MAX_CLAIMED_MISSED",
    "RETRY_CAP_S",
    "RETRY_FIRST_S",
    "STALLED",
    "UNCLAIMED",
    "Clock",
    "Due",
    "Entry",
    "Firing",
    "Missed",
    "MissedPlan",
    "SystemClock",
    "Timeline",
    "cached_cron",
    "last_before",
    "occurrence_key",
    "plan_missed",
    "retry_delay",
    "retry_key",
]

RETRY_FIRST_S = 30.0
RETRY_CAP_S = 24 * 3600.0
# Missed occurrences are claimed one by one up to this many per gap (so a late run of
# one of them is never also counted missed), then counted up to MAX_COUNTED_MISSED
# more; beyond that the record says "at least".
MAX_CLAIMED_MISSED = 10_000
MAX_COUNTED_MISSED = 100_000
_TICK = timedelta(milliseconds=1)
# Why occurrences went unclaimed, as far as the node that reports them can tell.
DB_DOWN = "the hub database was unreachable"
HUB_DOWN = "no hub was running"
STALLED = "this node was stalled"
UNCLAIMED = "no running hub took them in time"
TIMELINE_KEEP = 256           # the troubles a node remembers


class Clock(Protocol):
    """Wall-clock seconds since the epoch, and a way to wait for one (a test fakes it)."""

    def now(self) -> float: ...

    async def sleep_until(self, t: float) -> None: ...


class SystemClock:
    """The real clock. Waits on the event loop's timer (millisecond-precise) and checks
    the wall clock again on waking, so a clock set back while asleep is waited out."""

    def now(self) -> float:
        return time.time()

    async def sleep_until(self, t: float) -> None:
        while (left := t - time.time()) > 0:
            await asyncio.sleep(left)


@dataclass(frozen=True)
class Firing:
    """One run of a schedule: which occurrence (seconds since the epoch; for a retry,
    the time the retry was due), which attempt (0 = the first try) and why."""

    occurrence: float
    attempt: int = 0
    reason: str = "scheduled"     # scheduled | catch-up | retry
    job_id: str = ""              # the run's history id, known before it starts


@lru_cache(maxsize=4096)
def cached_cron(expr: str, timezone: str) -> CronSchedule:
    """Parsed once per distinct (expression, zone): thousands of schedules share a few
    expressions, and a CronSchedule is immutable. Raises CronError like parse_cron."""
    return parse_cron(expr, timezone)


def _utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC)


def occurrence_key(t: float) -> str:
    """The claim key of the occurrence at ``t``: its UTC time, e.g. 2026-11-29T10:00:00Z."""
    return _utc(t).strftime("%Y-%m-%dT%H:%M:%SZ")


def retry_key(retry_at: float, attempt: int) -> str:
    return f"{occurrence_key(retry_at)}#retry{attempt}"


def retry_delay(attempt: int) -> float:
    """Seconds before retry ``attempt`` (1, 2, ...): 30 s, doubling, at most 24 h."""
    return min(RETRY_FIRST_S * 2.0 ** min(attempt - 1, 32), RETRY_CAP_S)


def next_after(cron: CronSchedule, t: float) -> float:
    return cron.next_after(_utc(t)).timestamp()


def first_from(cron: CronSchedule, t: float) -> float:
    """The first occurrence at or after ``t`` (occurrences fall on whole seconds)."""
    return cron.next_after(_utc(t) - _TICK).timestamp()


def last_before(cron: CronSchedule, cutoff: float) -> float | None:
    """The last occurrence at or before ``cutoff``, searching back in doubling windows
    (cron can only step forward); None if there is none in about 9 years."""
    width = 1.0
    while width < 3e8:
        t = next_after(cron, cutoff - width)
        if t <= cutoff:
            while (following := next_after(cron, t)) <= cutoff:
                t = following
            return t
        width *= 2
    return None


@dataclass(frozen=True)
class MissedPlan:
    """Occurrences in ``[start, cutoff]``: the first ones listed (to be claimed one by
    one), the rest only counted (``more``), and the latest of all."""

    listed: tuple[float, ...]
    more: int
    more_from: float | None       # the first and last of the ``more``
    more_last: float | None
    more_capped: bool             # the count stopped at MAX_COUNTED_MISSED
    latest: float | None
    resume: float                 # the first occurrence after cutoff


def plan_missed(cron: CronSchedule, start: float, cutoff: float,
                limit: int = MAX_CLAIMED_MISSED) -> MissedPlan:
    listed: list[float] = []
    t = first_from(cron, start)
    while t <= cutoff and len(listed) < limit:
        listed.append(t)
        t = next_after(cron, t)
    more, more_from, latest = 0, None, (listed[-1] if listed else None)
    more_last = None
    while t <= cutoff and more < MAX_COUNTED_MISSED:
        more_from = t if more_from is None else more_from
        more, more_last = more + 1, t
        t = next_after(cron, t)
    latest = more_last if more_last is not None else latest
    capped = t <= cutoff
    if capped:
        latest = last_before(cron, cutoff)
    return MissedPlan(tuple(listed), more, more_from, more_last, capped, latest,
                      next_after(cron, cutoff))


@dataclass(frozen=True)
class Missed:
    """Occurrences of one schedule that did not run, reported as one record."""

    first: float
    last: float
    count: int
    reason: str
    capped: bool = False          # there were more than ``count``
    # The history id of the record: one that is counted on (the occurrences skipped
    # for overlap in one window) keeps its id, and each report replaces the last.
    record_id: str = ""

    @property
    def message(self) -> str:
        if self.count == 1 and not self.capped:
            return self.reason
        words = f"{'at least ' if self.capped else ''}{self.count}"
        return (f"{self.reason} ({words} occurrences from {occurrence_key(self.first)} to "
                f"{occurrence_key(self.last)}, reported together)")


class Timeline:
    """What one node saw of its own troubles (the hub database failing its calls, its
    loop waking late), so the node that reports a gap can say why it was missed. A
    gap from before the node started was missed with no hub running, as far as this
    node knows (a node that was up and knows better is given time to report first)."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.outages: list[tuple[float, float]] = []
        self.stalls: list[tuple[float, float]] = []
        self._last_ok = started
        self._down_since: float | None = None

    def store_ok(self, now: float) -> None:
        if self._down_since is not None:
            self._keep(self.outages, (self._down_since, now))
            self._down_since = None
        self._last_ok = now

    def store_failed(self) -> None:
        # The outage began after the last call that worked, not at the first that failed.
        if self._down_since is None:
            self._down_since = self._last_ok

    def stalled(self, since: float, until: float) -> None:
        self._keep(self.stalls, (since, until))

    @staticmethod
    def _keep(spans: list[tuple[float, float]], span: tuple[float, float]) -> None:
        spans.append(span)
        del spans[:-TIMELINE_KEEP]

    def reason(self, first: float, last: float) -> str:
        if first < self.started:
            return HUB_DOWN
        outages = [*self.outages, *([(self._down_since, math.inf)]
                                    if self._down_since is not None else [])]
        if any(lo <= last and first <= hi for lo, hi in outages):
            return DB_DOWN
        if any(lo <= last and first <= hi for lo, hi in self.stalls):
            return STALLED
        return UNCLAIMED


@dataclass(frozen=True)
class Due:
    """An occurrence (or retry) found due, about to be claimed."""

    sid: int
    t: float
    attempt: int
    reason: str

    @property
    def key(self) -> str:
        return retry_key(self.t, self.attempt) if self.reason == "retry" else occurrence_key(
            self.t)


@dataclass
class Entry:
    """A schedule as one scheduler holds it: its next planned run and pending retry."""

    schedule: Schedule
    cron: CronSchedule
    due: float = math.inf
    run_token: int = -1
    retry: tuple[float, int] | None = None   # (at, attempt) pending
    # The retry this node last took off the heap: the row shows it until the run that
    # took it ends, and a refresh meanwhile must not queue it again.
    retry_taken: tuple[float, int] | None = None
