"""The editor window's hub calls, blocking (run them through ``session.tasks``).

The lost-update guard needs the version the editor opened: the hub sends it with the
code (``X-Job-Version``) and with a save's answer (``job.currentVersion``). From a hub
that does not, :func:`load_job` reads the current version *before* the code, so a save
landing in between can only make the editor think it opened an older version (its next
save is then questioned, never silently let through). Answers are decoded into their
``shared.wire`` shapes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.client.history import HistoryFilters, list_runs
from console_app.client.secrets import list_secrets
from console_app.editor.live_check import CodeProblem

__all__ = ["LoadedJob", "current_version", "last_run_params", "load_job",
           "missing_secret_problems", "save_job"]

_SECRETS_LINE_RE = re.compile(r"^\s*\*?\s*Secrets\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class LoadedJob:
    code: str
    version: int | None   # None: the hub keeps no versions of it (a save is not guarded)


def current_version(conn: HubConnection, name: str) -> int | None:
    return next((v.version for v in api.versions(conn, name) if v.current), None)


def _version(value: Any) -> int | None:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value else None


def load_job(conn: HubConnection, name: str) -> LoadedJob:
    answer = conn.fetch("GET", f"{api.job_path(name)}/code")
    code = answer.body.decode("utf-8", errors="replace")
    header = {k.lower(): v for k, v in answer.headers.items()}.get("x-job-version")
    if header is not None:
        return LoadedJob(code, _version(header))
    version = current_version(conn, name)
    return LoadedJob(api.code(conn, name), version)


def save_job(conn: HubConnection, name: str, code: str, base_version: int | None
             ) -> int | None:
    """Save ``code`` if the job is still at ``base_version`` (None: whatever it is now);
    the hub answers JobChanged (HUB-010) otherwise. Returns the version now current."""
    return _version(api.save_shape(conn, name, code, base_version).job.currentVersion)


def last_run_params(conn: HubConnection, name: str) -> dict[str, Any] | None:
    """The parameters of the job's latest run in history (masked values as masked)."""
    page = list_runs(conn, HistoryFilters(job=name, limit=1))
    params = page.runs[0].params if page.runs else None
    return params if isinstance(params, dict) else None


def _secrets_line(code: str) -> int:
    for number, line in enumerate(code.split("\n")[:200], start=1):
        if _SECRETS_LINE_RE.match(line):
            return number
    return 1


def missing_secret_problems(conn: HubConnection, code: str, declared: list[str]
                            ) -> list[CodeProblem]:
    """A warning for each declared secret the hub holds no value for."""
    if not declared:
        return []
    stored = {s.name for s in list_secrets(conn) if s.is_set}
    line = _secrets_line(code)
    return [CodeProblem(line, 1, f"Secret '{name}' is not set on the hub: "
                        f"secrets.get(\"{name}\") fails until it is (set it on the Secrets "
                        "page)", "warning", "secret")
            for name in declared if name not in stored]
