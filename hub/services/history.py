"""Run history for the hub: records every run and answers the history API.

A run is recorded when it ends, and also as ``running`` once it has run for
:data:`RUNNING_VISIBLE_AFTER_S` (most runs end well before: they cost one
record, not two). Records go through the :class:`~hub.history.recorder.Recorder`,
so the answer never waits on the store. Queries run in a thread (stores are
synchronous).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hub.auth import Caller
from hub.engine.engine import RunResult
from hub.engine.model import JsonParams
from hub.engine.redaction import NO_SECRETS, Redactor
from hub.history.base import MAX_PAGE, HistoryQuery, HistoryStore, JobStats, Metrics
from hub.history.record import (
    MAX_RESULT_BYTES,
    RunRecord,
    bound_calls,
    bound_logs,
    bound_params,
    bound_result,
    textual,
)
from hub.history.record import (
    Caller as RecordCaller,
)
from hub.history.recorder import Recorder
from hub.history.sqlstore import INTERRUPTED
from hub.settings import Settings

# The query and answer types the history routes speak, re-exported so that routes
# reach history through this service only.
__all__ = ["MAX_PAGE", "RUNNING_VISIBLE_AFTER_S", "History", "HistoryQuery", "JobStats",
           "Metrics", "RunRecord", "RunStart", "open_history", "record_caller"]

log = logging.getLogger("webhub.history")
SPOOL_FILE = "history-spool.jsonl"
# A run still going after this long is written as ``running``, so history shows it
# while it runs; a shorter run is written once, when it ends.
RUNNING_VISIBLE_AFTER_S = 0.2


@dataclass(frozen=True)
class RunStart:
    """What is known of a run before it ends."""

    job_id: str
    job_name: str
    job_version: int | None
    source: str
    caller: Caller
    params: Any
    method: str
    ref: str
    schedule_id: str | None = None
    schedule_name: str | None = None
    redactor: Redactor = NO_SECRETS   # the run's secret values, masked in its record


def record_caller(caller: Caller) -> RecordCaller:
    """The caller as history keeps it."""
    return RecordCaller(caller.kind, None if caller.id is None else str(caller.id), caller.name,
                        caller.user_class)


class History:
    def __init__(self, store: HistoryStore, recorder: Recorder, node: str) -> None:
        self.store = store
        self.recorder = recorder
        self.node = node
        self._running_soon: dict[str, asyncio.TimerHandle] = {}  # job id -> its 'running' write

    # -- recording ---------------------------------------------------------------

    def begin(self, start: RunStart) -> RunRecord:
        record = RunRecord(
            job_id=start.job_id, job_name=start.job_name, source=start.source,
            caller=record_caller(start.caller), started=time.time(), node=self.node, ref=start.ref,
            job_version=start.job_version, method=start.method,
            params=start.redactor.deep(start.params.preview if isinstance(
                start.params, JsonParams) else bound_params(start.params)),
            schedule_id=start.schedule_id, schedule_name=start.schedule_name)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on a loop: nothing could cancel a later write
            self.recorder.record(record)
            return record
        self._running_soon[record.job_id] = loop.call_later(
            RUNNING_VISIBLE_AFTER_S, self._show_running, record)
        return record

    def _show_running(self, record: RunRecord) -> None:
        if self._running_soon.pop(record.job_id, None) is not None:
            self.recorder.record(record)

    def _settled(self, record: RunRecord) -> None:
        timer = self._running_soon.pop(record.job_id, None)
        if timer is not None:
            timer.cancel()

    def end(self, record: RunRecord, result: RunResult, calls: list[dict[str, Any]]) -> None:
        """The run's outcome into its record. Its secret values are masked in all of it
        (the console and error are already, the parameters since :meth:`begin`; the
        result and calls here), the result before it is cut, so no part of a value
        survives at the cut."""
        redactor = result.redactor
        logs, cut = bound_logs([{"level": x.level, "message": x.message, "ms": x.t}
                                for x in result.logs])
        changes: dict[str, Any] = {"logs": logs, "logs_truncated": cut,
                                   "calls": redactor.deep(bound_calls(calls)),
                                   "ended": time.time(),
                                   "runtime_ms": result.runtime_ms, "cpu_ms": result.cpu_ms}
        if result.error is None:
            meta = result.meta
            kind = str(meta.get("format") or "")
            body = _masked_body(result.body, redactor) if textual(kind) else result.body
            text, truncated, _ = bound_result(body, kind)
            changes |= {"outcome": "success", "http_status": int(meta.get("status", 200)),
                        "result": text, "result_truncated": truncated,
                        "result_size": len(result.body),
                        "result_type": meta.get("type"), "result_format": meta.get("format")}
        else:
            err = result.error
            changes |= {"outcome": "failed", "code": err.code,
                        "message": redactor.text(err.message),
                        "limit": err.extra.get("limit"), "http_status": err.http_status}
        self._settled(record)
        self.recorder.record(record.finished(**changes))

    def end_abruptly(self, record: RunRecord, message: str) -> None:
        """The run's own machinery failed (not the job): it still ends in history."""
        self._settled(record)
        self.recorder.record(record.finished(
            outcome="failed", code="SYS-500", message=message, ended=time.time(),
            runtime_ms=int((time.time() - record.started) * 1000), http_status=500))

    # -- queries -----------------------------------------------------------------

    async def search(self, query: HistoryQuery) -> list[RunRecord]:
        return await asyncio.to_thread(self.store.search, query)

    async def get(self, job_id: str) -> RunRecord | None:
        return await asyncio.to_thread(self.store.get, job_id)

    async def metrics(self) -> Metrics:
        return await asyncio.to_thread(self.store.metrics, time.time())

    async def job_stats(self, names: Sequence[str]) -> dict[str, JobStats]:
        return await asyncio.to_thread(self.store.job_stats, list(names))

    def reachable(self) -> None:
        """StoreUnavailable when the history store cannot be reached now (in a thread):
        runs are spooled meanwhile, but nothing can be searched."""
        self.store.reachable()

    @property
    def shared(self) -> bool:
        """Every node writes this history (``sql``, ``mongo``), not just this one."""
        return self.store.shared

    def describe(self) -> dict[str, Any]:
        return {"kind": self.store.store_name, "storeReachable": not self.recorder.store_down,
                "spooled": self.recorder.spooled()}

    # -- life cycle --------------------------------------------------------------

    def start_up(self) -> None:
        """Runs this node left ``running`` when it stopped are ``interrupted`` now, before
        any new run is recorded (retention is applied later, in the background)."""
        try:
            marked = self.mark_interrupted(self.node)
            if marked:
                log.info("%d runs left running by the last start of node %s are now "
                         "marked interrupted", marked, self.node)
        except Exception as exc:  # an unreachable store must not stop the hub starting
            log.info("run history store not ready at start (%s); runs will be spooled",
                     getattr(exc, "message", None) or type(exc).__name__)

    def mark_interrupted(self, node: str, started: Sequence[RunRecord] = ()) -> int:
        """``node``'s runs left ``running`` become ``interrupted``, and so do the runs it
        had begun (``started``, from the cluster's registry) that have no record yet (a
        node killed in a run's first moment); how many. In a worker thread."""
        now = time.time()
        code, message = INTERRUPTED
        unrecorded = [run.finished(outcome="interrupted", code=code, message=message, ended=now)
                      for run in started if self.store.get(run.job_id) is None]
        if unrecorded:
            self.store.put(unrecorded)
        return len(unrecorded) + self.store.mark_interrupted(node, now)

    def close(self) -> None:
        self.recorder.close()
        self.store.close()


def _masked_body(body: bytes, redactor: Redactor) -> bytes:
    """At least what history keeps of ``body`` (its first MAX_RESULT_BYTES once masked)
    masked, and more when that is how long ``body`` is: only a prefix is masked, long
    enough that its masked form begins as the whole body's would."""
    if not redactor:
        return body
    # Past a prefix's last ``longest_bytes`` its masking may differ from the whole's (a
    # secret cut in two); three times that is a generous margin, as masking only ever
    # shortens text (a value of 6 or more bytes becomes "***").
    unsure = 3 * redactor.longest_bytes
    size = MAX_RESULT_BYTES + unsure
    while size < len(body):
        masked = redactor.bytes(body[:size])
        if len(masked) > MAX_RESULT_BYTES + unsure:
            return masked
        size *= 2
    return redactor.bytes(body)


def _open_store(settings: Settings) -> HistoryStore:
    if settings.history_store == "sql":
        from hub.history.sqlstore import SqlHistoryStore
        from hub.store.hubdb import open_hub_database

        return SqlHistoryStore(open_hub_database(settings.hub_db),
                               retention_days=settings.history_retention_days, own_db=True)
    if settings.history_store == "mongo":
        from hub.history.mongo import open_mongo_history

        return open_mongo_history(settings.mongo_url,
                                  retention_days=settings.history_retention_days)
    from hub.history.local import open_local_history

    return open_local_history(settings.home, max_runs=settings.history_max,
                              retention_days=settings.history_retention_days)


def open_history(settings: Settings) -> History:
    store = _open_store(settings)
    history = History(store, Recorder(store, settings.home / SPOOL_FILE), settings.node)
    history.start_up()
    return history
