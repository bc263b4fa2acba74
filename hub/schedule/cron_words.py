"""Month and weekday names, @nicknames, and plain-English schedule descriptions.

Kept apart from :mod:`hub.schedule.cron` so the parser and the fire-time search stay
short; this module knows nothing about time zones beyond printing the zone's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN",
               "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")  # fmt: skip
DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
NICKNAMES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

_MONTH_WORDS = ("January", "February", "March", "April", "May", "June", "July",
                "August", "September", "October", "November", "December")  # fmt: skip
_DAY_WORDS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


def join_words(words: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


def _shape(values: Sequence[int], lo: int, hi: int) -> tuple[str, list[int]]:
    """Classify a sorted value set as all / single / range / step / list.

    For "range" the numbers are [first, last]; for "step" [step, first, last];
    otherwise the values themselves.
    """
    if len(values) == hi - lo + 1:
        return "all", []
    if len(values) == 1:
        return "single", list(values)
    gaps = {b - a for a, b in pairwise(values)}
    if len(gaps) == 1:
        step = gaps.pop()
        if step == 1 and len(values) >= 3:
            return "range", [values[0], values[-1]]
        # Two values only count as a step when they split the field evenly (0,30 minutes),
        # otherwise "every 45 minutes" would be a lie for 0,45.
        even = values[0] == lo and (hi - lo + 1) == 2 * step
        if step > 1 and (len(values) >= 3 or even):
            return "step", [step, values[0], values[-1]]
    return "list", list(values)


def _reaches_end(step: int, first: int, last: int, lo: int, hi: int) -> bool:
    return first == lo and last + step > hi


def _lead(values: Sequence[int], unit: str, lo: int, hi: int) -> str:
    """The opening clause for the finest field that repeats, e.g. "Every 15 minutes"."""
    kind, nums = _shape(values, lo, hi)
    if kind == "all":
        return f"Every {unit}"
    if kind == "step":
        step, first, last = nums
        if _reaches_end(step, first, last, lo, hi):
            return f"Every {step} {unit}s"
        return f"Every {step} {unit}s from {unit} {first} through {last}"
    if kind == "range":
        return f"Every {unit} from {unit} {nums[0]} through {nums[1]}"
    return f"At {unit}s " + join_words([str(v) for v in nums])


def _within(values: Sequence[int], unit: str, lo: int, hi: int) -> str | None:
    """A clause restricting a coarser field, e.g. "between 09:00 and 17:59"."""
    kind, nums = _shape(values, lo, hi)
    if kind == "all":
        return None
    if unit == "hour" and kind in ("single", "range"):
        return f"between {nums[0]:02}:00 and {nums[-1]:02}:59"
    if kind == "single":
        return f"during {unit} {nums[0]}"
    if kind == "range":
        return f"during {unit}s {nums[0]} through {nums[1]}"
    if kind == "step":
        step, first, last = nums
        tail = "" if _reaches_end(step, first, last, lo, hi) else f" from {first} through {last}"
        return f"during every {ordinal(step)} {unit}{tail}"
    return f"during {unit}s " + join_words([str(v) for v in nums])


def _clock(hour: int, minute: int, second: int | None) -> str:
    return f"{hour:02}:{minute:02}" + ("" if second is None else f":{second:02}")


def _time_part(seconds: Sequence[int], minutes: Sequence[int], hours: Sequence[int],
               has_seconds: bool) -> str:  # fmt: skip
    fields = [(minutes, "minute", 0, 59), (hours, "hour", 0, 23)]
    if has_seconds:
        fields.insert(0, (seconds, "second", 0, 59))
    repeating = [i for i, f in enumerate(fields) if len(f[0]) > 1]
    sec = seconds[0] if has_seconds else None
    if not repeating:
        return "At " + _clock(hours[0], minutes[0], sec)
    lead = repeating[0]
    if fields[lead][1] == "hour" and len(hours) <= 6 and _shape(hours, 0, 23)[0] == "list":
        return "At " + join_words([_clock(h, minutes[0], sec) for h in hours])
    parts = [_lead(*fields[lead])]
    if fields[lead][1] == "hour":
        at = f"at minute {minutes[0]}"
        parts.append(at + (f", second {sec}" if sec else ""))
    elif fields[lead][1] == "minute" and sec:
        parts.append(f"at second {sec}")
    for values, unit, lo, hi in fields[lead + 1 :]:
        clause = _within(values, unit, lo, hi)
        if clause:
            parts.append(clause)
    return ", ".join(parts)


def _weekday_phrase(days: Sequence[int], alone: bool) -> str:
    """Weekdays in words; ``alone`` when day-of-month does not also restrict."""
    for first in (1, 0):  # Monday-first reads best; Sunday-first catches SUN-TUE
        keys = sorted((d - first) % 7 for d in days)
        order = [(k + first) % 7 for k in keys]
        if len(order) >= 3 and keys[-1] - keys[0] == len(order) - 1:
            span = f"{_DAY_WORDS[order[0]]} through {_DAY_WORDS[order[-1]]}"
            return span if alone else f"on {span}"
    words = join_words([_DAY_WORDS[d] for d in sorted(days, key=lambda d: (d - 1) % 7)])
    return f"only on {words}" if alone else f"on {words}"


def _month_day_phrase(days: Sequence[int]) -> str:
    kind, nums = _shape(days, 1, 31)
    if kind == "single":
        return f"on day {nums[0]} of the month"
    if kind == "range":
        return f"on days {nums[0]} through {nums[1]} of the month"
    if kind == "step" and len(days) > 6:
        step, first, last = nums
        tail = "" if _reaches_end(step, first, last, 1, 31) else f" from {first} through {last}"
        return f"on every {ordinal(step)} day of the month{tail}"
    return "on days " + join_words([str(d) for d in days]) + " of the month"


def _month_phrase(months: Sequence[int]) -> str:
    kind, nums = _shape(months, 1, 12)
    if kind == "range":
        return f"in {_MONTH_WORDS[nums[0] - 1]} through {_MONTH_WORDS[nums[1] - 1]}"
    return "in " + join_words([_MONTH_WORDS[m - 1] for m in months])


def describe_schedule(
    *,
    seconds: Sequence[int],
    minutes: Sequence[int],
    hours: Sequence[int],
    days_of_month: Sequence[int],
    months: Sequence[int],
    days_of_week: Sequence[int],
    has_seconds: bool,
    zone: str,
) -> str:
    """Plain English for a parsed schedule, always ending with the zone in brackets."""
    parts = [_time_part(seconds, minutes, hours, has_seconds)]
    dom_restricted = len(days_of_month) < 31
    dow_restricted = len(days_of_week) < 7
    if dom_restricted and dow_restricted:
        parts.append(
            _month_day_phrase(days_of_month) + " or " + _weekday_phrase(days_of_week, False)
        )
    elif dom_restricted:
        parts.append(_month_day_phrase(days_of_month))
    elif dow_restricted:
        parts.append(_weekday_phrase(days_of_week, True))
    if len(months) < 12:
        parts.append(_month_phrase(months))
    return ", ".join(parts) + f" ({zone})"
