"""Cron expressions for the hub's scheduler: parsing, next fire times, time zones.

Syntax
    Five fields ``minute hour day-of-month month day-of-week``, or six with the
    seconds FIRST: ``second minute hour day-of-month month day-of-week``. Each field
    takes ``*``, a number, a range ``a-b``, a list ``a,b,c``, and steps ``*/n``,
    ``a-b/n`` and ``a/n`` (from ``a`` to the field's maximum by ``n``). Months may be
    written JAN-DEC and weekdays SUN-SAT, in any case, also inside ranges (MON-FRI).
    Day-of-week 0 and 7 are both Sunday. ``@yearly @annually @monthly @weekly @daily
    @midnight @hourly`` are accepted; the Quartz extensions ``? L W #`` are refused.

Days (the Vixie cron rule)
    When day-of-month and day-of-week are both restricted, a day matches if EITHER
    matches. A field counts as unrestricted when it allows every value (``*``, ``*/1``,
    ``1-31``, ``0-7``); unlike Vixie cron, ``*/2`` counts as a restriction, because
    what matters to the reader is which days it allows, not how it was spelt.

Time zones and DST
    Fire times are wall-clock times in the schedule's IANA zone; callers pass and get
    aware UTC datetimes.

    * Schedules with a fixed hour set (anything but ``*`` in the hour field) fire once
      per wall-clock match: a time in a spring-forward gap fires once, at the first
      instant after the gap, and a time repeated by a fall-back fires once, at its
      first occurrence.
    * Schedules whose hour field is ``*`` behave like intervals: they fire on every
      real instant whose wall clock matches, once per instant. Wall-clock times inside
      a gap do not exist and are skipped (the hour after the gap has its own fires),
      and the repeated hour of a fall-back fires again, so ``*/15 * * * *`` keeps
      firing every 15 real minutes through both transitions.
"""

from __future__ import annotations

import calendar
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hub.schedule.cron_words import DAY_NAMES, MONTH_NAMES, NICKNAMES, describe_schedule
from shared.errors import BadRequest

__all__ = ["MAX_EXPRESSION_LENGTH", "CronError", "CronSchedule", "parse_cron"]

MAX_EXPRESSION_LENGTH = 200

# Feb 29 can be 8 years from the previous one (2096 -> 2104), the sparsest schedule
# that can fire at all; a search that finds nothing in 9 years will never find one.
_SEARCH_YEARS = 9
# Each DST gap or fold costs the search one extra step; a handful is plenty even in
# zones that changed offset twice in a week.
_MAX_DST_STEPS = 16
_MAX_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ZONE_NAME = re.compile(r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*")


class CronError(BadRequest):
    """A cron expression or time zone the scheduler cannot use (HUB-001)."""


@dataclass(frozen=True)
class _Field:
    name: str
    lo: int
    hi: int  # highest number that may be written (7 for day-of-week)
    star_hi: int  # highest value that ``*`` and ``a/n`` reach (6 for day-of-week)
    names: tuple[str, ...] = ()
    name_base: int = 0


_SECOND = _Field("second", 0, 59, 59)
_MINUTE = _Field("minute", 0, 59, 59)
_HOUR = _Field("hour", 0, 23, 23)
_DOM = _Field("day-of-month", 1, 31, 31)
_MONTH = _Field("month", 1, 12, 12, MONTH_NAMES, 1)
_DOW = _Field("day-of-week", 0, 7, 6, DAY_NAMES, 0)


def _unsupported(spec: _Field, text: str, mark: str) -> CronError:
    return CronError(
        f"Cron: the {spec.name} field '{text}' uses '{mark}', which is not supported "
        "(the Quartz extensions ?, L, W and # are not accepted)"
    )


def _parse_value(token: str, text: str, spec: _Field) -> int:
    if token.isascii() and token.isdigit():
        value = int(token)
        if not spec.lo <= value <= spec.hi:
            where = " is" if token == text else f": {value} is"
            raise CronError(
                f"Cron: the {spec.name} field '{text}'{where} out of range {spec.lo}-{spec.hi}"
            )
        return value
    upper = token.upper()
    if upper in spec.names:
        return spec.names.index(upper) + spec.name_base
    for mark in "LW":
        if mark in upper:
            raise _unsupported(spec, text, mark)
    if not token:
        raise CronError(f"Cron: the {spec.name} field '{text}' is missing a number")
    kind = {_MONTH.name: "number or month name", _DOW.name: "number or day name"}
    raise CronError(
        f"Cron: the {spec.name} field '{text}': '{token}' is not a " + kind.get(spec.name, "number")
    )


def _parse_item(item: str, text: str, spec: _Field) -> range:
    base, slash, step_text = item.partition("/")
    step = 1
    if slash:
        span = spec.hi - spec.lo + 1
        if not (step_text.isascii() and step_text.isdigit() and 1 <= int(step_text) <= span):
            raise CronError(
                f"Cron: the {spec.name} field '{text}': the step must be a number from 1 to {span}"
            )
        step = int(step_text)
    if base == "*":
        return range(spec.lo, spec.star_hi + 1, step)
    first_text, dash, last_text = base.partition("-")
    first = _parse_value(first_text, text, spec)
    last = max(spec.star_hi, first) if slash else first
    if dash:
        last = _parse_value(last_text, text, spec)
        if first > last:
            raise CronError(
                f"Cron: the {spec.name} field '{text}': the range {base} runs backwards"
            )
    return range(first, last + 1, step)


def _parse_field(text: str, spec: _Field) -> tuple[int, ...]:
    for mark in "?#":
        if mark in text:
            raise _unsupported(spec, text, mark)
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise CronError(f"Cron: the {spec.name} field '{text}' has an empty list item")
        values.update(_parse_item(item, text, spec))
    if spec is _DOW and 7 in values:
        values.discard(7)
        values.add(0)
    return tuple(sorted(values))


def _split(expr: str) -> list[str]:
    if not isinstance(expr, str):
        raise CronError("Cron: the expression must be a string")
    if len(expr) > MAX_EXPRESSION_LENGTH:
        raise CronError(f"Cron: the expression is longer than {MAX_EXPRESSION_LENGTH} characters")
    words = expr.split()
    if not words:
        raise CronError("Cron: the expression is empty")
    if words[0].startswith("@"):
        nickname = words[0].lower()
        if nickname not in NICKNAMES:
            known = ", ".join(NICKNAMES)
            raise CronError(f"Cron: '{words[0]}' is not a supported nickname (use one of {known})")
        if len(words) > 1:
            raise CronError(f"Cron: '{words[0]}' cannot be followed by other fields")
        words = NICKNAMES[nickname].split()
    if len(words) not in (5, 6):
        raise CronError(
            "Cron: expected 5 fields (minute hour day-of-month month day-of-week) "
            f"or 6 with seconds first, got {len(words)}"
        )
    return words


def _load_zone(name: str) -> ZoneInfo:
    shown = name[:80] if isinstance(name, str) else repr(name)[:80]
    if not isinstance(name, str) or len(name) > 64 or not _ZONE_NAME.fullmatch(name):
        raise CronError(f"Cron: '{shown}' is not a known time zone")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise CronError(f"Cron: '{shown}' is not a known time zone") from exc


def _next_table(values: tuple[int, ...], hi: int) -> tuple[int, ...]:
    """table[i] = the smallest allowed value >= i, or -1; one spare slot past ``hi``
    lets the search carry (minute 60 -> next hour) without special cases."""
    table = [-1] * (hi + 2)
    upcoming = -1
    for i in range(hi, -1, -1):
        if i in values:
            upcoming = i
        table[i] = upcoming
    return tuple(table)


def _offset(moment: datetime) -> timedelta:
    offset = moment.utcoffset()
    if offset is None:  # only for naive datetimes, which never reach here
        raise ValueError("a time zone returned no UTC offset")
    return offset


def _transition(zone: ZoneInfo, before: datetime, after: datetime) -> datetime:
    """The first whole-second UTC instant in (before, after] whose offset differs from
    ``before``'s (naive UTC in and out). Offsets change on whole seconds in tzdata."""
    old = _offset(before.replace(tzinfo=UTC).astimezone(zone))
    lo = math.floor(before.replace(tzinfo=UTC).timestamp())
    hi = math.ceil(after.replace(tzinfo=UTC).timestamp())
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _offset(datetime.fromtimestamp(mid, zone)) == old:
            lo = mid
        else:
            hi = mid
    return datetime.fromtimestamp(hi, UTC).replace(tzinfo=None)


@dataclass(frozen=True, slots=True)
class _Tables:
    """Precomputed lookups so one search costs a few dozen integer operations."""

    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    months: tuple[int, ...]
    dom_mask: int  # bit d set when day-of-month d is allowed
    dow_mask: int  # bit w set when weekday w (0 = Sunday) is allowed
    dom_star: bool
    dow_star: bool
    interval_like: bool  # hour field is `*`: the DST rule for frequent schedules
    fixed: bool  # UTC: no DST, so wall time is the instant


@dataclass(frozen=True)
class CronSchedule:
    """A parsed cron expression in an IANA time zone. Build with :meth:`parse`."""

    expression: str
    timezone: str
    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: tuple[int, ...]
    days_of_week: tuple[int, ...]  # 0 = Sunday; 7 is folded into 0
    has_seconds: bool
    _zone: ZoneInfo = field(init=False, repr=False, compare=False)
    _t: _Tables = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Frozen dataclass: derived lookups are set once here, never changed after.
        object.__setattr__(self, "_zone", _load_zone(self.timezone))
        tables = _Tables(
            seconds=_next_table(self.seconds, 59),
            minutes=_next_table(self.minutes, 59),
            hours=_next_table(self.hours, 23),
            months=_next_table(self.months, 12),
            dom_mask=sum(1 << d for d in self.days_of_month),
            dow_mask=sum(1 << w for w in self.days_of_week),
            dom_star=len(self.days_of_month) == 31,
            dow_star=len(self.days_of_week) == 7,
            interval_like=len(self.hours) == 24,
            fixed=self.timezone in ("UTC", "Etc/UTC"),
        )
        object.__setattr__(self, "_t", tables)

    @classmethod
    def parse(cls, expr: str, timezone: str = "UTC") -> CronSchedule:
        """Parse ``expr`` for ``timezone``; raises :class:`CronError` naming the field."""
        words = _split(expr)
        has_seconds = len(words) == 6
        if not has_seconds:
            words = ["0", *words]
        specs = (_SECOND, _MINUTE, _HOUR, _DOM, _MONTH, _DOW)
        sec, minute, hour, dom, month, dow = (
            _parse_field(w, s) for w, s in zip(words, specs, strict=True)
        )
        schedule = cls(
            expression=" ".join(expr.split()),
            timezone=timezone,
            seconds=sec,
            minutes=minute,
            hours=hour,
            days_of_month=dom,
            months=month,
            days_of_week=dow,
            has_seconds=has_seconds,
        )
        schedule._check_fires()
        return schedule

    def _check_fires(self) -> None:
        # Only day-of-month alone can rule out every day (Feb 30, Apr 31): any weekday
        # occurs in every month and the time fields are never empty. Checking this
        # shape directly is exact, where a bounded search would only be a sample.
        if self._t.dom_star or not self._t.dow_star:
            return
        if not any(d <= _MAX_DAYS[m] for m in self.months for d in self.days_of_month):
            raise CronError(f"Cron: '{self.expression}' never fires")

    def describe(self) -> str:
        """Plain English, e.g. "At 02:30, Monday through Friday (Europe/London)"."""
        return describe_schedule(
            seconds=self.seconds,
            minutes=self.minutes,
            hours=self.hours,
            days_of_month=self.days_of_month,
            months=self.months,
            days_of_week=self.days_of_week,
            has_seconds=self.has_seconds,
            zone=self.timezone,
        )

    def next_times(self, instant: datetime, n: int) -> list[datetime]:
        """The next ``n`` fire times strictly after ``instant``."""
        if n < 0:
            raise ValueError("n must not be negative")
        out: list[datetime] = []
        for _ in range(n):
            instant = self.next_after(instant)
            out.append(instant)
        return out

    def next_after(self, instant: datetime) -> datetime:
        """The first fire time strictly after ``instant`` (aware), as an aware UTC datetime."""
        if instant.tzinfo is None or instant.utcoffset() is None:
            raise ValueError("next_after needs a timezone-aware datetime")
        now = instant.astimezone(UTC).replace(tzinfo=None)
        if now.year >= 9999:
            raise CronError(f"Cron: '{self.expression}' has no fire time after {instant}")
        if self._t.fixed:
            return self._wall_from(self._step_past(now)).replace(tzinfo=UTC)
        return self._next_zoned(now).replace(tzinfo=UTC)

    # --- the search, in naive datetimes: wall clock in the zone, or UTC ---

    def _step_past(self, wall: datetime) -> datetime:
        """The first whole second (or minute) strictly after ``wall``."""
        if self.has_seconds:
            return wall.replace(microsecond=0) + timedelta(seconds=1)
        return wall.replace(second=0, microsecond=0) + timedelta(minutes=1)

    def _wall_from(self, start: datetime) -> datetime:
        found = self._search(start)
        if found is None:
            raise CronError(f"Cron: '{self.expression}' has no fire time after {start}")
        return found

    def _search(self, start: datetime) -> datetime | None:
        """The first matching wall-clock time at or after ``start``, jumping field by
        field; a value past a field's end carries into the next field up."""
        t = self._t
        y, mo, d = start.year, start.month, start.day
        h, mi, s = start.hour, start.minute, start.second
        last_year = min(y + _SEARCH_YEARS, 9999)
        while y <= last_year:
            if t.months[mo] < 0:
                y, mo, d, h, mi, s = y + 1, 1, 1, 0, 0, 0
                continue
            if t.months[mo] != mo:
                mo, d, h, mi, s = t.months[mo], 1, 0, 0, 0
            day = self._next_day(y, mo, d)
            if day < 0:
                mo, d, h, mi, s = mo + 1, 1, 0, 0, 0
                continue
            if day != d:
                d, h, mi, s = day, 0, 0, 0
            if t.hours[h] < 0:
                d, h, mi, s = d + 1, 0, 0, 0
                continue
            if t.hours[h] != h:
                h, mi, s = t.hours[h], 0, 0
            if t.minutes[mi] < 0:
                h, mi, s = h + 1, 0, 0
                continue
            if t.minutes[mi] != mi:
                mi, s = t.minutes[mi], 0
            if t.seconds[s] < 0:
                mi, s = mi + 1, 0
                continue
            return datetime(y, mo, d, h, mi, t.seconds[s])
        return None

    def _next_day(self, y: int, mo: int, d: int) -> int:
        """The first allowed day >= d in month ``mo`` of year ``y``, or -1."""
        t = self._t
        days = calendar.monthrange(y, mo)[1] if mo == 2 else _MAX_DAYS[mo]
        if d > days:
            return -1
        if t.dom_star and t.dow_star:
            return d
        mask = t.dom_mask
        if not t.dow_star:
            first = (date(y, mo, 1).weekday() + 1) % 7  # cron weekday of day 1
            week = ((t.dow_mask >> first) | (t.dow_mask << (7 - first))) & 0x7F
            # Repeat the 7-day pattern five times (bit 1 = day 1) to cover 35 days.
            by_weekday = (week * 0x10204081) << 1
            mask = by_weekday if t.dom_star else mask | by_weekday
        mask = (mask & ((1 << (days + 1)) - 1)) >> d
        if not mask:
            return -1
        return d + (mask & -mask).bit_length() - 1

    def _next_zoned(self, now: datetime) -> datetime:
        """Resolve wall-clock matches to UTC instants by the module's DST rules."""
        zone = self._zone
        local = now.replace(tzinfo=UTC).astimezone(zone)
        cursor = self._step_past(local.replace(tzinfo=None))
        later = _offset(local.replace(fold=1))
        if self._t.interval_like and local.fold == 0 and later != _offset(local):
            # ``now`` is in the first pass of a repeated hour: finish that pass, then
            # replay the repeated wall-clock times from the start of the second pass.
            fold_end = _transition(zone, now, now + (_offset(local) - later))
            fire = self._wall_from(cursor) - _offset(local)
            if fire < fold_end:
                return fire
            cursor = fold_end + later
        for _ in range(_MAX_DST_STEPS):
            fire_or_none, cursor = self._resolve(self._wall_from(cursor), now)
            if fire_or_none is not None:
                return fire_or_none
        raise CronError(f"Cron: '{self.expression}' has no fire time after {now} UTC")

    def _resolve(self, wall: datetime, now: datetime) -> tuple[datetime | None, datetime]:
        """The UTC instant for a matching wall time, or None and where to search next."""
        zone = self._zone
        off0 = _offset(wall.replace(tzinfo=zone))  # PEP 495: fold=0 uses the old offset
        off1 = _offset(wall.replace(tzinfo=zone, fold=1))
        first, second = wall - off0, wall - off1
        if first > now and off0 >= off1:  # an ordinary time, or first pass of a repeat
            return first, wall
        if off0 > off1:  # repeated time whose first pass is already behind ``now``
            if self._t.interval_like and second > now:
                return second, wall
            return None, _transition(zone, first, second) + off0  # end of the repeat
        if off0 < off1:  # inside a spring-forward gap: the wall time never happens
            change = _transition(zone, second, first)
            if self._t.interval_like or change <= now:
                return None, change + off1  # the first wall time after the gap
            return change, wall
        return None, self._step_past(wall)


def parse_cron(expr: str, timezone: str = "UTC") -> CronSchedule:
    """Same as :meth:`CronSchedule.parse`."""
    return CronSchedule.parse(expr, timezone)
