"""Whether this node should be sent work now: what the readiness probe checks.

A node is ready when a worker can be had within a short wait, its job store and
history store answer, and the hub database is at this code's schema revision. The
store and schema checks reach databases, so their outcome is kept for a second and
shared: a storm of probes costs one round of checks a second, never one each. A
reason's text is the hub's own words, never a driver's message (those may name
hosts); the detail goes to the log, once each time the node's state changes."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hub.store.hubdb import HubDatabase
from hub.store.migrations import pending_on_pool
from shared.errors import StoreUnavailable, WebJobsError

__all__ = ["Readiness", "Reason"]

log = logging.getLogger("webhub.readiness")

WORKER_WAIT_S = 0.5     # as /health: how long a busy node may take to free a worker
KEEP_S = 1.0            # how long one round of store checks stands for
CHECK_TIMEOUT_S = 2.0   # a probe answers within this even while a check hangs


@dataclass(frozen=True)
class Reason:
    """Why the node is not ready: a short stable code, and a sentence for people."""

    code: str
    text: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "text": self.text}


NO_WORKER = Reason("no-worker", "no worker can be had: every slot is busy with runs "
                   "queued, or no worker is running")
CHECKS_SLOW = Reason("checks-slow", f"the store checks did not finish within "
                     f"{CHECK_TIMEOUT_S:g} s")
CHECK_FAILED = Reason("check-failed", "the store checks failed unexpectedly (see the log)")


class _Reachable(Protocol):
    def reachable(self) -> None: ...


class _Engine(Protocol):
    async def ready(self, wait_s: float = ...) -> bool: ...


class Readiness:
    """The readiness checks of one node: its engine, job catalog, history and the hub
    database (the stores are reached through their services' ``reachable``)."""

    def __init__(self, engine: _Engine, catalog: _Reachable, history: _Reachable,
                 hub_db: HubDatabase, *, clock: Callable[[], float] = time.monotonic,
                 keep_s: float = KEEP_S, timeout_s: float = CHECK_TIMEOUT_S) -> None:
        self.engine = engine
        self.catalog = catalog
        self.history = history
        self.hub_db = hub_db
        self.clock = clock
        self.keep_s = keep_s
        self.timeout_s = timeout_s
        self._kept: tuple[float, list[Reason]] | None = None
        self._checking: asyncio.Task[list[Reason]] | None = None
        self._last_codes: tuple[str, ...] = ()
        self.rounds = 0  # rounds of store checks made (what the cache saves is visible)

    async def reasons(self) -> list[Reason]:
        """Why this node is not ready now; empty when it is."""
        worker_ready, stores = await asyncio.gather(self.engine.ready(WORKER_WAIT_S),
                                                    self._store_reasons())
        found = ([] if worker_ready else [NO_WORKER]) + stores
        self._log_change(found)
        return found

    async def _store_reasons(self) -> list[Reason]:
        kept = self._kept
        if kept is not None and kept[0] > self.clock():
            return kept[1]
        if self._checking is None:  # one round at a time, whatever the number of probes
            self._checking = asyncio.create_task(asyncio.to_thread(self._check_stores))
            self._checking.add_done_callback(self._checked)
        try:
            return await asyncio.wait_for(asyncio.shield(self._checking), self.timeout_s)
        except TimeoutError:
            return [CHECKS_SLOW]

    def _checked(self, task: asyncio.Task[list[Reason]]) -> None:
        self._checking = None
        if task.cancelled():
            return
        failure = task.exception()
        if failure is not None:
            log.warning("readiness: the store checks failed: %r", failure)
        found = [CHECK_FAILED] if failure is not None else task.result()
        self._kept = (self.clock() + self.keep_s, found)

    def _check_stores(self) -> list[Reason]:
        """One round of checks, in a worker thread."""
        self.rounds += 1
        found = [reason for reason, check in (
            (Reason("job-store", "the job store cannot be reached"), self.catalog.reachable),
            (Reason("history-store", "the run history store cannot be reached (runs are "
                    "spooled on this node meanwhile)"), self.history.reachable))
            if not _answers(reason, check)]
        return found + self._schema_reasons()

    def _schema_reasons(self) -> list[Reason]:
        try:
            pending = pending_on_pool(self.hub_db)
        except StoreUnavailable as exc:
            log.info("readiness: %s", exc.message)
            return [Reason("hub-database", "the hub database cannot be reached")]
        except WebJobsError as exc:  # at a revision this code does not know
            log.info("readiness: %s", exc.message)
            return [Reason("schema-newer", "the hub database was upgraded by a newer hub: "
                           "run that version here too")]
        if pending:
            return [Reason("schema-pending", f"the hub database lacks schema revisions "
                           f"{', '.join(pending)}: run `webhub db upgrade`")]
        return []

    def _log_change(self, found: list[Reason]) -> None:
        codes = tuple(reason.code for reason in found)
        if codes == self._last_codes:
            return
        self._last_codes = codes
        if codes:
            log.info("not ready: %s", "; ".join(f"{r.code}: {r.text}" for r in found))
        else:
            log.info("ready again")


def _answers(reason: Reason, check: Callable[[], None]) -> bool:
    try:
        check()
    except Exception as exc:  # any failure of a store means the node cannot serve it
        log.info("readiness: %s: %s", reason.code,
                 getattr(exc, "message", None) or type(exc).__name__)
        return False
    return True
