"""How times, durations and outcomes read on the History, Scheduler and Metrics pages."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["OUTCOME_COLOURS", "age", "duration", "local_time", "zoned_time"]

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


def age(epoch: float | None, now: float) -> str:
    """'in 4 min' / '3 h ago' beside an absolute time."""
    if epoch is None:
        return ""
    delta = int(epoch - now)
    size = abs(delta)
    if size < 60:
        words = f"{size} s"
    elif size < 3600:
        words = f"{size // 60} min"
    elif size < 86400:
        words = f"{size // 3600} h"
    else:
        words = f"{size // 86400} d"
    return f"in {words}" if delta >= 0 else f"{words} ago"
