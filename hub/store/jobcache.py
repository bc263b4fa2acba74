"""What one hub node keeps of the jobs it has loaded from the hub database, so a run
need not wait on the database for its code (see :class:`hub.store.dbjobs.DbJobStore`).

Each entry is the job as last read (its code, version, saver) with its *stamp*: the
job row's ``UpdatedAt`` and ``UpdatedBy`` and its newest version's number and digest,
which every save changes and which are read without the code. An entry is *trusted*
when nothing can have changed it unseen (the node listens for PostgreSQL
notifications, its listener stayed connected, and none came for it since it was
read: a lost listener distrusts every entry); an untrusted entry is checked
against the database before use, and is still what a run gets while the database
cannot be reached.

Reads and invalidations race: a read that began before a notification must not put
back what the notification said is old. Every invalidation takes the next tick of a
counter; a read takes a ticket (the counter's value) before it asks the database,
and what it read is kept only if nothing touched that name since its ticket.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hub.store.base import StoredJob

__all__ = ["CacheEntry", "JobCache", "Outage", "Stamp"]

log = logging.getLogger("webhub.store")

# (UpdatedAt, UpdatedBy, newest version, its digest) as the database gives them
Stamp = tuple[object, object, object, object]


@dataclass(frozen=True)
class CacheEntry:
    job: StoredJob
    stamp: Stamp
    trusted: bool


class JobCache:
    """Jobs by name, thread-safe (the listener's thread invalidates, runs read)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, CacheEntry] = {}
        self._tick = 0
        self._touched: dict[str, int] = {}   # name -> the tick of its last invalidation
        self._all_touched = 0

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, name: str) -> CacheEntry | None:
        return self._entries.get(name)

    def ticket(self) -> int:
        """Take before reading the database; hand to :meth:`put` with what was read."""
        with self._lock:
            return self._tick

    def _touch(self, name: str | None) -> None:
        self._tick += 1
        if name is None:
            self._all_touched = self._tick
        else:
            self._touched[name] = self._tick

    def _current(self, name: str, ticket: int) -> bool:
        """Whether nothing invalidated ``name`` after ``ticket`` was taken."""
        return self._touched.get(name, 0) <= ticket and self._all_touched <= ticket

    def put(self, name: str, job: StoredJob, stamp: Stamp, ticket: int, *,
            trusted: bool) -> StoredJob:
        """Keep ``job`` as read under ``ticket`` (unless invalidated since); the job
        to hand out: the kept one when its stamp is unchanged, so its code stays the
        same string object (the runner's description cache then hashes it once)."""
        with self._lock:
            known = self._entries.get(name)
            if known is not None and known.stamp == stamp:
                job = known.job
            if self._current(name, ticket):
                self._entries[name] = CacheEntry(job, stamp, trusted)
            return job

    def distrust(self, name: str) -> None:
        """``name`` may have changed: check it before its next use (kept meanwhile, for
        a run while the database is down)."""
        with self._lock:
            self._touch(name)
            known = self._entries.get(name)
            if known is not None and known.trusted:
                self._entries[name] = CacheEntry(known.job, known.stamp, False)

    def forget(self, name: str) -> None:
        with self._lock:
            self._touch(name)
            self._entries.pop(name, None)

    def distrust_all(self) -> None:
        with self._lock:
            self._touch(None)
            self._entries = {name: CacheEntry(e.job, e.stamp, False)
                             for name, e in self._entries.items()}

    def revalidate(self, stamps: Mapping[str, Stamp], ticket: int, *, trust: bool) -> int:
        """Entries against ``stamps`` (every job's, read under ``ticket``): a job gone
        is forgotten, a changed one distrusted, an unchanged one trusted when
        ``trust`` (and not invalidated since ``ticket``). How many were out of date."""
        stale = 0
        with self._lock:
            for name, known in list(self._entries.items()):
                if not self._current(name, ticket):
                    continue  # touched since the stamps were read: they say nothing of it
                now = stamps.get(name)
                if now is None:
                    self._touch(name)
                    del self._entries[name]
                    stale += 1
                elif now != known.stamp:
                    self._touch(name)
                    self._entries[name] = CacheEntry(known.job, known.stamp, False)
                    stale += 1
                elif trust and not known.trusted:
                    self._entries[name] = CacheEntry(known.job, known.stamp, True)
        return stale


class Outage:
    """Whether the hub database was just found unreachable, so that runs of cached
    jobs skip the freshness check for a moment instead of each waiting on a server
    that does not answer (one run probes again after ``hold_s``)."""

    def __init__(self, label: str, hold_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.hold_s = hold_s
        self.clock = clock
        self._down_since: float | None = None
        self._probe_after = 0.0

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def holding(self) -> bool:
        """Within ``hold_s`` of the last failure: do not ask the database now."""
        return self._down_since is not None and self.clock() < self._probe_after

    def began(self, reason: str) -> None:
        now = self.clock()
        self._probe_after = now + self.hold_s
        if self._down_since is None:
            self._down_since = now
            log.warning("%s; runs of the jobs this node has loaded use its copies until "
                        "it is back", reason.rstrip("; \n"))

    def ended(self) -> None:
        if self._down_since is not None:
            log.info("%s reachable again after %.1f s; jobs are read afresh",
                        self.label, self.clock() - self._down_since)
            self._down_since = None
