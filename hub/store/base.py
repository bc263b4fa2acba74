"""The job store interface: where job sources live — a folder (``files``) or the
``IQXNetWebJob`` table on the hub database (``db``). Both keep every saved version."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shared.errors import BadJobName, JobChanged
from shared.names import JOB_NAME_RE, MAX_NAME_LENGTH, RESERVED_NAMES

__all__ = ["JOB_NAME_RE", "MAX_NAME_LENGTH", "RESERVED_NAMES", "check_job_name"]



def check_job_name(name: str, *, for_save: bool = False) -> str:
    if not name or len(name) > MAX_NAME_LENGTH or not JOB_NAME_RE.fullmatch(name):
        raise BadJobName("A job name must be 1-100 characters of letters, digits, '_' and '-'")
    if for_save and name.lower() in RESERVED_NAMES:
        raise BadJobName(f"'{name}' is reserved for the hub's own routes; pick another name")
    return name


def check_base_version(name: str, base_version: int | None, current: int | None) -> None:
    """Refuse a save based on another version than the job's ``current`` one (None: no
    job of that name now). ``base_version`` None saves whatever is there; 0 expects no
    job (a new one)."""
    if base_version is None or base_version == (0 if current is None else current):
        return
    if current is None:
        now = "it has been deleted since"
    elif base_version == 0:
        now = f"a job of that name exists now (version {current})"
    else:
        now = f"it is at version {current} now"
    raise JobChanged(f"Job '{name}' changed after version {base_version} was opened: {now}; "
                     "nothing was saved", current_version=current)


@dataclass(frozen=True)
class StoredJob:
    name: str
    code: str
    modified: float               # seconds since the epoch
    version: int = 0              # 1 for the first save, one more for each save; 0: unknown
    updated_by: str | None = None


@dataclass(frozen=True)
class JobVersion:
    """One saved version of a job (its code is read with ``get_version``)."""

    name: str
    version: int
    saved: float
    saved_by: str | None
    size: int                     # bytes of code
    current: bool                 # the version the job has now


@dataclass(frozen=True)
class DeletedJob:
    """A job deleted with its versions kept, and no job of that name now."""

    name: str
    deleted_at: float | None      # None: deleted before deletions were recorded
    deleted_by: str | None
    last_version: int


class JobStore(Protocol):
    # Where the jobs are, as /store and /metrics show it (files | db): a label for
    # people, not for branching on (what differs is said by the members below).
    store_name: str
    # Whether a read may wait on the hub database (its pool, or a server): a caller on
    # the event loop then reads in a thread. A folder's reads are the local disk's.
    reads_may_block: bool

    def get(self, name: str) -> StoredJob | None: ...
    def list_jobs(self) -> list[StoredJob]: ...
    def save(self, name: str, code: str, by: str | None = None,
             base_version: int | None = None) -> StoredJob:
        """A new version. With ``base_version``, JobChanged (nothing saved) unless that
        is the job's version at the moment of writing (see check_base_version)."""
        ...
    def delete(self, name: str, by: str | None = None) -> bool: ...
    def deleted(self) -> list[DeletedJob]:
        """Jobs deleted whose versions are kept, by name."""
        ...
    def versions(self, name: str) -> list[JobVersion]:
        """Newest first; empty for a job never saved."""
        ...
    def get_version(self, name: str, version: int) -> StoredJob | None: ...
    def restore(self, name: str, version: int, by: str | None = None) -> StoredJob:
        """Save version ``version``'s code as a new version; NotFound if there is none."""
        ...
    def reachable(self) -> None:
        """One cheap look at where the jobs are kept (for the readiness probe);
        StoreUnavailable when it cannot be reached."""
        ...
    def database_kind(self) -> str | None:
        """The kind of database the jobs are kept on (sqlite, postgresql, ...); None
        for a folder."""
        ...
    def start_listening(self) -> bool:
        """At hub start: listen for other nodes' changes where the store can be told
        of them; False when it cannot (nothing started)."""
        ...
    def close(self) -> None:
        """At hub stop: stop listening (the store's database is its opener's)."""
        ...
    def report_at_start(self) -> None:
        """What the store says once when the hub starts (a folder: its plain ``.js``
        files, which are no jobs); nothing where it has nothing to say then."""
        ...
    def import_folder(self, folder: Path, *, overwrite: bool,
                      by: str | None) -> dict[str, list[str]]:
        """Copy the jobs folder ``folder`` (there is one: the caller looked) in, see
        hub.store.importer; BadRequest where the store is that folder's kind already."""
        ...
