"""A schedule as the hub keeps it, and the checks on what clients send to make one.

``check_schedule_input`` is the one gate for create (POST) and update (PUT): every
refusal is a :class:`BadRequest` naming the field, in the API's camelCase spelling.
An update sends only what changes; the rest is taken from the stored schedule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hub.schedule.cron import parse_cron
from hub.store.base import check_job_name
from shared.errors import BadRequest
from shared.text import MAX_JSON_DEPTH, clean_json, loads_json, nesting_depth

__all__ = [
    "CATCH_UP_MODES", "MAX_PARAMS_BYTES", "MAX_PARAMS_DEPTH", "MAX_RETRIES", "OVERLAP_MODES",
    "READ_ONLY_FIELDS", "Schedule", "ScheduleInput", "check_schedule_input", "compact_params",
    "stored_params",
]

CATCH_UP_MODES = ("skip", "one")
OVERLAP_MODES = ("skip", "allow")
MAX_RETRIES = 10
MAX_NAME_LENGTH = 100
MAX_PARAMS_BYTES = 64 * 1024
# The door's limit: a schedule runs what a request could.
MAX_PARAMS_DEPTH = MAX_JSON_DEPTH
# What a client may echo back from a GET in a PUT body: shown, never set by clients.
READ_ONLY_FIELDS = frozenset({"id", "lastRun", "nextRun", "lastStatus", "retryAt",
                              "retryAttempt", "updated", "updatedAt", "updatedBy",
                              "description", "running"})
_FIELDS = frozenset({"name", "cron", "jobName", "job", "params", "enabled", "timezone",
                     "catchUp", "overlap", "maxRetries"})


@dataclass(frozen=True)
class Schedule:
    id: int
    name: str
    cron: str
    job_name: str
    params: str                   # JSON text as stored (normally an object)
    enabled: bool
    timezone: str                 # IANA zone the cron's wall-clock times are in
    catch_up: str                 # skip | one
    overlap: str                  # skip | allow
    max_retries: int              # 0-10
    last_run: float | None        # seconds since the epoch
    next_run: float | None
    last_status: str | None
    retry_at: float | None
    retry_attempt: int            # the pending retry's number; 0 = none pending
    updated: float
    updated_by: str | None = None


@dataclass(frozen=True)
class ScheduleInput:
    """A checked create or (merged) update."""

    name: str
    cron: str                     # as normalised by the parser (single spaces)
    job_name: str
    params: str                   # compact JSON object text
    enabled: bool
    timezone: str
    catch_up: str = "skip"
    overlap: str = "skip"
    max_retries: int = 0


def stored_params(text: str) -> Any:
    """Parameters kept as JSON text, parsed as the door parses a request: None when not
    JSON or nested deeper than ``MAX_PARAMS_DEPTH``; lone surrogates as U+FFFD."""
    try:
        value = loads_json(text)
    except (ValueError, RecursionError):
        return None
    return clean_json(value) if nesting_depth(value) <= MAX_PARAMS_DEPTH else None


def compact_params(value: Any) -> str:
    """``params`` given as an object or as JSON text, as compact JSON object text."""
    if isinstance(value, str):
        value = stored_params(value)
        if value is None:
            raise BadRequest("params: must be a JSON object (the text is not JSON, or it "
                             f"nests deeper than {MAX_PARAMS_DEPTH} levels)")
    if not isinstance(value, dict):
        raise BadRequest("params: must be a JSON object")
    if nesting_depth(value) > MAX_PARAMS_DEPTH:
        raise BadRequest(f"params: nests deeper than {MAX_PARAMS_DEPTH} levels")
    value = clean_json(value)
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if len(text.encode("utf-8")) > MAX_PARAMS_BYTES:
        raise BadRequest(f"params: must be at most {MAX_PARAMS_BYTES // 1024} KB of JSON")
    return text


def _name(value: Any) -> str:
    if not isinstance(value, str):
        raise BadRequest("name: must be text")
    name = value.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH or not name.isprintable():
        raise BadRequest(f"name: must be 1-{MAX_NAME_LENGTH} printable characters")
    return name


def _choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise BadRequest(f"{field}: must be one of {', '.join(allowed)}")
    return str(value)


def _retries(value: Any) -> int:
    # bool is an int subclass in Python, but `true` is not a number of retries.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RETRIES:
        raise BadRequest(f"maxRetries: must be a whole number from 0 to {MAX_RETRIES}")
    return value


def _text(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise BadRequest(f"{field}: must be text")
    return value


def _defaults(existing: Schedule | None, default_tz: str) -> dict[str, Any]:
    if existing is None:
        return {"params": "{}", "enabled": False, "timezone": default_tz, "catchUp": "skip",
                "overlap": "skip", "maxRetries": 0}
    return {"name": existing.name, "cron": existing.cron, "jobName": existing.job_name,
            "params": existing.params, "enabled": existing.enabled,
            "timezone": existing.timezone, "catchUp": existing.catch_up,
            "overlap": existing.overlap, "maxRetries": existing.max_retries}


def check_schedule_input(data: Any, default_tz: str,
                         existing: Schedule | None = None) -> ScheduleInput:
    """``data`` (a JSON body) checked; with ``existing``, a partial update merged into it.
    A new schedule is saved switched off unless ``enabled`` is true."""
    if not isinstance(data, dict):
        raise BadRequest("A schedule must be a JSON object")
    unknown = sorted(set(data) - _FIELDS - READ_ONLY_FIELDS)
    if unknown:
        raise BadRequest(f"{unknown[0]}: not a schedule field")
    given = {k: v for k, v in data.items() if k in _FIELDS}
    if "job" in given:
        job = given.pop("job")
        if given.get("jobName") is None:
            given["jobName"] = job
    merged = {**_defaults(existing, default_tz), **given}
    for field in ("name", "cron", "jobName"):
        if merged.get(field) is None:
            raise BadRequest(f"{field}: is required")
    enabled = merged["enabled"]
    if not isinstance(enabled, bool):
        raise BadRequest("enabled: must be true or false")
    timezone = _text("timezone", merged["timezone"])
    # parse_cron checks the zone too; its CronError names the field it refuses.
    cron = parse_cron(_text("cron", merged["cron"]), timezone).expression
    return ScheduleInput(
        name=_name(merged["name"]),
        cron=cron,
        job_name=check_job_name(_text("jobName", merged["jobName"])),
        # Stored params are kept as they are when not sent: a row written by another
        # tool may hold text that is not JSON, and the run reports that, not the PUT.
        params=(compact_params(merged["params"]) if existing is None or "params" in given
                else existing.params),
        enabled=enabled,
        timezone=timezone,
        catch_up=_choice("catchUp", merged["catchUp"], CATCH_UP_MODES),
        overlap=_choice("overlap", merged["overlap"], OVERLAP_MODES),
        max_retries=_retries(merged["maxRetries"]),
    )
