"""What a job name may be: the hub checks it (``hub.store.base.check_job_name``) and the
console says what is wrong before anything is sent, from these same rules."""

from __future__ import annotations

import re

__all__ = ["JOB_NAME_RE", "MAX_NAME_LENGTH", "RESERVED_NAMES"]

# \A and \Z, not ^ and $: "$" also matches before a final newline, so "evil\n" passed.
JOB_NAME_RE = re.compile(r"\A[A-Za-z0-9_-]+\Z")
MAX_NAME_LENGTH = 100

# Paths under /api/webjobs that are management routes, so never job names.
RESERVED_NAMES = frozenset({
    "available", "running", "health", "save", "upload", "execute", "history", "metrics",
    "store", "cron", "schedules", "debug", "debug-session", "secrets", "login", "deleted",
    "check", "healthz", "readyz",
})
