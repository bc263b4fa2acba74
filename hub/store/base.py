"""The job store interface: where job sources live — a folder (``files``) or the
``IQXNetWebJob`` table on the hub database (``db``). Both keep every saved version."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from shared.errors import BadJobName

# \A and \Z, not ^ and $: "$" also matches before a final newline, so "evil\n" passed.
JOB_NAME_RE = re.compile(r"\A[A-Za-z0-9_-]+\Z")
MAX_NAME_LENGTH = 100

# Paths under /api/webjobs that are management routes, so never job names.
RESERVED_NAMES = frozenset({
    "available", "running", "health", "save", "upload", "execute", "history", "metrics",
    "store", "cron", "schedules", "debug", "debug-session", "secrets", "login",
})


def check_job_name(name: str, *, for_save: bool = False) -> str:
    if not name or len(name) > MAX_NAME_LENGTH or not JOB_NAME_RE.fullmatch(name):
        raise BadJobName("A job name must be 1-100 characters of letters, digits, '_' and '-'")
    if for_save and name.lower() in RESERVED_NAMES:
        raise BadJobName(f"'{name}' is reserved for the hub's own routes; pick another name")
    return name


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


class JobStore(Protocol):
    kind: str

    def get(self, name: str) -> StoredJob | None: ...
    def list_jobs(self) -> list[StoredJob]: ...
    def save(self, name: str, code: str, by: str | None = None) -> StoredJob: ...
    def delete(self, name: str) -> bool: ...
    def versions(self, name: str) -> list[JobVersion]:
        """Newest first; empty for a job never saved."""
        ...
    def get_version(self, name: str, version: int) -> StoredJob | None: ...
    def restore(self, name: str, version: int, by: str | None = None) -> StoredJob:
        """Save version ``version``'s code as a new version; NotFound if there is none."""
        ...
