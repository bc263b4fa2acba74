"""What every history store keeps per run, and the rollup arithmetic they share.

A :class:`~hub.history.record.RunRecord` is kept flat (:func:`flatten`): plain
columns for what is filtered on, JSON text for the big parts (params, logs,
calls), and three derived fields:

* ``search_text`` — case-folded job name, params, result (its first
  :data:`SEARCH_RESULT_CHARS`), console text, error message and caller name, one
  per line, so a substring search is one ``LIKE``;
* ``started_hour`` — whole hours since the epoch, the rollups' time key;
* ``rt_bucket`` — which runtime histogram bucket (:data:`BOUNDS`) the run falls in.

Runtime percentiles are *estimated* from bucket counts: the bucket holding the
wanted rank is found and the value interpolated linearly inside it, so an
estimate is never outside the bucket of the true (nearest-rank) percentile. The
buckets grow by about 1.5x, so the error is at most a third of the value.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hub.history.record import Caller, RunRecord
from shared.text import clean_text

__all__ = [
    "BOUNDS",
    "BUCKETS",
    "COLUMNS",
    "FAILED",
    "RECORD_COLUMNS",
    "UNCOUNTED_SOURCES",
    "HourlyFigures",
    "Tallies",
    "Tally",
    "bucket_of",
    "counted",
    "flatten",
    "hourly_figures",
    "percentile",
    "search_pattern",
    "unflatten",
]

# Upper bounds (ms, inclusive) of the runtime buckets; one more bucket above the last.
BOUNDS = (1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500,
          2000, 3000, 5000, 7000, 10_000, 15_000, 20_000, 30_000, 50_000, 70_000, 100_000,
          150_000, 200_000, 300_000, 600_000)
BUCKETS = len(BOUNDS) + 1
# Outcomes that count as failures in stats and metrics (a run cut short did not succeed).
FAILED = ("failed", "interrupted")

COLUMNS = (
    "job_id", "job_name", "source", "caller_kind", "caller_id", "caller_name", "caller_class",
    "started", "node", "ref", "outcome", "job_version", "method", "params", "code", "message",
    "limit_kind", "http_status", "result", "result_truncated", "result_size", "result_type",
    "result_format", "logs", "logs_truncated", "calls", "ended", "runtime_ms", "cpu_ms",
    "schedule_id", "schedule_name", "started_hour", "rt_bucket", "search_text",
)
# The columns a record is read back from (the derived ones are left behind).
RECORD_COLUMNS = COLUMNS[:-3]


def bucket_of(runtime_ms: int | None) -> int | None:
    return None if runtime_ms is None else bisect.bisect_left(BOUNDS, runtime_ms)


# How much of a result search reaches. A trigram index (SQLite's FTS5, PostgreSQL's
# pg_trgm) costs CPU per character on every run written: the first 16 KB of a 1000-row
# result cost 0.5 ms a run, a sixth of such a run's whole CPU on the hub and its
# worker, and 4 KB a quarter of that. The start of a big result is what gets searched
# for; the console, params and error message are searched whole.
SEARCH_RESULT_CHARS = 4 * 1024


def _search_text(r: RunRecord, params_json: str) -> str:
    console = "\n".join(str(line.get("message", "")) for line in r.logs)
    parts = (r.job_name, params_json, (r.result or "")[:SEARCH_RESULT_CHARS], console,
             r.message or "", r.caller.name or "")
    return "\n".join(parts).casefold()


def flatten(r: RunRecord) -> dict[str, Any]:
    """The record as one flat row (see the module docstring), every text in it as
    UTF-8 can carry it: a lone surrogate (valid in JSON and JavaScript, refused by
    every database driver) is U+FFFD. The JSON columns are cleaned as text, which is
    the same as cleaning the values in them and costs one check per column."""
    row = _flat_row(r)
    for key, value in row.items():
        if isinstance(value, str):
            row[key] = clean_text(value)
    return row


def _flat_row(r: RunRecord) -> dict[str, Any]:
    params = json.dumps(r.params, ensure_ascii=False)
    return {
        "job_id": r.job_id, "job_name": r.job_name, "source": r.source,
        "caller_kind": r.caller.kind, "caller_id": r.caller.id, "caller_name": r.caller.name,
        "caller_class": r.caller.user_class, "started": float(r.started), "node": r.node,
        "ref": r.ref, "outcome": r.outcome, "job_version": r.job_version, "method": r.method,
        "params": params, "code": r.code, "message": r.message, "limit_kind": r.limit,
        "http_status": r.http_status, "result": r.result,
        "result_truncated": int(r.result_truncated), "result_size": r.result_size,
        "result_type": r.result_type, "result_format": r.result_format,
        "logs": _json_list(r.logs),
        "logs_truncated": int(r.logs_truncated),
        "calls": _json_list(r.calls),
        "ended": r.ended, "runtime_ms": r.runtime_ms, "cpu_ms": r.cpu_ms,
        "schedule_id": r.schedule_id, "schedule_name": r.schedule_name,
        "started_hour": int(r.started // 3600), "rt_bucket": bucket_of(r.runtime_ms),
        "search_text": _search_text(r, params),
    }


def _json_list(items: tuple[dict[str, Any], ...]) -> str:
    # Most runs log nothing and call nothing: their "[]" costs no encoder.
    return json.dumps(list(items), ensure_ascii=False) if items else "[]"


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def unflatten(row: dict[str, Any]) -> RunRecord:
    """The record a :func:`flatten` row came from."""
    caller = Caller(row["caller_kind"], row["caller_id"], row["caller_name"],
                    row["caller_class"])
    return RunRecord(
        job_id=row["job_id"], job_name=row["job_name"], source=row["source"], caller=caller,
        started=float(row["started"]), node=row["node"], ref=row["ref"],
        outcome=row["outcome"], job_version=_opt_int(row["job_version"]),
        method=row["method"] or "", params=json.loads(row["params"]), code=row["code"],
        message=row["message"], limit=row["limit_kind"],
        http_status=_opt_int(row["http_status"]), result=row["result"],
        result_truncated=bool(row["result_truncated"]), result_size=int(row["result_size"]),
        result_type=row["result_type"], result_format=row["result_format"],
        logs=tuple(json.loads(row["logs"])), logs_truncated=bool(row["logs_truncated"]),
        calls=tuple(json.loads(row["calls"])), ended=_opt_float(row["ended"]),
        runtime_ms=_opt_int(row["runtime_ms"]), cpu_ms=_opt_int(row["cpu_ms"]),
        schedule_id=row["schedule_id"], schedule_name=row["schedule_name"])


def search_pattern(term: str, *, escape: str = "!", brackets: bool = False) -> str:
    """A ``LIKE`` pattern (with ``ESCAPE '!'``) matching ``term`` anywhere, literally."""
    text = term.casefold().replace(escape, escape * 2)
    specials = "%_[" if brackets else "%_"
    for char in specials:
        text = text.replace(char, escape + char)
    return f"%{text}%"


@dataclass
class Tally:
    """Finished runs counted in one rollup cell (an hour, or a job)."""

    runs: int = 0
    failures: int = 0
    rt_count: int = 0
    rt_sum: int = 0
    rt_max: int | None = None
    buckets: list[int] = field(default_factory=lambda: [0] * BUCKETS)

    def add(self, outcome: str, bucket: int | None, sign: int, *, count: int = 1,
            rt_sum: int = 0, rt_top: int | None = None) -> None:
        """Count ``count`` runs of one outcome and runtime bucket in (``sign`` 1) or out
        (-1); ``rt_sum`` is their runtimes' sum, ``rt_top`` the largest. A maximum cannot
        be taken back, so removing runs leaves ``rt_max`` as it was."""
        self.runs += sign * count
        if outcome in FAILED:
            self.failures += sign * count
        if bucket is None:
            return
        self.rt_count += sign * count
        self.rt_sum += sign * rt_sum
        self.buckets[bucket] += sign * count
        if sign > 0 and rt_top is not None and (self.rt_max is None or rt_top > self.rt_max):
            self.rt_max = rt_top

    def merge(self, other: Tally) -> None:
        self.runs += other.runs
        self.failures += other.failures
        self.rt_count += other.rt_count
        self.rt_sum += other.rt_sum
        if other.rt_max is not None and (self.rt_max is None or other.rt_max > self.rt_max):
            self.rt_max = other.rt_max
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets, strict=True)]


UNCOUNTED = ("running", "missed")
# Runs of these sources are kept in history but never counted in stats or metrics: a
# debug session paused on a breakpoint is not a production runtime, nor a stopped one
# a failure.
UNCOUNTED_SOURCES = ("debug",)


def counted(row: dict[str, Any]) -> bool:
    """Whether a flat row counts in the rollups (run statistics, metrics)."""
    return row["outcome"] not in UNCOUNTED and row.get("source") not in UNCOUNTED_SOURCES


@dataclass
class Tallies:
    """Rollup changes by hour and by job, gathered before they are written."""

    hours: dict[int, Tally] = field(default_factory=dict)
    jobs: dict[str, Tally] = field(default_factory=dict)

    def count(self, row: dict[str, Any], sign: int) -> None:
        """Count a flat row in (1) or out (-1); a ``running`` row counts for nothing, nor
        does a ``missed`` one (an occurrence that never ran), nor a debug run."""
        if not counted(row):
            return
        runtime = _opt_int(row["runtime_ms"])
        bucket = bucket_of(runtime)
        for tally in (self.hours.setdefault(int(row["started_hour"]), Tally()),
                      self.jobs.setdefault(row["job_name"], Tally())):
            tally.add(row["outcome"], bucket, sign, rt_sum=runtime or 0, rt_top=runtime)


def percentile(buckets: Sequence[int], fraction: float, top: int | None = None) -> int | None:
    """The ``fraction`` (0..1) percentile estimated from bucket counts (module docstring);
    ``top``, the largest runtime seen, caps the estimate and closes the last bucket."""
    total = sum(buckets)
    if total <= 0:
        return None
    rank = max(1, math.ceil(fraction * total - 1e-9))  # the nearest-rank definition
    seen = 0
    for index, count in enumerate(buckets):
        if count <= 0 or seen + count < rank:
            seen += max(count, 0)
            continue
        low = 0 if index == 0 else BOUNDS[index - 1]
        high = BOUNDS[index] if index < len(BOUNDS) else max(top or low, low)
        estimate = low + (high - low) * (rank - seen) / count
        return round(min(estimate, top) if top is not None else estimate)
    return top


@dataclass
class HourlyFigures:
    """The hour cells of the last 24 hours (oldest first) and today's failures."""

    runs: list[int]
    failures: list[int]
    p95_ms: list[int | None]
    failures_today: int


def hourly_figures(hours: dict[int, Tally], now: float) -> HourlyFigures:
    """Figures from hour tallies keyed by hour number (seconds since the epoch // 3600)."""
    hour_now = int(now // 3600)
    day_start = int(now // 86400) * 24
    cells = [hours.get(hour_now - 23 + i) for i in range(24)]
    return HourlyFigures(
        runs=[c.runs if c else 0 for c in cells],
        failures=[c.failures if c else 0 for c in cells],
        p95_ms=[percentile(c.buckets, 0.95, c.rt_max) if c else None for c in cells],
        failures_today=sum(t.failures for h, t in hours.items() if day_start <= h <= hour_now))

