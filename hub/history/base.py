"""The history store interface, and the query and statistics types it speaks.

Three implementations, one contract suite (``tests/history/test_contract.py``):

* ``local`` — a SQLite file under ``WEBHUB_HOME`` (the embedded default);
* ``sql``   — the ``webjob_runs`` table on the shared hub database (``WEBHUB_DB``);
* ``mongo`` — the ``IQXWebHub.webjob_runs`` collection on ``WEBJOB_MONGO_URL``.

Stores are synchronous and thread-safe; the recorder calls them from its own
thread and the API from a thread pool, never on the event loop. A store that
cannot reach its database raises :class:`shared.errors.StoreUnavailable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from hub.history.record import RunRecord

__all__ = ["HistoryQuery", "HistoryStore", "JobStats", "Metrics"]

MAX_PAGE = 500


@dataclass(frozen=True)
class HistoryQuery:
    """Filters of ``GET /history``; every one optional. Newest first."""

    limit: int = 50
    offset: int = 0
    search: str | None = None       # substring, case-insensitive: job name, params,
    #                                 result, console text, error message, caller name
    job: str | None = None          # exact job name
    status: str | None = None       # an outcome
    source: str | None = None
    caller: str | None = None       # exact caller name
    since: float | None = None      # started >= since (epoch seconds)
    until: float | None = None      # started < until
    schedule_id: str | None = None


@dataclass(frozen=True)
class JobStats:
    """Per-job figures for ``/available``."""

    runs: int
    failures: int
    last_started: float | None = None
    last_outcome: str | None = None
    last_runtime_ms: int | None = None
    last_caller: str | None = None
    p50_runtime_ms: int | None = None
    running: bool = False            # a run of it is in flight (in any node's records)

    @property
    def success_rate(self) -> float | None:
        done = self.runs
        return None if done == 0 else round((done - self.failures) / done, 4)


@dataclass(frozen=True)
class Metrics:
    total: int
    successes: int
    failures: int
    runtime_p50_ms: int | None
    runtime_p95_ms: int | None
    runtime_max_ms: int | None
    failures_today: int
    # The last 24 hours, oldest first, the current hour last.
    runs_per_hour: list[int] = field(default_factory=list)
    failures_per_hour: list[int] = field(default_factory=list)
    p95_per_hour_ms: list[int | None] = field(default_factory=list)  # None: no timed runs


class HistoryStore(Protocol):
    store_name: str  # local | sql | mongo: a label for the console, not for branching on
    # Every node of a cluster writes this store (not just this node): a dead node's
    # runs can be found and marked by the others.
    shared: bool

    def put(self, records: Sequence[RunRecord]) -> None:
        """Insert or replace each record (by ``job_id``): a running record is replaced
        by its finished one. Idempotent: the spool may replay a batch."""
        ...

    def get(self, job_id: str) -> RunRecord | None: ...

    def search(self, query: HistoryQuery) -> list[RunRecord]: ...

    def job_stats(self, names: Sequence[str]) -> dict[str, JobStats]:
        """Stats for each named job that has runs (others are left out)."""
        ...

    def metrics(self, now: float) -> Metrics: ...

    def mark_interrupted(self, node: str, now: float) -> int:
        """The runs this node left ``running`` become ``interrupted``; how many."""
        ...

    def prune(self, now: float) -> int:
        """Apply retention (and, for local, the size cap); how many runs went."""
        ...

    def reachable(self) -> None:
        """One cheap round trip to the store (for the readiness probe); StoreUnavailable
        when it cannot be reached."""
        ...

    def close(self) -> None: ...
