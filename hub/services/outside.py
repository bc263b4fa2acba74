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
from hub.outside.netpolicy import NetPolicy
from shared.errors import JobFailed

log = logging.getLogger("webhub.outside")


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
        try:
            return await self.database.exec(sql, args.get("params"), run.staff_id, remaining_s)
        except JobFailed as exc:
            log.info("[WebJob:%s] %s db.exec failed: %s", run.job_name, run.job_id, exc.message)
            state = exc.extra.get("sqlstate")
            if state:
                exc.extra["job_code"] = str(state)
            raise

    async def _http(self, args: Any, run: RunRequest) -> Any:
        if not isinstance(args, dict) or not isinstance(args.get("url"), str):
            raise JobFailed("http(url, options): the URL must be text")
        budget = run.host_state.setdefault("http", CallBudget())
        budget.take()
        return await fetch(args["url"], args.get("options"), self.policy)

    async def close(self) -> None:
        await self.database.close()
