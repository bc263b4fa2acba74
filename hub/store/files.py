"""Jobs as ``<name>.job.js`` files in one folder (``WEBJOB_JOBS_DIR``), with every
saved version kept beside them::

    <folder>/<name>.job.js                      the job as it runs now
    <folder>/.versions/<name>/<n>.job.js        version n's code
    <folder>/.versions/<name>/index.json        saved time, saver, size, digest per version

Every file is written beside its target and renamed over it, so a reader sees the
old file or the new one, never half of one. ``index.json`` is written last and is
what makes a version exist: a crash before it leaves at worst an unlisted file that
the next save overwrites.

A job file the hub did not write (edited by hand, copied in, or older than version
keeping) is told apart by its digest: when it differs from the newest saved version
the job reports version newest+1, saved by nobody, at the file's modification time,
and lists it as such. It is not written to the history on reading; the next save,
restore or delete snapshots it as that version first, so a hand edit is never lost.

Deleting a job removes its file only: its versions stay, so it can be restored. The
index then also says when and by whom (``"deleted": {"at", "by"}``); the next save
writes the index without it.

Versions are numbered under a lock shared by every store on the same folder in this
process; the folder is meant for one hub process (several nodes share the ``db`` store).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub.store.base import (
    JOB_NAME_RE,
    DeletedJob,
    JobVersion,
    StoredJob,
    check_base_version,
    check_job_name,
)
from shared.errors import BadRequest, InternalError, NotFound, StoreUnavailable

log = logging.getLogger("webhub.store")
SUFFIX = ".job.js"
VERSIONS_DIR = ".versions"
INDEX = "index.json"

_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


def code_digest(code: str | bytes) -> str:
    """What tells two versions' code apart without reading both (the stores keep it)."""
    data = code.encode("utf-8") if isinstance(code, str) else code
    return hashlib.sha256(data).hexdigest()


def _folder_lock(folder: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(folder.resolve(), threading.Lock())


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class _Entry:
    """One line of a job's ``index.json``."""

    version: int
    saved: float
    saved_by: str | None
    size: int
    digest: str

    def as_json(self) -> dict[str, Any]:
        return {"version": self.version, "saved": self.saved, "savedBy": self.saved_by,
                "size": self.size, "sha256": self.digest}


def _entry(raw: dict[str, Any]) -> _Entry:
    by = raw.get("savedBy")
    return _Entry(int(raw["version"]), float(raw["saved"]), by if isinstance(by, str) else None,
                  int(raw["size"]), str(raw["sha256"]))


@dataclass(frozen=True)
class _Current:
    """The job file as it is now, against its history."""

    job: StoredJob | None        # None: no job file (never saved, or deleted)
    entries: list[_Entry]        # oldest first
    unsaved: bool                # the file is not the newest saved version


def _deleted_job(name: str, last_version: int, mark: Any) -> DeletedJob:
    """A deleted job from its index's ``deleted`` mark (absent before marks were kept)."""
    mark = mark if isinstance(mark, dict) else {}
    at, by = mark.get("at"), mark.get("by")
    return DeletedJob(name, float(at) if isinstance(at, int | float) else None,
                      by if isinstance(by, str) else None, last_version)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class FileJobStore:
    store_name = "files"
    reads_may_block = False

    def __init__(self, folder: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self._lock = _folder_lock(folder)
        self._cache: dict[str, tuple[object, _Current]] = {}

    def reachable(self) -> None:
        try:
            with os.scandir(self.folder) as entries:
                next(entries, None)
        except OSError as exc:
            raise StoreUnavailable(f"The jobs folder cannot be read: {exc.strerror}") from None

    def _path(self, name: str) -> Path:
        return self.folder / f"{name}{SUFFIX}"

    def _history(self, name: str) -> Path:
        # Checked here as well as by callers: the name becomes a folder name.
        return self.folder / VERSIONS_DIR / check_job_name(name)

    # -- reading ------------------------------------------------------------------

    def _index(self, name: str) -> tuple[list[_Entry], dict[str, Any]]:
        """The job's versions (oldest first) and its index's other fields."""
        try:
            raw = json.loads(self._history(name).joinpath(INDEX).read_bytes())
            entries = sorted((_entry(e) for e in raw["versions"]), key=lambda e: e.version)
            return entries, dict(raw)
        except FileNotFoundError:
            return [], {}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InternalError(f"The version index of job '{name}' is damaged: {exc}") from None

    def _entries(self, name: str) -> list[_Entry]:
        return self._index(name)[0]

    def _current(self, name: str) -> _Current:
        """As :meth:`_read_current`, remembered while neither the job file nor its index
        changes (by inode, size and mtime), so listing and running do not re-read and
        re-hash every file each time."""
        key = (_stamp(self._path(name)), _stamp(self._history(name) / INDEX))
        cached = self._cache.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        current = self._read_current(name)
        self._cache[name] = (key, current)
        return current

    def _read_current(self, name: str) -> _Current:
        entries = self._entries(name)
        path = self._path(name)
        try:
            # Bytes, not text mode: universal newlines would turn CRLF into LF.
            data = path.read_bytes()
            modified = path.stat().st_mtime
        except FileNotFoundError:
            return _Current(None, entries, unsaved=False)
        code = data.decode("utf-8", errors="replace")
        newest = entries[-1] if entries else None
        if newest is not None and newest.digest == code_digest(data):
            return _Current(StoredJob(name, code, modified, newest.version, newest.saved_by),
                            entries, unsaved=False)
        number = newest.version + 1 if newest else 1
        return _Current(StoredJob(name, code, modified, number, None), entries, unsaved=True)

    def get(self, name: str) -> StoredJob | None:
        try:
            return self._current(name).job
        except InternalError as exc:
            # A damaged history must not stop the job itself from running: version 0
            # is "unknown". Saving refuses until the index is mended, so no version
            # file is overwritten.
            log.warning("%s", exc.message)
            path = self._path(name)
            try:
                code = path.read_bytes().decode("utf-8", errors="replace")
                return StoredJob(name, code, path.stat().st_mtime)
            except FileNotFoundError:
                return None

    def list_jobs(self) -> list[StoredJob]:
        # The glob does not descend, so .versions and its files are never listed.
        jobs = []
        for path in sorted(self.folder.glob(f"*{SUFFIX}")):
            name = path.name[: -len(SUFFIX)]
            if JOB_NAME_RE.match(name):
                job = self.get(name)
                if job is not None:
                    jobs.append(job)
        return jobs

    def versions(self, name: str) -> list[JobVersion]:
        now = self._current(name)
        current = now.job.version if now.job else None
        found = [JobVersion(name, e.version, e.saved, e.saved_by, e.size, e.version == current)
                 for e in now.entries]
        if now.job is not None and now.unsaved:
            found.append(JobVersion(name, now.job.version, now.job.modified, None,
                                    len(now.job.code.encode("utf-8")), True))
        return found[::-1]

    def get_version(self, name: str, version: int) -> StoredJob | None:
        now = self._current(name)
        if now.job is not None and now.unsaved and version == now.job.version:
            return now.job
        for entry in now.entries:
            if entry.version == version:
                path = self._history(name) / f"{version}{SUFFIX}"
                try:
                    code = path.read_bytes().decode("utf-8", errors="replace")
                except FileNotFoundError:
                    raise InternalError(f"Version {version} of job '{name}' is listed but its "
                                        "file is missing") from None
                return StoredJob(name, code, entry.saved, version, entry.saved_by)
        return None

    # -- writing ------------------------------------------------------------------

    @contextlib.contextmanager
    def _changing(self, name: str) -> Iterator[tuple[list[_Entry], int | None]]:
        """Under the lock: the job's history, with an unsaved hand edit snapshotted, and
        the job's version now (None: no job file)."""
        with self._lock:
            now = self._current(name)
            entries = list(now.entries)
            if now.job is not None and now.unsaved:
                job = now.job
                entries.append(self._record(name, entries, job.code, job.modified, None))
                log.info("[WebJob:%s] kept the file edited outside the hub as version %d",
                         name, job.version)
            yield entries, None if now.job is None else now.job.version

    def _next(self, name: str, entries: list[_Entry], data: bytes, saved: float,
              by: str | None) -> _Entry:
        """The entry for the next version, its code file written (not yet indexed)."""
        entry = _Entry(entries[-1].version + 1 if entries else 1, saved, by, len(data),
                       code_digest(data))
        history = self._history(name)
        history.mkdir(parents=True, exist_ok=True)
        _write_atomic(history / f"{entry.version}{SUFFIX}", data)
        return entry

    def _record(self, name: str, entries: list[_Entry], code: str, saved: float,
                by: str | None) -> _Entry:
        entry = self._next(name, entries, code.encode("utf-8"), saved, by)
        self._write_index(name, [*entries, entry])
        return entry

    def _write_index(self, name: str, entries: list[_Entry],
                     deleted: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"name": name, "versions": [e.as_json() for e in entries]}
        if deleted is not None:
            body["deleted"] = deleted
        _write_atomic(self._history(name) / INDEX, json.dumps(body, indent=1).encode("utf-8"))

    def save(self, name: str, code: str, by: str | None = None,
             base_version: int | None = None) -> StoredJob:
        data = code.encode("utf-8")
        with self._changing(name) as (entries, current):
            check_base_version(name, base_version, current)
            # Version file, then the job file, then the index: until the index names
            # the version, a reader takes the new job file for a hand edit numbered
            # the same, so the number a reader sees never goes backwards.
            entry = self._next(name, entries, data, self.clock(), by)
            _write_atomic(self._path(name), data)
            self._write_index(name, [*entries, entry])
        # What this save wrote, from under the lock: reading the file back afterwards
        # could find a concurrent save's newer version instead.
        return StoredJob(name, code, entry.saved, entry.version, by)

    def restore(self, name: str, version: int, by: str | None = None) -> StoredJob:
        old = self.get_version(name, version)
        if old is None:
            raise NotFound(f"Job '{name}' has no version {version}")
        return self.save(name, old.code, by)

    def delete(self, name: str, by: str | None = None) -> bool:
        with self._changing(name) as (entries, _):
            try:
                self._path(name).unlink()
            except FileNotFoundError:
                return False
            if entries:  # a file the hub kept no version of cannot be restored
                self._write_index(name, entries, {"at": self.clock(), "by": by})
            return True

    def deleted(self) -> list[DeletedJob]:
        history = self.folder / VERSIONS_DIR
        found = []
        for folder in sorted(history.iterdir() if history.is_dir() else []):
            name = folder.name
            if not JOB_NAME_RE.match(name) or self._path(name).exists():
                continue
            try:
                entries, raw = self._index(name)
            except InternalError as exc:
                log.warning("%s", exc.message)
                continue
            if entries:
                found.append(_deleted_job(name, entries[-1].version, raw.get("deleted")))
        return found

    def database_kind(self) -> str | None:
        return None

    def start_listening(self) -> bool:
        return False  # another node's save is seen by reading the folder

    def close(self) -> None:
        return None

    def import_folder(self, folder: Path | None, *, overwrite: bool,
                      by: str | None) -> dict[str, list[str]]:
        raise BadRequest("This node keeps its jobs in files already; set WEBJOB_STORE=db "
                         "to import them into the hub database")

    def report_at_start(self) -> None:
        self.report_non_jobs()

    def report_non_jobs(self) -> list[str]:
        """Plain ``.js`` files in the folder are not jobs: say so (once, at start-up)."""
        strays = sorted(p.name for p in self.folder.glob("*.js") if not p.name.endswith(SUFFIX))
        for name in strays:
            log.info("%s in the jobs folder is not a job (jobs end in %s); ignored", name, SUFFIX)
        return strays
