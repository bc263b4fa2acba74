"""The job store interface: where job sources live (a folder today, a table later)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from shared.errors import BadJobName

JOB_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
MAX_NAME_LENGTH = 100

# Paths under /api/webjobs that are management routes, so never job names.
RESERVED_NAMES = frozenset({
    "available", "running", "health", "save", "upload", "execute", "history", "metrics",
    "store", "cron", "schedules", "debug", "debug-session", "secrets", "login",
})


def check_job_name(name: str, *, for_save: bool = False) -> str:
    if not name or len(name) > MAX_NAME_LENGTH or not JOB_NAME_RE.match(name):
        raise BadJobName("A job name must be 1-100 characters of letters, digits, '_' and '-'")
    if for_save and name.lower() in RESERVED_NAMES:
        raise BadJobName(f"'{name}' is reserved for the hub's own routes; pick another name")
    return name


@dataclass(frozen=True)
class StoredJob:
    name: str
    code: str
    modified: float  # seconds since the epoch


class JobStore(Protocol):
    kind: str

    def get(self, name: str) -> StoredJob | None: ...
    def list_jobs(self) -> list[StoredJob]: ...
    def save(self, name: str, code: str) -> StoredJob: ...
    def delete(self, name: str) -> bool: ...
