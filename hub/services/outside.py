"""The hub's answers to the calls a job makes to the outside world.

Every policy lives here and in ``hub/outside``, never in the job's context:
``db.exec`` goes to the business database (``WEBJOB_DB``) with the caller's staff
id on the connection; ``http`` goes through the network policy, at most 50 calls
a run. A statement or request still running when its run ends is cancelled by
the engine.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from hub.engine.engine import RunRequest, RunState
from hub.outside.database import Database
from hub.outside.http_client import CallBudget, fetch
from hub.outside.netpolicy import NetPolicy, display_url
from shared.errors import JobFailed

log = logging.getLogger("webhub.outside")


MAX_CALLS_KEPT = 100
MAX_SQL_KEPT = 500
MAX_ANSWERS_KEPT = 256 * 1024  # bytes of recorded db/http answers per run


def _keep_call(state: RunState, call: dict[str, Any], answer: Any = None) -> None:
    """The run's outbound calls and queries, for its history record (bounded). Each
    keeps its answer while the run's answers stay under MAX_ANSWERS_KEPT bytes, so a
    debugger can replay the run without the database or the network; past that the
    call says ``answerMissing``."""
    calls = state.calls
    if len(calls) >= MAX_CALLS_KEPT:
        return
    if "error" not in call:
        text = json.dumps(answer, separators=(",", ":"), default=str)
        used = state.answers_bytes + len(text)
        if used <= MAX_ANSWERS_KEPT:
            state.answers_bytes = used
            call["answer"] = json.loads(text)
        else:
            call["answerMissing"] = True
    calls.append(call)


class HubBridge:
    def __init__(self, database: Database, policy: NetPolicy) -> None:
        self.database = database
        self.policy = policy

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        """Every outbound call is part of the run's console (``state.note``: live, and
        kept with it) and of its record (``state.calls``)."""
        if op == "db.exec":
            return await self._db(args, run, state)
        if op == "http":
            return await self._http(args, state)
        raise JobFailed(f"'{op}' is not available to jobs")

    async def _db(self, args: Any, run: RunRequest, state: RunState) -> Any:
        sql = args.get("sql") if isinstance(args, dict) else None
        if not isinstance(sql, str):
            raise JobFailed("db.exec(sql, params): the SQL must be text")
        remaining_s = max(0.1, run.limits.runtime_ms / 1000 - (time.monotonic() - run.created))
        call: dict[str, Any] = {"kind": "db", "sql": sql[:MAX_SQL_KEPT]}
        started = time.monotonic()
        answer: Any = None
        try:
            answer = await self.database.exec(sql, args.get("params"), run.staff_id, remaining_s)
            call |= ({"rows": len(answer)} if isinstance(answer, list)
                     else {"affectedRows": answer.get("affectedRows")})
            return answer
        except JobFailed as exc:
            call["error"] = exc.message
            log.info("[WebJob:%s] %s db.exec failed: %s ref=%s", run.job_name, run.job_id,
                     run.redactor.text(exc.message), run.ref)
            sqlstate = exc.extra.get("sqlstate")
            if sqlstate:
                exc.extra["job_code"] = call["errorCode"] = str(sqlstate)
            raise
        finally:
            call["ms"] = int((time.monotonic() - started) * 1000)
            _keep_call(state, call, answer)

    async def _http(self, args: Any, state: RunState) -> Any:
        if not isinstance(args, dict) or not isinstance(args.get("url"), str):
            raise JobFailed("http(url, options): the URL must be text")
        budget = state.http_budget
        if budget is None:
            budget = state.http_budget = CallBudget()
        given = args.get("options")
        options: dict[str, Any] = given if isinstance(given, dict) else {}
        method = str(options.get("method") or "GET").upper()
        shown, started = display_url(args["url"]), time.monotonic()
        try:
            budget.take()
            answer: dict[str, Any] = await fetch(args["url"], options, self.policy)
        except JobFailed as exc:
            state.note("warn", f"http {method} {shown} refused or failed: {exc.message}")
            _keep_call(state, {"kind": "http", "method": method, "url": shown,
                               "error": exc.message, "ms": _ms_since(started)})
            raise
        size = len(answer.get("base64") or "") * 3 // 4
        ms = _ms_since(started)
        state.note("info", f"http {method} {shown} -> {answer.get('status')}, {size} bytes, "
                           f"{ms} ms")
        _keep_call(state, {"kind": "http", "method": method, "url": shown,
                           "status": answer.get("status"), "bytes": size, "ms": ms}, answer)
        return answer

    async def close(self) -> None:
        await self.database.close()


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class ReplayBridge:
    """Answers a replayed run's ``db.exec`` and ``http()`` calls from its recording, in
    order, without touching the database or the network. A call with no recorded
    answer (over the recording's cap, or a call the original run never made) stops
    the replay with a message saying so."""

    def __init__(self, calls: list[dict[str, Any]]) -> None:
        self.calls = list(calls)
        self.position = 0

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        kind = {"db.exec": "db", "http": "http"}.get(op)
        if kind is None:
            raise JobFailed(f"'{op}' is not available to jobs")
        number = self.position + 1
        if self.position >= len(self.calls):
            raise JobFailed(f"Replay: call {number} ({op}) was not made by the recorded run; "
                            "the replay stops here")
        recorded = self.calls[self.position]
        self.position += 1
        if recorded.get("kind") != kind:
            raise JobFailed(f"Replay: call {number} is {op} here but was "
                            f"{recorded.get('kind')} in the recorded run; the replay stops")
        if "error" in recorded:
            failure = JobFailed(str(recorded["error"]))
            if recorded.get("errorCode"):
                failure.extra["job_code"] = str(recorded["errorCode"])
            raise failure
        if "answer" not in recorded:
            raise JobFailed(f"Replay: the answer of call {number} ({op}) was not kept (the "
                            "recording keeps 256 KB of answers a run); the replay stops here")
        state.note("info", f"replay: {op} call {number} answered from the recording")
        return recorded["answer"]

    async def close(self) -> None:
        return None
