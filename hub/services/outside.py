"""The hub's answers to the calls a job makes to the outside world.

Every policy lives here and in ``hub/outside``, never in the job's context:
``db.exec`` goes to the business database (``WEBJOB_DB``) with the caller's staff
id on the connection; ``http`` goes through the network policy, at most 50 calls
a run. A statement or request still running when its run ends is cancelled by
the engine.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from hub.engine.engine import RunRequest
from hub.outside.database import Database
from hub.outside.http_client import CallBudget, fetch
from hub.outside.netpolicy import NetPolicy, display_url
from shared.errors import JobFailed

log = logging.getLogger("webhub.outside")


MAX_CALLS_KEPT = 100
MAX_SQL_KEPT = 500


def _note(run: RunRequest, level: str, message: str) -> None:
    """Every outbound call is part of the run's console (live, and kept with it)."""
    if run.note is not None:
        run.note(level, message)


def _keep_call(run: RunRequest, call: dict[str, Any]) -> None:
    """The run's outbound calls and queries, for its history record (bounded)."""
    calls = run.host_state.setdefault("calls", [])
    if len(calls) < MAX_CALLS_KEPT:
        calls.append(call)


class HubBridge:
    def __init__(self, database: Database, policy: NetPolicy) -> None:
        self.database = database
        self.policy = policy

    async def call(self, op: str, args: Any, run: RunRequest) -> Any:
        if op == "db.exec":
            return await self._db(args, run)
        if op == "http":
            return await self._http(args, run)
        raise JobFailed(f"'{op}' is not available to jobs")

    async def _db(self, args: Any, run: RunRequest) -> Any:
        sql = args.get("sql") if isinstance(args, dict) else None
        if not isinstance(sql, str):
            raise JobFailed("db.exec(sql, params): the SQL must be text")
        remaining_s = max(0.1, run.limits.runtime_ms / 1000 - (time.monotonic() - run.created))
        call: dict[str, Any] = {"kind": "db", "sql": sql[:MAX_SQL_KEPT]}
        started = time.monotonic()
        try:
            answer = await self.database.exec(sql, args.get("params"), run.staff_id, remaining_s)
            call |= ({"rows": len(answer)} if isinstance(answer, list)
                     else {"affectedRows": answer.get("affectedRows")})
            return answer
        except JobFailed as exc:
            call["error"] = exc.message
            log.info("[WebJob:%s] %s db.exec failed: %s ref=%s", run.job_name, run.job_id,
                     exc.message, run.ref)
            state = exc.extra.get("sqlstate")
            if state:
                exc.extra["job_code"] = str(state)
            raise
        finally:
            call["ms"] = int((time.monotonic() - started) * 1000)
            _keep_call(run, call)

    async def _http(self, args: Any, run: RunRequest) -> Any:
        if not isinstance(args, dict) or not isinstance(args.get("url"), str):
            raise JobFailed("http(url, options): the URL must be text")
        budget = run.host_state.setdefault("http", CallBudget())
        given = args.get("options")
        options: dict[str, Any] = given if isinstance(given, dict) else {}
        method = str(options.get("method") or "GET").upper()
        shown, started = display_url(args["url"]), time.monotonic()
        try:
            budget.take()
            answer: dict[str, Any] = await fetch(args["url"], options, self.policy)
        except JobFailed as exc:
            _note(run, "warn", f"http {method} {shown} refused or failed: {exc.message}")
            _keep_call(run, {"kind": "http", "method": method, "url": shown,
                             "error": exc.message, "ms": _ms_since(started)})
            raise
        size = len(answer.get("base64") or "") * 3 // 4
        ms = _ms_since(started)
        _note(run, "info", f"http {method} {shown} -> {answer.get('status')}, {size} bytes, "
                           f"{ms} ms")
        _keep_call(run, {"kind": "http", "method": method, "url": shown,
                         "status": answer.get("status"), "bytes": size, "ms": ms})
        return answer

    async def close(self) -> None:
        await self.database.close()


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
