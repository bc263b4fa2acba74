"""How times, durations and outcomes read on the History, Scheduler and Metrics pages."""

from __future__ import annotations

import datetime as dt
import math
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["OUTCOME_COLOURS", "age", "duration", "elapsed", "local_time", "zoned_time"]

# Badge colours per outcome; a missed occurrence is grey, not red: nothing failed.
OUTCOME_COLOURS = {"success": "#2e7d32", "failed": "#c62828", "running": "#1565c0",
                   "interrupted": "#ef6c00", "missed": "#757575"}


def duration(ms: int | None) -> str:
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(ms // 1000, 60)
    return f"{minutes} min {seconds:02d} s"


def local_time(epoch: float | None) -> str:
    """An instant in this computer's zone, as the owner reads their clock."""
    if epoch is None:
        return "—"
    return dt.datetime.fromtimestamp(epoch).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def zoned_time(iso_utc: str, zone: str) -> str:
    """A hub ISO UTC instant shown in ``zone`` (a schedule's own zone)."""
    when = dt.datetime.fromisoformat(iso_utc.replace("Z", "+00:00"))
    try:
        shown = when.astimezone(ZoneInfo(zone)) if zone else when
    except (ZoneInfoNotFoundError, ValueError):
        shown = when
    return shown.strftime("%a %Y-%m-%d %H:%M %Z")


def elapsed(seconds: float) -> str:
    """A span of time in its largest whole unit: '45 s', '12 min', '3 h', '2 d'."""
    size = max(0, int(seconds))
    if size < 60:
        return f"{size} s"
    if size < 3600:
        return f"{size // 60} min"
    if size < 86400:
        return f"{size // 3600} h"
    return f"{size // 86400} d"


def age(epoch: float | None, now: float) -> str:
    """'in 4 min' / '3 h ago' / 'just now' beside an absolute time. A moment in the
    past never reads as 'in …', however little ago it was; a future one rounds up, so
    it never reads 'in 0 s' either."""
    if epoch is None:
        return ""
    delta = epoch - now
    if delta <= 0:
        return "just now" if delta > -1 else f"{elapsed(-delta)} ago"
    return f"in {elapsed(math.ceil(delta))}"
