"""hub.schedule.cron: parsing, next fire times across DST, and descriptions.

Every expected time below was worked out by hand from the calendar (2026-05-13 is a
Wednesday; 2026-03-01 and 2026-11-01 are Sundays) and from the published DST rules:
Europe/London changes at 01:00 UTC on the last Sundays of March (29th) and October
(25th); America/New_York at 07:00 UTC on 8 March and 06:00 UTC on 1 November 2026.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from itertools import pairwise

import pytest

from hub.schedule.cron import CronError, CronSchedule, parse_cron
from shared.errors import BadRequest


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# Wednesday 2026-05-13, 10:17:30 UTC.
START = utc("2026-05-13T10:17:30")

NEXT_UTC = [
    # plain fields
    ("* * * * *", START, "2026-05-13T10:18"),
    ("5 * * * *", START, "2026-05-13T11:05"),
    ("0 0 * * *", START, "2026-05-14T00:00"),
    ("30 10-12 * * *", START, "2026-05-13T10:30"),
    ("0,45 * * * *", START, "2026-05-13T10:45"),
    ("*/15 * * * *", START, "2026-05-13T10:30"),
    ("10-20/5 * * * *", START, "2026-05-13T10:20"),
    ("7/20 * * * *", START, "2026-05-13T10:27"),  # 7, 27, 47
    ("50/20 * * * *", START, "2026-05-13T10:50"),  # a/n runs to the field maximum
    ("0 */5 * * *", START, "2026-05-13T15:00"),
    ("  0   12 *\t* *  ", START, "2026-05-13T12:00"),
    # strictly after: an exact fire time is not returned again
    ("0 12 * * *", utc("2026-05-13T12:00"), "2026-05-14T12:00"),
    # months, by number and by name in any case
    ("0 0 1 * *", START, "2026-06-01T00:00"),
    ("0 12 * JAN,jul *", START, "2026-07-01T12:00"),
    ("0 12 1 Mar-apr *", START, "2027-03-01T12:00"),
    ("0 0 1 */4 *", START, "2026-09-01T00:00"),  # 1, 5, 9
    # weekdays: names, ranges, 0 and 7 are Sunday
    ("0 12 * * MON-FRI", START, "2026-05-13T12:00"),
    ("0 9 * * sat", START, "2026-05-16T09:00"),
    ("0 9 * * 0", START, "2026-05-17T09:00"),
    ("0 9 * * 7", START, "2026-05-17T09:00"),
    ("0 9 * * SUN", START, "2026-05-17T09:00"),
    ("0 9 * * 6-7", START, "2026-05-16T09:00"),
    ("0 9 * * 0-2", START, "2026-05-17T09:00"),
    ("0 9 * * 1,3,5", utc("2026-05-13T09:00"), "2026-05-15T09:00"),
    ("0 9 * * MON/2", START, "2026-05-15T09:00"),  # MON/2 = 1,3,5; Wednesday 09:00 is past
    # day-of-month OR day-of-week when both are restricted
    ("0 0 1 * 1", START, "2026-05-18T00:00"),  # Monday comes before 1 June
    ("0 0 15 * 1", START, "2026-05-15T00:00"),  # the 15th comes before Monday
    ("0 0 13 * FRI", START, "2026-05-15T00:00"),  # not "Friday the 13th" (2026-11-13)
    ("0 0 30 2 1", START, "2027-02-01T00:00"),  # Feb 30 never, but Mondays in Feb do
    ("0 0 */10 * 1", START, "2026-05-18T00:00"),  # */10 counts as a restriction
    # one of the two is *: only the other restricts
    ("0 0 13 * *", START, "2026-06-13T00:00"),
    ("0 0 * * FRI", START, "2026-05-15T00:00"),
    ("0 0 */1 * 5", START, "2026-05-15T00:00"),  # */1 is every day, like *
    # nicknames
    ("@yearly", START, "2027-01-01T00:00"),
    ("@annually", START, "2027-01-01T00:00"),
    ("@monthly", START, "2026-06-01T00:00"),
    ("@weekly", START, "2026-05-17T00:00"),
    ("@daily", START, "2026-05-14T00:00"),
    ("@MIDNIGHT", START, "2026-05-14T00:00"),
    ("@hourly", START, "2026-05-13T11:00"),
    # leap days and month ends
    ("0 0 29 2 *", START, "2028-02-29T00:00"),
    ("0 0 29 2 *", utc("2096-03-01T00:00"), "2104-02-29T00:00"),  # 2100 is not leap
    ("0 0 31 * *", START, "2026-05-31T00:00"),
    ("0 0 31 * *", utc("2026-06-01T00:00"), "2026-07-31T00:00"),
    ("0 0 30 * *", utc("2026-02-01T00:00"), "2026-03-30T00:00"),
    ("59 23 31 12 *", START, "2026-12-31T23:59"),
    ("59 23 31 12 *", utc("2026-12-31T23:59"), "2027-12-31T23:59"),
    # six fields: seconds first
    ("*/5 * * * * *", START, "2026-05-13T10:17:35"),
    ("* * * * * *", utc("2026-05-13T10:17:30.500000"), "2026-05-13T10:17:31"),
    ("30 0 12 * * *", START, "2026-05-13T12:00:30"),
    ("0 0 0 1 1 *", START, "2027-01-01T00:00:00"),
    ("15,45 * * * * *", utc("2026-05-13T10:59:50"), "2026-05-13T11:00:15"),
]


@pytest.mark.parametrize(("expr", "start", "expected"), NEXT_UTC)
def test_next_after_in_utc(expr: str, start: datetime, expected: str) -> None:
    fire = CronSchedule.parse(expr).next_after(start)
    assert fire == utc(expected)
    assert fire.tzinfo is UTC


def test_accepts_any_aware_instant_and_rejects_naive() -> None:
    schedule = parse_cron("0 12 * * *")
    plus_two = datetime(2026, 5, 13, 12, 30, tzinfo=timezone(timedelta(hours=2)))  # 10:30 UTC
    assert schedule.next_after(plus_two) == utc("2026-05-13T12:00")
    with pytest.raises(ValueError, match="aware"):
        schedule.next_after(datetime(2026, 5, 13))


def test_next_times() -> None:
    schedule = CronSchedule.parse("0 9,17 * * MON-FRI")
    assert schedule.next_times(utc("2026-05-15T12:00"), 3) == [
        utc("2026-05-15T17:00"),
        utc("2026-05-18T09:00"),
        utc("2026-05-18T17:00"),
    ]
    assert schedule.next_times(START, 0) == []


def test_fields_and_flags() -> None:
    schedule = CronSchedule.parse("0 9 * * 5-7", "Europe/London")
    assert schedule.days_of_week == (0, 5, 6)
    assert schedule.has_seconds is False
    assert schedule.timezone == "Europe/London"
    assert CronSchedule.parse("*/5 * * * * *").has_seconds is True
    assert CronSchedule.parse(" 0  9 * * 5-7 ", "Europe/London") == schedule


# (expression, zone, start, expected fire times in UTC)
DST = [
    # London, spring: 01:30 does not exist on 29 March; fire once at the first instant
    # after the gap (01:00 UTC = 02:00 BST), then 01:30 BST = 00:30 UTC from the next day.
    ("30 1 * * *", "Europe/London", "2026-03-28T02:00",
     ["2026-03-29T01:00", "2026-03-30T00:30"]),
    # London, autumn: 01:30 happens twice on 25 October; only the first (BST) fires.
    ("30 1 * * *", "Europe/London", "2026-10-24T12:00",
     ["2026-10-25T00:30", "2026-10-26T01:30"]),
    ("30 1 * * *", "Europe/London", "2026-10-25T00:45",  # between the two 01:30s
     ["2026-10-26T01:30"]),
    ("30 1 * * *", "Europe/London", "2026-10-25T01:10",  # inside the repeated hour
     ["2026-10-26T01:30"]),
    # A fixed-hour schedule whose gap time and post-gap time collapse: 01:15 -> 01:00 UTC.
    ("15 1,2 * * *", "Europe/London", "2026-03-29T00:00",
     ["2026-03-29T01:00", "2026-03-29T01:15"]),
    # A fixed-hour schedule across the fold: 01:00 BST, then 02:00 and 03:00 GMT.
    ("0 1-3 * * *", "Europe/London", "2026-10-24T23:30",
     ["2026-10-25T00:00", "2026-10-25T02:00", "2026-10-25T03:00"]),
    # Hourly (hour `*`): every real hour once, across the fold and across the gap.
    ("0 * * * *", "Europe/London", "2026-10-24T23:30",
     ["2026-10-25T00:00", "2026-10-25T01:00", "2026-10-25T02:00"]),
    ("0 * * * *", "Europe/London", "2026-03-28T23:30",
     ["2026-03-29T00:00", "2026-03-29T01:00", "2026-03-29T02:00"]),
    ("15 * * * *", "Europe/London", "2026-03-29T00:00",  # 01:15 GMT does not exist
     ["2026-03-29T00:15", "2026-03-29T01:15"]),
    ("*/15 * * * *", "Europe/London", "2026-10-25T00:40",
     ["2026-10-25T00:45", "2026-10-25T01:00", "2026-10-25T01:15", "2026-10-25T01:30",
      "2026-10-25T01:45", "2026-10-25T02:00"]),
    ("*/15 * * * *", "Europe/London", "2026-03-29T00:40",
     ["2026-03-29T00:45", "2026-03-29T01:00", "2026-03-29T01:15"]),
    ("* * * * * *", "Europe/London", "2026-03-29T00:59:58",
     ["2026-03-29T00:59:59", "2026-03-29T01:00:00", "2026-03-29T01:00:01"]),
    ("* * * * * *", "Europe/London", "2026-10-25T00:59:58",
     ["2026-10-25T00:59:59", "2026-10-25T01:00:00", "2026-10-25T01:00:01"]),
    # New York, spring: 02:30 does not exist on 8 March; fire once at 03:00 EDT.
    ("30 2 * * *", "America/New_York", "2026-03-07T12:00",
     ["2026-03-08T07:00", "2026-03-09T06:30"]),
    # New York, autumn: 01:30 EDT (05:30 UTC) fires, 01:30 EST (06:30 UTC) does not.
    ("30 1 * * *", "America/New_York", "2026-10-31T12:00",
     ["2026-11-01T05:30", "2026-11-02T06:30"]),
    ("*/30 * * * *", "America/New_York", "2026-11-01T05:10",
     ["2026-11-01T05:30", "2026-11-01T06:00", "2026-11-01T06:30", "2026-11-01T07:00"]),
    ("0 * * * *", "America/New_York", "2026-11-01T04:30",
     ["2026-11-01T05:00", "2026-11-01T06:00", "2026-11-01T07:00"]),
    # Weekday and clock in the zone, not in UTC: 23:30 Friday in New York is Saturday UTC.
    ("30 23 * * FRI", "America/New_York", "2026-05-13T00:00", ["2026-05-16T03:30"]),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "zone", "start", "expected"), DST)
def test_next_times_across_dst(expr: str, zone: str, start: str, expected: list[str]) -> None:
    fires = CronSchedule.parse(expr, zone).next_times(utc(start), len(expected))
    assert fires == [utc(e) for e in expected]


def test_a_whole_autumn_day_of_quarter_hours_fires_once_per_real_instant() -> None:
    # 25 October 2026 in London lasts 25 hours: 100 quarter hours, none twice.
    schedule = CronSchedule.parse("*/15 * * * *", "Europe/London")
    fires = schedule.next_times(utc("2026-10-24T22:59"), 101)  # 00:00 BST .. 00:00 GMT
    assert fires[0] == utc("2026-10-24T23:00")
    assert fires[-1] == utc("2026-10-26T00:00")
    assert all(b - a == timedelta(minutes=15) for a, b in pairwise(fires))


BAD = [
    ("0 25 * * *", "Cron: the hour field '25' is out of range 0-23"),
    ("60 * * * *", "Cron: the minute field '60' is out of range 0-59"),
    ("0 0 0 * *", "the day-of-month field '0' is out of range 1-31"),
    ("0 0 * 13 *", "the month field '13' is out of range 1-12"),
    ("0 0 * * 8", "the day-of-week field '8' is out of range 0-7"),
    ("0 1,25 * * *", "the hour field '1,25': 25 is out of range 0-23"),
    ("60 * * * * *", "the second field '60' is out of range 0-59"),
    ("* * * *", "Cron: expected 5 fields (minute hour day-of-month month day-of-week) "
                "or 6 with seconds first, got 4"),
    ("* * * * * * *", "got 7"),
    ("", "Cron: the expression is empty"),
    ("   ", "Cron: the expression is empty"),
    ("* " * 101, "longer than 200 characters"),
    ("0 0 ? * MON", "the day-of-month field '?' uses '?', which is not supported"),
    ("0 0 L * *", "the day-of-month field 'L' uses 'L'"),
    ("0 0 15W * *", "the day-of-month field '15W' uses 'W'"),
    ("0 0 * * 5L", "the day-of-week field '5L' uses 'L'"),
    ("0 0 * * MON#2", "the day-of-week field 'MON#2' uses '#'"),
    ("0 0 * * FOO", "the day-of-week field 'FOO': 'FOO' is not a number or day name"),
    ("0 0 * MON *", "the month field 'MON': 'MON' is not a number or month name"),
    ("0 0 * * JAN", "the day-of-week field 'JAN'"),
    ("x * * * *", "the minute field 'x': 'x' is not a number"),
    ("-5 * * * *", "the minute field '-5' is missing a number"),
    ("5- * * * *", "the minute field '5-' is missing a number"),
    ("*/0 * * * *", "the minute field '*/0': the step must be a number from 1 to 60"),
    ("*/x * * * *", "the minute field '*/x': the step must be"),
    ("1/2/3 * * * *", "the minute field '1/2/3': the step must be"),
    ("0 5-2 * * *", "the hour field '5-2': the range 5-2 runs backwards"),
    ("0 0 * * FRI-MON", "the day-of-week field 'FRI-MON': the range FRI-MON runs backwards"),
    ("1,,2 * * * *", "the minute field '1,,2' has an empty list item"),
    ("0 ١ * * *", "the hour field '١'"),  # a non-ASCII digit
    ("@reboot", "Cron: '@reboot' is not a supported nickname"),
    ("@daily 5", "Cron: '@daily' cannot be followed by other fields"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "message"), BAD)
def test_bad_expressions_name_the_problem(expr: str, message: str) -> None:
    with pytest.raises(CronError) as caught:
        CronSchedule.parse(expr)
    assert message in caught.value.message
    assert caught.value.message.startswith("Cron: ")
    assert isinstance(caught.value, BadRequest)
    assert caught.value.code == "HUB-001"


@pytest.mark.parametrize(
    "expr", ["0 0 30 2 *", "0 0 31 2 *", "0 0 31 4,6,9,11 *", "0 0 30,31 FEB *", "0 0 0 31 4 *"]
)
def test_never_firing_expressions_are_refused(expr: str) -> None:
    with pytest.raises(CronError, match=re.escape(f"Cron: '{expr}' never fires")):
        CronSchedule.parse(expr)


@pytest.mark.parametrize("zone", ["Europe/Londn", "Europe", "", "../etc/passwd", "/etc/localtime"])
def test_unknown_zones_are_refused(zone: str) -> None:
    with pytest.raises(CronError, match="is not a known time zone"):
        CronSchedule.parse("0 0 * * *", zone)


def test_unknown_zone_message() -> None:
    with pytest.raises(CronError) as caught:
        CronSchedule.parse("0 0 * * *", "Europe/Londn")
    assert caught.value.message == "Cron: 'Europe/Londn' is not a known time zone"


DESCRIBE = [
    ("30 2 * * 1-5", "Europe/London", "At 02:30, Monday through Friday (Europe/London)"),
    ("*/15 * * * *", "UTC", "Every 15 minutes (UTC)"),
    ("0 9 1 * *", "UTC", "At 09:00, on day 1 of the month (UTC)"),
    ("0 0 * * 0", "UTC", "At 00:00, only on Sunday (UTC)"),
    ("0 0 * * 7", "UTC", "At 00:00, only on Sunday (UTC)"),
    ("0 */2 * * *", "UTC", "Every 2 hours, at minute 0 (UTC)"),
    ("@hourly", "UTC", "Every hour, at minute 0 (UTC)"),
    ("*/5 * * * * *", "UTC", "Every 5 seconds (UTC)"),
    ("0 0 1 * MON", "UTC", "At 00:00, on day 1 of the month or on Monday (UTC)"),
    ("* * * * *", "UTC", "Every minute (UTC)"),
    ("0 9,17 * * *", "UTC", "At 09:00 and 17:00 (UTC)"),
    ("*/10 9-17 * * *", "UTC", "Every 10 minutes, between 09:00 and 17:59 (UTC)"),
    ("0 0 1 1 *", "UTC", "At 00:00, on day 1 of the month, in January (UTC)"),
    ("0 12 * JUN-AUG 5-7", "UTC", "At 12:00, Friday through Sunday, in June through August (UTC)"),
    ("0 12 * * 1,3,5", "UTC", "At 12:00, only on Monday, Wednesday and Friday (UTC)"),
    ("15 30 6 * * *", "UTC", "At 06:30:15 (UTC)"),
    ("0,20,45 * * * *", "America/New_York", "At minutes 0, 20 and 45 (America/New_York)"),
]


@pytest.mark.parametrize(("expr", "zone", "expected"), DESCRIBE)
def test_describe(expr: str, zone: str, expected: str) -> None:
    assert CronSchedule.parse(expr, zone).describe() == expected


def test_many_schedules_parse_and_search_quickly_enough_to_run() -> None:
    # Not a timed assertion: exercises the search on a broad mix of shapes and zones
    # and checks every answer is a real match strictly after the start.
    exprs = ["*/7 * * * *", "0 0 29 2 *", "5 4 * * SUN", "0 22 * * 1-5", "@monthly",
             "0 0 1,15 * 3", "*/20 * * * * *", "0 12 31 */2 *"]  # fmt: skip
    start = utc("2026-01-01T00:00")
    for zone in ("UTC", "Europe/London", "America/New_York", "Australia/Lord_Howe"):
        for expr in exprs:
            schedule = CronSchedule.parse(expr, zone)
            fires = schedule.next_times(start, 50)
            assert fires == sorted(set(fires))
            assert fires[0] > start
