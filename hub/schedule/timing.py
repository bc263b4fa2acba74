"""Time for the scheduler: the clock it sleeps on, occurrence keys, retry back-off,
the plan for occurrences a stopped cluster missed, and what it holds per schedule.

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
    "HUB_DOWN",
    "MAX_LISTED_MISSED",
    "RETRY_CAP_S",
    "RETRY_FIRST_S",
    "Clock",
    "Due",
    "Entry",
    "Firing",
    "MissedPlan",
    "SystemClock",
    "cached_cron",
    "last_before",
    "missed_summary",
    "occurrence_key",
    "plan_missed",
    "retry_delay",
    "retry_key",
]

RETRY_FIRST_S = 30.0
RETRY_CAP_S = 24 * 3600.0
MAX_LISTED_MISSED = 100       # missed occurrences reported one by one per schedule
MAX_COUNTED_MISSED = 10_000   # beyond this the summary says "at least"
_TICK = timedelta(milliseconds=1)
HUB_DOWN = "the hub was not running"


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
    """Occurrences in ``[start, cutoff]``: the first ones listed one by one, the rest
    counted (``more`` > 0 from ``more_from``), and the latest of all."""

    listed: tuple[float, ...]
    more: int
    more_from: float | None
    more_capped: bool             # the count stopped at MAX_COUNTED_MISSED
    latest: float | None
    resume: float                 # the first occurrence after cutoff


def plan_missed(cron: CronSchedule, start: float, cutoff: float) -> MissedPlan:
    listed: list[float] = []
    t = first_from(cron, start)
    while t <= cutoff and len(listed) < MAX_LISTED_MISSED:
        listed.append(t)
        t = next_after(cron, t)
    more, more_from, latest = 0, None, (listed[-1] if listed else None)
    while t <= cutoff and more < MAX_COUNTED_MISSED:
        more_from = t if more_from is None else more_from
        more, latest = more + 1, t
        t = next_after(cron, t)
    capped = t <= cutoff
    if capped:
        latest = last_before(cron, cutoff)
    return MissedPlan(tuple(listed), more, more_from, capped, latest,
                      next_after(cron, cutoff))


def missed_summary(plan: MissedPlan, latest: float | None) -> list[tuple[float, str, str]]:
    """The one missed record for the occurrences beyond those listed one by one (less
    the one run instead, when it is among them); its claim key ends in ``#missed``."""
    count = plan.more - (1 if latest is not None and latest not in plan.listed
                         and not plan.more_capped else 0)
    if count <= 0 or plan.more_from is None:
        return []
    first = occurrence_key(plan.more_from)
    words = f"{'at least ' if plan.more_capped else ''}{count}"
    return [(plan.more_from, f"{first}#missed",
             f"{HUB_DOWN} ({words} occurrences from {first} on, reported together)")]


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
