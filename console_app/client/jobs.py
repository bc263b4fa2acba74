"""The job routes of a hub, as typed functions over :class:`HubConnection`.

Each call blocks; pages run them through ``session.tasks``. Shapes follow
``hub/api/routes.py`` and the README's *Managing jobs over HTTP*: ``/available``
gives each job's header, limits, stats and schedules; runs answer NDJSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from console_app.client.connection import API, CancelToken, HubConnection
from shared.ndjson import StreamEvent

__all__ = [
    "CodeCheck",
    "CodeProblem",
    "DeletedJob",
    "JobInfo",
    "JobList",
    "LastRun",
    "RunningRun",
    "available",
    "check",
    "code",
    "code_and_version",
    "delete",
    "deleted_jobs",
    "execute_stream",
    "job_path",
    "job_url",
    "restore",
    "restore_deleted",
    "run_stream",
    "running",
    "save",
    "schedules_of",
    "stop",
    "upload",
    "version_code",
    "versions",
]


@dataclass(frozen=True)
class LastRun:
    """``stats.lastRun`` of ``/available``: ``started`` is epoch seconds."""

    started: float
    outcome: str          # success | failed | running | interrupted
    runtime: int | None
    by: str | None

    @staticmethod
    def from_json(obj: dict[str, Any] | None) -> LastRun | None:
        if not isinstance(obj, dict) or obj.get("started") is None:
            return None
        return LastRun(float(obj["started"]), str(obj.get("outcome") or ""),
                       obj.get("runtime"), obj.get("by"))


@dataclass(frozen=True)
class JobInfo:
    """One job of ``/available``; ``raw`` keeps every field the hub sent."""

    name: str
    title: str
    description: str
    access: str
    mode: str
    extended: bool
    scheduled: bool
    limits: dict[str, int]
    schedules: list[dict[str, Any]]
    warnings: list[str]
    runs: int
    failures: int
    last_run: LastRun | None
    running: bool
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_page(self) -> bool:
        return self.mode == "page"

    @property
    def has_schedules(self) -> bool:
        return bool(self.schedules)

    @staticmethod
    def from_json(obj: dict[str, Any]) -> JobInfo:
        stats = obj.get("stats") or {}
        return JobInfo(
            name=str(obj["name"]), title=str(obj.get("title") or ""),
            description=str(obj.get("description") or ""),
            access=str(obj.get("access") or "user"), mode=str(obj.get("mode") or "job"),
            extended=bool(obj.get("extended")), scheduled=bool(obj.get("scheduled")),
            limits=dict(obj.get("limits") or {}), schedules=list(obj.get("schedules") or []),
            warnings=[str(w) for w in obj.get("warnings") or []],
            runs=int(stats.get("runs") or 0), failures=int(stats.get("failures") or 0),
            last_run=LastRun.from_json(stats.get("lastRun")),
            running=bool(stats.get("running")), raw=obj)


@dataclass(frozen=True)
class JobList:
    jobs: list[JobInfo]
    store: str


@dataclass(frozen=True)
class RunningRun:
    """A run in flight (``/running``); ``runtime`` is ms at the moment of asking."""

    job_id: str
    job_name: str
    source: str           # http | editor | adhoc | schedule | debug
    runtime: int


@dataclass(frozen=True)
class DeletedJob:
    """One job of ``GET /deleted``: ``deleted_at`` is epoch seconds, None when the job
    was deleted before the hub recorded deletions."""

    name: str
    deleted_at: float | None
    deleted_by: str | None
    last_version: int

    @staticmethod
    def from_json(obj: dict[str, Any]) -> DeletedJob:
        at, by = obj.get("deletedAt"), obj.get("deletedBy")
        return DeletedJob(str(obj["name"]), None if at is None else float(at),
                          None if by is None else str(by), int(obj.get("lastVersion") or 0))


@dataclass(frozen=True)
class CodeProblem:
    """One problem of ``POST /check``: 1-based ``line`` and ``column``."""

    line: int
    column: int
    message: str
    severity: str         # error | warning
    source: str           # syntax | header

    @staticmethod
    def from_json(obj: dict[str, Any]) -> CodeProblem:
        return CodeProblem(int(obj.get("line") or 1), int(obj.get("column") or 1),
                           str(obj.get("message") or ""), str(obj.get("severity") or "error"),
                           str(obj.get("source") or "syntax"))


@dataclass(frozen=True)
class CodeCheck:
    ok: bool              # it parses: a save would not be refused for its syntax
    problems: list[CodeProblem]


def job_path(name: str) -> str:
    return f"{API}/{quote(name, safe='')}"


def job_url(conn: HubConnection, name: str) -> str:
    """Where a browser opens the job (a page job's first page)."""
    return conn.url + job_path(name)


def available(conn: HubConnection) -> JobList:
    data = conn.get(f"{API}/available")
    return JobList([JobInfo.from_json(j) for j in data.get("jobs", [])],
                   str(data.get("store") or ""))


def running(conn: HubConnection) -> list[RunningRun]:
    data = conn.get(f"{API}/running")
    return [RunningRun(str(r.get("jobId", "")), str(r.get("jobName", "")),
                       str(r.get("source", "")), int(r.get("runtime") or 0))
            for r in data.get("running", [])]


def code(conn: HubConnection, name: str) -> str:
    return code_and_version(conn, name)[0]


def code_and_version(conn: HubConnection, name: str) -> tuple[str, int | None]:
    """The job's code and the version it is (what :func:`save` takes as
    ``base_version``); None when the hub cannot tell."""
    answer = conn.fetch("GET", f"{job_path(name)}/code")
    raw = {k.lower(): v for k, v in answer.headers.items()}.get("x-job-version", "")
    version = int(raw) if raw.isascii() and raw.isdigit() else None
    return answer.body.decode("utf-8", errors="replace"), version


def save(conn: HubConnection, name: str, source: str,
         base_version: int | None = None) -> dict[str, Any]:
    """Write a job; raises JobDoesNotParse (``.line``/``.column``) or BadJobName.
    ``base_version`` is the version the editor opened (0: a new job): when the job has
    changed since, JobChanged (``.current_version``, None if deleted) and nothing is
    saved. None saves over whatever is there. The answer's ``currentVersion`` is the
    version just saved."""
    body = {"name": name, "code": source, "baseVersion": base_version}
    return dict(conn.post(f"{API}/save", json=body).get("job") or {})


def check(conn: HubConnection, source: str) -> CodeCheck:
    """The hub's parse check and header warnings for ``source``, nothing saved."""
    data = conn.post(f"{API}/check", json={"code": source})
    return CodeCheck(bool(data.get("ok")),
                     [CodeProblem.from_json(p) for p in data.get("problems") or []])


def upload(conn: HubConnection, path: Path, name: str | None = None) -> dict[str, Any]:
    """A ``.job.js`` file; the hub names the job after the file unless ``name`` is given."""
    files = {"file": (path.name, path.read_bytes(), "text/javascript")}
    data = {"name": name} if name else {}
    return dict(conn.call("POST", f"{API}/upload", files=files, data=data).get("job") or {})


def delete(conn: HubConnection, name: str) -> None:
    conn.delete(job_path(name))


def deleted_jobs(conn: HubConnection) -> list[DeletedJob]:
    """Jobs deleted whose versions the hub keeps (and no job of that name now)."""
    return [DeletedJob.from_json(j) for j in conn.get(f"{API}/deleted").get("jobs", [])]


def restore_deleted(conn: HubConnection, name: str) -> dict[str, Any]:
    """A deleted job back from its last version; Conflict if a job of that name exists."""
    path = f"{API}/deleted/{quote(name, safe='')}/restore"
    return dict(conn.post(path).get("job") or {})


def versions(conn: HubConnection, name: str) -> list[dict[str, Any]]:
    """Saved versions, newest first: version, saved, savedBy, size, current."""
    return list(conn.get(f"{job_path(name)}/versions").get("versions", []))


def version_code(conn: HubConnection, name: str, number: int) -> str:
    return str(conn.get(f"{job_path(name)}/versions/{number}").get("code", ""))


def restore(conn: HubConnection, name: str, number: int) -> dict[str, Any]:
    """Save version ``number``'s code again as the newest version."""
    return dict(conn.post(f"{job_path(name)}/versions/{number}/restore").get("job") or {})


def stop(conn: HubConnection, job_id: str) -> bool:
    """End a run now; NotFound when it is no longer in flight on this node."""
    return bool(conn.post(f"{API}/{quote(job_id, safe='')}/stop").get("stopped"))


def schedules_of(conn: HubConnection, name: str) -> list[dict[str, Any]]:
    """Every schedule (``/schedules``) that runs ``name``, with its plain-words cron."""
    found = conn.get(f"{API}/schedules").get("schedules", [])
    return [s for s in found if s.get("jobName") == name]


def run_stream(conn: HubConnection, name: str, params: dict[str, Any],
               cancel: CancelToken) -> Iterator[StreamEvent]:
    """A saved job run with its console live: log lines, then metadata and payload
    (or one failure). Cancelling hangs up, and the hub stops the run."""
    return conn.stream("POST", f"{job_path(name)}?enableLogger=1", cancel, json=params)


def execute_stream(conn: HubConnection, source: str, params: dict[str, Any],
                   cancel: CancelToken, name: str = "", from_editor: bool = False
                   ) -> Iterator[StreamEvent]:
    """Unsaved code run once (``/execute``), streamed like :func:`run_stream`.
    ``from_editor`` records the run's source as ``editor`` rather than ``adhoc``."""
    filename = f"{name or 'adhoc'}.job.js"
    fields = {"params": json.dumps(params), "enableLogger": "1", "name": name,
              "source": "editor" if from_editor else "adhoc"}
    files = {"file": (filename, source.encode("utf-8"), "text/javascript")}
    return conn.stream("POST", f"{API}/execute", cancel, files=files, data=fields)
