"""Times as the hub's tables keep them: seconds since the epoch (a float), shown as
ISO 8601 UTC text."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

__all__ = ["iso_of", "seconds_of"]


def seconds_of(value: object) -> float:
    """A stored time (seconds since the epoch) as a float; tolerates a date-time from
    another tool (naive ones taken as UTC); anything else is 0."""
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return stamp.timestamp()
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    return 0.0


def iso_of(seconds: float | None) -> str | None:
    """Seconds since the epoch as ISO 8601 UTC text (``...Z``); None stays None."""
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")
