"""Jobs in the hub database (``WEBJOB_STORE=db``): one row per job in
``IQXNetWebJob (Name, Code, UpdatedAt, UpdatedBy)``, every saved version in
``IQXNetWebJobVersion``. Several hub nodes may share the database.

* Each node keeps the jobs it has read (:mod:`hub.store.jobcache`), so runs keep
  answering while the database is down: stale code is better than a 503 for a run.
  A job this node never read cannot run then (StoreUnavailable saying so); saves,
  versions, listings and every other management call need the database and fail at
  once with StoreUnavailable (the hub database's short connect timeout).
* How a node learns of changes. Every save, restore and delete sends a notification
  (channel ``webhub_jobs``, the job's name) in its transaction, so it goes out at the
  commit. A node that listens (:meth:`DbJobStore.start_listening`, PostgreSQL through
  psycopg) hands out its copy without asking the database at all, and checks a job
  again only when told it changed; after every (re)connect of its listener, and every
  ``REVALIDATE_EVERY_S`` (a change made past the hub sends no notification), one
  query of every job's stamp (``UpdatedAt``, ``UpdatedBy``, newest version and
  digest; no code) finds what changed meanwhile. Another node's save reaches it as
  fast as the notification (milliseconds), its own saves at once. While its
  listener is away (its connection lost, found by the socket or the listener's
  keepalive, however well the node's other connections work) it trusts no copy: it
  checks each use as below until the resync after the listener's next connect, and
  its whole-cache checks trust nothing meanwhile.
* A node that does not listen (SQLite, MariaDB, PostgreSQL through ODBC: no
  notifications; or a store nobody started) asks, before each use of a copy, for
  that one job's stamp: one small indexed read without the code, so every save is
  seen by every node at once, as before. An interval instead would let a node run
  code older than a save that had already answered OK. When that check finds the
  database unreachable the copy is used, and for a second runs use copies without
  asking (a server that does not answer would hold up every run).
* A change made past the hub is noticed by its ``UpdatedAt`` (or its version rows).
* A save is one transaction: the version row and the job row land together. The
  version number is the newest plus one, and ``(Name, Version)`` is the key, so two
  nodes numbering the same version clash; the loser rolls back and tries again.
* ``IQXNetWebJob`` keeps exactly its four columns, so rows written by other tools
  are read as they are. A row whose code is not the newest saved version (written
  outside the hub, or saved before versions were kept) is reported as version
  newest+1, unsaved; the next save, restore or delete keeps it as that version
  first. Each version row carries its code's digest so telling needs no second read
  of the code.
* Delete removes the job row only: the versions stay, so a deleted job can be
  restored, and a job saved again under that name continues its numbering. When and
  by whom is kept in ``IQXNetWebJobDeletion`` until the name is saved again.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from hub.store.base import JOB_NAME_RE, DeletedJob, JobVersion, StoredJob, check_base_version
from hub.store.dialects import Dialect
from hub.store.files import FileJobStore, code_digest
from hub.store.hubdb import Conflict, HubDatabase, Row, Tx, seconds_of
from hub.store.importer import import_files
from hub.store.jobcache import JobCache, Outage, Stamp
from shared.errors import JobChanged, NotFound, StoreUnavailable, WebJobsError

if TYPE_CHECKING:
    from hub.store.notify import Listener

__all__ = ["DELETION_TABLE", "JOBS_CHANNEL", "JOB_TABLE", "VERSION_TABLE", "DbJobStore"]

log = logging.getLogger("webhub.store")
T = TypeVar("T")

JOB_TABLE = "IQXNetWebJob"
VERSION_TABLE = "IQXNetWebJobVersion"
DELETION_TABLE = "IQXNetWebJobDeletion"
SAVE_ATTEMPTS = 20   # each clash means another node saved: one of them always wins
BACKOFF_CAP_S = 0.2
JOBS_CHANNEL = "webhub_jobs"   # a job's name, after each change to it commits
REVALIDATE_EVERY_S = 30.0      # a listening node's check for changes made past the hub

# The job row with its newest version's number and digest, in one statement so the
# two agree even while another node saves; its stamp is the last four columns.
_JOINED = f"""FROM {JOB_TABLE} j LEFT JOIN {VERSION_TABLE} v ON v.Name = j.Name
     AND v.Version = (SELECT MAX(w.Version) FROM {VERSION_TABLE} w WHERE w.Name = j.Name)"""
_CURRENT = f"SELECT j.Name, j.Code, j.UpdatedAt, j.UpdatedBy, v.Version, v.CodeHash {_JOINED}"
_STAMPS = f"SELECT j.Name, j.UpdatedAt, j.UpdatedBy, v.Version, v.CodeHash {_JOINED}"


def _by(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _stamp(row: Row) -> Stamp:
    """What every save changes, from a ``_CURRENT`` or ``_STAMPS`` row."""
    return row[-4], row[-3], row[-2], row[-1]


def _view(row: Row) -> tuple[StoredJob, bool]:
    """A ``_CURRENT`` row as the job, and whether its code is unsaved (see module doc)."""
    name, raw, updated, by, newest, digest = row
    code = "" if raw is None else str(raw)  # another tool's table may allow NULL
    if newest is not None and digest == code_digest(code):
        return StoredJob(name, code, seconds_of(updated), int(newest), _by(by)), False
    number = int(newest) + 1 if newest is not None else 1
    return StoredJob(name, code, seconds_of(updated), number, _by(by)), True


class DbJobStore:
    store_name = "db"
    reads_may_block = True

    def __init__(self, db: HubDatabase, *, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock
        self._writing: dict[str, threading.Lock] = {}
        self._writing_guard = threading.Lock()
        self._cache = JobCache()
        self._outage = Outage(f"The {db.label}")
        self._listener: Listener | None = None
        self._listening = False         # the listener is connected: copies may be trusted
        self._stopping = threading.Event()
        self._revalidator: threading.Thread | None = None
        self.resyncs = 0                # whole-cache checks after a (re)connect of the listener

    def ensure_schema(self) -> None:
        """Create the tables on first use (each node may; ``IF NOT EXISTS``)."""
        self.db.ensure_schema_once(JOB_TABLE, _job_tables)

    # -- reading ------------------------------------------------------------------

    def _current(self, name: str) -> tuple[StoredJob, bool] | None:
        self.ensure_schema()
        row = self.db.read_one(f"{_CURRENT} WHERE j.Name = ?", (name,))
        return _view(row) if row else None

    def get(self, name: str) -> StoredJob | None:
        """The job as it is now; this node's copy when it is known to be current, or
        while the database cannot be reached (see the module docstring)."""
        entry = self._cache.entry(name)
        if entry is not None and (entry.trusted or self._outage.holding()):
            return entry.job
        try:
            job = self._load(name, has_copy=entry is not None)
        except StoreUnavailable as exc:
            self._outage.began(exc.message)
            if entry is None:
                raise StoreUnavailable(
                    f"Job '{name}' cannot be read: {exc.message}. This node has not loaded "
                    "it since it started, so it has no copy to run until the database is "
                    "back") from None
            return entry.job
        self._outage.ended()
        return job

    def cached(self, name: str) -> StoredJob | None:
        """The job when :meth:`get` would hand out this node's copy without asking the
        database (so a caller on the event loop need not go to a thread); else None."""
        entry = self._cache.entry(name)
        return entry.job if entry is not None and entry.trusted else None

    def _load(self, name: str, *, has_copy: bool) -> StoredJob | None:
        """Read ``name`` into the cache. Not listening, a copy is first checked by its
        stamp alone (most runs find it unchanged: no code is read)."""
        self.ensure_schema()
        ticket = self._cache.ticket()
        trusted = self._listening
        if has_copy and not trusted:
            row = self.db.read_one(f"{_STAMPS} WHERE j.Name = ?", (name,))
            entry = self._cache.entry(name)
            if row is not None and entry is not None and _stamp(row) == entry.stamp:
                return entry.job
        row = self.db.read_one(f"{_CURRENT} WHERE j.Name = ?", (name,))
        if row is None:
            self._cache.forget(name)
            return None
        return self._cache.put(name, _view(row)[0], _stamp(row), ticket, trusted=trusted)

    def list_jobs(self) -> list[StoredJob]:
        self.ensure_schema()
        ticket = self._cache.ticket()
        trusted = self._listening
        rows = self.db.read(f"{_CURRENT} ORDER BY j.Name")
        # Rows written by other tools may carry names the hub cannot route to.
        return [self._cache.put(str(r[0]), _view(r)[0], _stamp(r), ticket, trusted=trusted)
                for r in rows if JOB_NAME_RE.match(str(r[0]))]

    def versions(self, name: str) -> list[JobVersion]:
        now = self._current(name)
        rows = self.db.read(f"SELECT Version, SavedAt, SavedBy, Size FROM {VERSION_TABLE} "
                            "WHERE Name = ? ORDER BY Version DESC", (name,))
        current = now[0].version if now else None
        found = [JobVersion(name, int(v), float(saved), _by(by), int(size), int(v) == current)
                 for v, saved, by, size in rows]
        if now is not None and now[1]:
            job = now[0]
            found.insert(0, JobVersion(name, job.version, job.modified, job.updated_by,
                                       len(job.code.encode("utf-8")), True))
        return found

    def get_version(self, name: str, version: int) -> StoredJob | None:
        self.ensure_schema()
        row = self.db.read_one(f"SELECT Code, SavedAt, SavedBy FROM {VERSION_TABLE} "
                               "WHERE Name = ? AND Version = ?", (name, version))
        if row is not None:
            return StoredJob(name, str(row[0]), float(row[1]), version, _by(row[2]))
        now = self._current(name)
        if now is not None and now[1] and now[0].version == version:
            return now[0]
        return None

    # -- writing ------------------------------------------------------------------

    def _write_lock(self, name: str) -> threading.Lock:
        with self._writing_guard:
            return self._writing.setdefault(name, threading.Lock())

    def _retrying(self, name: str, work: Callable[[Tx], T]) -> T:
        """``work`` in a transaction, again when another node took the version number.
        This node's own writers of a job queue up first, so only nodes clash."""
        self.ensure_schema()
        with self._write_lock(name):
            try:
                return self._attempts(name, work)
            finally:  # whether it landed or not (a failed commit may have): read afresh
                self._cache.distrust(name)

    def _attempts(self, name: str, work: Callable[[Tx], T]) -> T:
        for attempt in range(1, SAVE_ATTEMPTS + 1):
            try:
                with self.db.transaction() as tx:
                    done = work(tx)
                    # In the transaction: it goes out at the commit, and only then.
                    self.db.notify(JOBS_CHANNEL, name)
                return done
            except JobChanged:
                raise  # a Conflict too, but the caller's, not a clash between nodes
            except Conflict:
                log.debug("[WebJob:%s] another node took the version number (attempt %d)",
                          name, attempt)
                # Random and growing, so nodes that clashed do not clash again in step.
                time.sleep(random.uniform(0, min(BACKOFF_CAP_S, 0.002 * 2 ** attempt)))
        raise StoreUnavailable(f"Job '{name}' is being saved by others too often; try again")

    def _add_version(self, tx: Tx, name: str, version: int, code: str, saved: float,
                     by: str | None) -> None:
        size = len(code.encode("utf-8"))
        tx.write(f"INSERT INTO {VERSION_TABLE} (Name, Version, Code, SavedAt, SavedBy, Size, "
                 "CodeHash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (name, version, code, saved, by, size, code_digest(code)))

    def _keep_unsaved(self, tx: Tx, name: str) -> tuple[int, bool]:
        """The newest version number, after keeping a job row changed outside the hub
        as a version of its own, and whether there is a job row."""
        row = tx.read_one(f"{_CURRENT} WHERE j.Name = ?", (name,))
        if row is None:
            newest = tx.read_one(f"SELECT MAX(Version) FROM {VERSION_TABLE} WHERE Name = ?",
                                 (name,))
            return (int(newest[0]) if newest and newest[0] is not None else 0), False
        job, unsaved = _view(row)
        if unsaved:
            self._add_version(tx, name, job.version, job.code, job.modified, job.updated_by)
            log.info("[WebJob:%s] kept the code changed outside the hub as version %d",
                     name, job.version)
        return job.version, True

    def save(self, name: str, code: str, by: str | None = None,
             base_version: int | None = None) -> StoredJob:
        def work(tx: Tx) -> StoredJob:
            newest, exists = self._keep_unsaved(tx, name)
            check_base_version(name, base_version, newest if exists else None)
            now = self.clock()
            # The version row first: it is where two saves clash, so only the winner
            # goes on to touch the job row, and no lock is taken there before.
            self._add_version(tx, name, newest + 1, code, now, by)
            changed = tx.write(f"UPDATE {JOB_TABLE} SET Code = ?, UpdatedAt = ?, "
                               "UpdatedBy = ? WHERE Name = ?",
                               (code, now, by, name))
            if changed == 0:
                # No row: a new job, or one deleted since it was read (HubDatabase
                # has MariaDB count matched rows, so an unchanged row is not 0).
                tx.write(f"INSERT INTO {JOB_TABLE} (Name, Code, UpdatedAt, UpdatedBy) "
                         "VALUES (?, ?, ?, ?)", (name, code, now, by))
                tx.write(f"DELETE FROM {DELETION_TABLE} WHERE Name = ?", (name,))
            return StoredJob(name, code, now, newest + 1, by)

        return self._retrying(name, work)

    def restore(self, name: str, version: int, by: str | None = None) -> StoredJob:
        old = self.get_version(name, version)
        if old is None:
            raise NotFound(f"Job '{name}' has no version {version}")
        return self.save(name, old.code, by)

    def delete(self, name: str, by: str | None = None) -> bool:
        def work(tx: Tx) -> bool:
            self._keep_unsaved(tx, name)
            if tx.write(f"DELETE FROM {JOB_TABLE} WHERE Name = ?", (name,)) == 0:
                return False
            tx.write(f"DELETE FROM {DELETION_TABLE} WHERE Name = ?", (name,))
            tx.write(f"INSERT INTO {DELETION_TABLE} (Name, DeletedAt, DeletedBy) "
                     "VALUES (?, ?, ?)", (name, self.clock(), by))
            return True

        return self._retrying(name, work)

    def deleted(self) -> list[DeletedJob]:
        self.ensure_schema()
        rows = self.db.read(
            f"SELECT v.Name, MAX(v.Version), d.DeletedAt, d.DeletedBy FROM {VERSION_TABLE} v "
            f"LEFT JOIN {DELETION_TABLE} d ON d.Name = v.Name "
            f"WHERE NOT EXISTS (SELECT 1 FROM {JOB_TABLE} j WHERE j.Name = v.Name) "
            "GROUP BY v.Name, d.DeletedAt, d.DeletedBy ORDER BY v.Name")
        return [DeletedJob(str(name), None if at is None else float(at), _by(by), int(last))
                for name, last, at, by in rows if JOB_NAME_RE.match(str(name))]

    # -- being told of changes ------------------------------------------------------

    def start_listening(self) -> bool:
        """Listen for changes (PostgreSQL through psycopg): from then on, while the
        listener is connected, this node runs its copies without asking the database.
        False, and nothing started, where the database cannot notify (copies are then
        checked before each use). Call once at start; :meth:`close` stops it."""
        if self._listener is not None or not self.db.supports_notify:
            return False
        self._stopping.clear()
        self._listener = self.db.listen([JOBS_CHANNEL], self._heard, self._resync,
                                        on_lost=self._lost)
        self._revalidator = threading.Thread(target=self._revalidate_now_and_then,
                                             name="webhub-jobs-revalidate", daemon=True)
        self._revalidator.start()
        return True

    def reachable(self) -> None:
        self.db.read("SELECT 1")

    def database_kind(self) -> str | None:
        return self.db.kind

    def import_folder(self, folder: Path, *, overwrite: bool,
                      by: str | None) -> dict[str, list[str]]:
        return import_files(FileJobStore(folder), self, overwrite=overwrite, by=by)

    def close(self) -> None:
        """Stop listening (copies are checked before each use again). The database
        itself is its opener's to close."""
        listener, self._listener = self._listener, None
        self._listening = False
        self._stopping.set()
        if listener is not None:
            listener.close()
        if self._revalidator is not None:
            self._revalidator.join(5)
            self._revalidator = None
        self._cache.distrust_all()

    def _heard(self, channel: str, payload: str) -> None:
        if channel == JOBS_CHANNEL and payload:
            self._cache.distrust(payload)

    @property
    def listening(self) -> bool:
        """Whether this node trusts its copies now: its listener is connected and has
        resynced (False where it cannot listen, and while its listener is away)."""
        return self._listening

    def _lost(self) -> None:
        """The listener lost its connection: changes go unheard until its next resync,
        so every copy is checked before use again (and used while the database is
        unreachable). ``_listening`` first: a read that sees it still True took its
        ticket before the distrust below, so what it reads is not kept."""
        self._listening = False
        self._cache.distrust_all()

    def _resync(self) -> None:
        """After every (re)connect of the listener: what was said while it was away
        is lost, so every copy is checked, all in one query."""
        self._cache.distrust_all()
        self._listening = True
        if self._revalidate():
            self.resyncs += 1

    def _revalidate_now_and_then(self) -> None:
        while not self._stopping.wait(REVALIDATE_EVERY_S):
            self._revalidate()

    def _revalidate(self) -> bool:
        """Every copy against every job's stamp; whether the database answered."""
        ticket = self._cache.ticket()
        try:
            self.ensure_schema()
            rows = self.db.read(_STAMPS)
        except WebJobsError as exc:  # every copy stays distrusted: each use checks it
            log.info("Jobs cached on this node not checked now: %s", exc.message)
            return False
        stale = self._cache.revalidate({str(r[0]): _stamp(r) for r in rows}, ticket,
                                       trust=self._listening)
        self._outage.ended()
        if stale:
            log.info("%d jobs cached on this node changed meanwhile; they are read afresh",
                     stale)
        return True

    def report_at_start(self) -> None:
        # Rows no job name matches come only from outside the hub (a save checks the
        # name); the listings skip them, and reading the whole table at each start of
        # each node to name them is not worth it.
        return None


def _job_tables(d: Dialect) -> list[str]:
    return [
        d.create_table(JOB_TABLE, """Name {varchar}(100) NOT NULL PRIMARY KEY,
            Code {text} NOT NULL,
            UpdatedAt {real} NOT NULL,
            UpdatedBy {varchar}(100)"""),
        d.create_table(VERSION_TABLE, """Name {varchar}(100) NOT NULL,
            Version INTEGER NOT NULL,
            Code {text} NOT NULL,
            SavedAt {real} NOT NULL,
            SavedBy {varchar}(100),
            Size {bigint} NOT NULL,
            CodeHash {varchar}(64) NOT NULL,
            PRIMARY KEY (Name, Version)"""),
        d.create_table(DELETION_TABLE, """Name {varchar}(100) NOT NULL PRIMARY KEY,
            DeletedAt {real} NOT NULL,
            DeletedBy {varchar}(100)"""),
    ]
