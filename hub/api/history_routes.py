"""Run history and metrics under /api/webjobs (owner only)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request

from hub.api.deps import CatalogDep, HistoryDep, NodeHealthDep, OwnerDep, SettingsDep
from hub.services.history import MAX_PAGE, History, HistoryQuery, JobStats, RunRecord
from shared.errors import BadRequest, NotFound
from shared.outcomes import OUTCOMES, SOURCES
from shared.wire.history import HistoryPage, Metrics, RunDetail, RunLogs

router = APIRouter(prefix="/api/webjobs")
MAX_OFFSET = 10_000_000
MAX_TEXT = 200
LAST_SECOND = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp()


_WHOLE = re.compile(r"-?[0-9]{1,18}")


def _int_param(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    if raw is None or raw == "":
        return default
    # ASCII digits only: int() also reads other scripts' digits, and " 5" or "5_0".
    if not _WHOLE.fullmatch(raw):
        raise BadRequest(f"'{name}' must be a whole number, not '{raw[:40]}'")
    value = int(raw)
    if value < low or value > high:
        raise BadRequest(f"'{name}' must be between {low} and {high}, not {value}")
    return value


def _time_param(raw: str | None, name: str) -> float | None:
    """ISO 8601 (a date, or a date and time; UTC unless it says otherwise) or epoch ms."""
    if raw is None or raw == "":
        return None
    text = raw.strip()
    refusal = BadRequest(f"'{name}' must be an ISO 8601 date or time (e.g. 2026-11-29 or "
                         f"2026-11-29T13:45:00Z) or epoch milliseconds, not '{text[:40]}'")
    try:
        if text.lstrip("-").isascii() and text.lstrip("-").isdigit():
            seconds = int(text) / 1000
            if abs(seconds) > LAST_SECOND:  # no store keeps (or compares) such a time
                raise refusal
            return seconds
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        raise refusal from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def _choice_param(raw: str | None, name: str, choices: tuple[str, ...]) -> str | None:
    if raw is None or raw == "":
        return None
    if raw not in choices:
        raise BadRequest(f"'{name}' must be one of {', '.join(choices)}, not '{raw[:40]}'")
    return raw


def _text_param(raw: str | None, name: str) -> str | None:
    if raw is None or raw == "":
        return None
    if len(raw) > MAX_TEXT:
        raise BadRequest(f"'{name}' may be at most {MAX_TEXT} characters")
    return raw


# What a history page may be asked for; anything else is a mistake worth an answer
# (a misspelt filter would otherwise give the whole history as if it were the filtered one).
HISTORY_PARAMS = frozenset({"limit", "offset", "search", "job", "status", "source", "caller",
                            "since", "until", "schedule"})


def history_query(request: Request) -> HistoryQuery:
    q = request.query_params
    unknown = sorted(set(q.keys()) - HISTORY_PARAMS)
    if unknown:
        raise BadRequest(f"unknown history filter '{unknown[0][:40]}': the filters are "
                         f"{', '.join(sorted(HISTORY_PARAMS))}")
    since, until = _time_param(q.get("since"), "since"), _time_param(q.get("until"), "until")
    if since is not None and until is not None and until < since:
        raise BadRequest("'until' is before 'since'")
    return HistoryQuery(
        limit=_int_param(q.get("limit"), "limit", 50, 1, MAX_PAGE),
        offset=_int_param(q.get("offset"), "offset", 0, 0, MAX_OFFSET),
        search=_text_param(q.get("search"), "search"),
        job=_text_param(q.get("job"), "job"),
        status=_choice_param(q.get("status"), "status", OUTCOMES),
        source=_choice_param(q.get("source"), "source", SOURCES),
        caller=_text_param(q.get("caller"), "caller"),
        since=since, until=until,
        schedule_id=_text_param(q.get("schedule"), "schedule"))


@router.get("/history", response_model=HistoryPage)
async def history(request: Request, _owner: OwnerDep, runs: HistoryDep) -> object:
    query = history_query(request)
    found = await runs.search(query)
    return {"runs": [r.summary_json() for r in found], "limit": query.limit,
            "offset": query.offset}


@router.get("/metrics", response_model=Metrics)
async def metrics(_owner: OwnerDep, history: HistoryDep, node: NodeHealthDep,
                  catalog: CatalogDep, settings: SettingsDep) -> object:
    figures = await history.metrics()
    slots = node.slots()
    done = figures.successes + figures.failures
    return {
        "total": figures.total, "successes": figures.successes, "failures": figures.failures,
        "successRate": None if done == 0 else round(figures.successes / done, 4),
        "runtime": {"p50": figures.runtime_p50_ms, "p95": figures.runtime_p95_ms,
                    "max": figures.runtime_max_ms},
        "failuresToday": figures.failures_today, "runsPerHour": figures.runs_per_hour,
        "failuresPerHour": figures.failures_per_hour, "p95PerHour": figures.p95_per_hour_ms,
        "workersRunning": slots.running, "workersQueued": slots.queued,
        "workersMax": slots.most, "node": settings.node,
        "stores": {"jobs": catalog.store_kind, "history": history.describe()},
    }


async def _run_record(history: History, job_id: str) -> RunRecord:
    if not job_id or len(job_id) > 100:
        raise NotFound("No run with that id")
    record = await history.get(job_id)
    if record is None:
        raise NotFound(f"No run '{job_id}' in history")
    return record


@router.get("/{job_id}/output", response_model=RunDetail)
async def output(job_id: str, _owner: OwnerDep, history: HistoryDep) -> object:
    return (await _run_record(history, job_id)).as_json()


@router.get("/{job_id}/logs", response_model=RunLogs)
async def logs(job_id: str, _owner: OwnerDep, history: HistoryDep) -> object:
    record = await _run_record(history, job_id)
    return {"jobId": record.job_id, "outcome": record.outcome, "logs": list(record.logs),
            "truncated": record.logs_truncated}


def stats_json(stats: JobStats | None, running_here: bool) -> dict[str, Any]:
    """A job's figures for /available (zeros when it never ran)."""
    if stats is None:
        return {"runs": 0, "failures": 0, "successRate": None, "lastRun": None,
                "p50Runtime": None, "running": running_here}
    last = None if stats.last_started is None else {
        "started": stats.last_started, "outcome": stats.last_outcome,
        "runtime": stats.last_runtime_ms, "by": stats.last_caller}
    return {"runs": stats.runs, "failures": stats.failures, "successRate": stats.success_rate,
            "lastRun": last, "p50Runtime": stats.p50_runtime_ms,
            "running": running_here or stats.running}
