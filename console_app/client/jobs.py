"""The job routes of a hub, as typed functions over :class:`HubConnection`.

Each call blocks; pages run them through ``session.tasks``. Answers are decoded into
their ``shared.wire.jobs`` / ``shared.wire.store`` shapes (a hub answering in another
shape is refused, not half read), then into the console's own views: ``/available``
gives each job's header, limits, stats and schedules; runs answer NDJSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from console_app.client.connection import API, CancelToken, HubConnection
from shared import wire
from shared.ndjson import StreamEvent
from shared.wire import history as wire_history
from shared.wire import jobs as wire_jobs
from shared.wire import schedules as wire_schedules
from shared.wire import store as wire_store

__all__ = [
    "CodeCheck",
    "CodeProblem",
    "DeletedJob",
    "JobInfo",
    "JobList",
    "LastRun",
    "RunningRun",
    "available",
    "available_shape",
    "check",
    "check_shape",
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
    "save_shape",
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
    def from_wire(last: wire_history.JobLastRun | None) -> LastRun | None:
        if last is None:
            return None
        outcome = "" if last.outcome is None else str(wire.encode(last.outcome))
        return LastRun(last.started, outcome, last.runtime, last.by)


@dataclass(frozen=True)
class JobInfo:
    """One job of ``/available``, as the Manage page shows it."""

    name: str
    title: str
    description: str
    access: str
    mode: str
    extended: bool
    scheduled: bool
    limits: wire_jobs.JobLimits
    schedules: tuple[wire_schedules.JobScheduleRef, ...]
    warnings: list[str]
    runs: int
    failures: int
    last_run: LastRun | None
    running: bool

    @property
    def is_page(self) -> bool:
        return self.mode == "page"

    @property
    def has_schedules(self) -> bool:
        return bool(self.schedules)

    @staticmethod
    def from_wire(job: wire_jobs.AvailableJob) -> JobInfo:
        stats = job.stats
        return JobInfo(
            name=job.name, title=job.title, description=job.description or "",
            access=job.access, mode=job.mode, extended=job.extended,
            scheduled=job.scheduled, limits=job.limits, schedules=job.schedules,
            warnings=list(job.warnings), runs=stats.runs, failures=stats.failures,
            last_run=LastRun.from_wire(stats.lastRun), running=stats.running)


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
    def from_wire(job: wire_jobs.DeletedJobInfo) -> DeletedJob:
        return DeletedJob(job.name, job.deletedAt, job.deletedBy, job.lastVersion)


@dataclass(frozen=True)
class CodeProblem:
    """One problem of ``POST /check``: 1-based ``line`` and ``column``."""

    line: int
    column: int
    message: str
    severity: str         # error | warning
    source: str           # syntax | header | strict

    @staticmethod
    def from_wire(problem: wire_jobs.CheckedProblem) -> CodeProblem:
        return CodeProblem(problem.line, problem.column, problem.message, problem.severity,
                           problem.source)


@dataclass(frozen=True)
class CodeCheck:
    ok: bool              # it parses: a save would not be refused for its syntax
    problems: list[CodeProblem]


def job_path(name: str) -> str:
    return f"{API}/{quote(name, safe='')}"


def job_url(conn: HubConnection, name: str) -> str:
    """Where a browser opens the job (a page job's first page)."""
    return conn.url + job_path(name)


def available_shape(conn: HubConnection) -> wire_jobs.JobList:
    """``/available`` as the hub sent it (the editor also reads its modules and maxima)."""
    return conn.typed(wire_jobs.JobList, "GET", f"{API}/available")


def available(conn: HubConnection) -> JobList:
    data = available_shape(conn)
    return JobList([JobInfo.from_wire(j) for j in data.jobs], data.store)


def running(conn: HubConnection) -> list[RunningRun]:
    data = conn.typed(wire_jobs.RunningList, "GET", f"{API}/running")
    return [RunningRun(r.jobId, r.jobName, r.source, r.runtime) for r in data.running]


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
         base_version: int | None = None) -> wire_jobs.JobSummary:
    """Write a job and answer it as saved; raises JobDoesNotParse (``.line``/``.column``)
    or BadJobName.
    ``base_version`` is the version the editor opened (0: a new job): when the job has
    changed since, JobChanged (``.current_version``, None if deleted) and nothing is
    saved. None saves over whatever is there. The answer's ``currentVersion`` is the
    version just saved."""
    return save_shape(conn, name, source, base_version).job


def save_shape(conn: HubConnection, name: str, source: str,
               base_version: int | None = None) -> wire_jobs.JobSaved:
    """:func:`save`'s answer as the hub sent it."""
    body = wire.encode(wire_jobs.SaveRequest(name, source, base_version))
    return conn.typed(wire_jobs.JobSaved, "POST", f"{API}/save", json=body)


def check_shape(conn: HubConnection, source: str) -> wire_jobs.CheckAnswer:
    """``POST /check``'s answer as the hub sent it."""
    body = wire.encode(wire_jobs.CheckRequest(source))
    return conn.typed(wire_jobs.CheckAnswer, "POST", f"{API}/check", json=body)


def check(conn: HubConnection, source: str) -> CodeCheck:
    """The hub's parse check and header warnings for ``source``, nothing saved."""
    data = check_shape(conn, source)
    return CodeCheck(data.ok, [CodeProblem.from_wire(p) for p in data.problems])


def upload(conn: HubConnection, path: Path, name: str | None = None) -> wire_jobs.JobSummary:
    """A ``.job.js`` file; the hub names the job after the file unless ``name`` is given."""
    files = {"file": (path.name, path.read_bytes(), "text/javascript")}
    data = {"name": name} if name else {}
    return conn.typed(wire_jobs.JobSaved, "POST", f"{API}/upload", files=files, data=data).job


def delete(conn: HubConnection, name: str) -> None:
    conn.typed(wire_jobs.JobDeletedAnswer, "DELETE", job_path(name))


def deleted_jobs(conn: HubConnection) -> list[DeletedJob]:
    """Jobs deleted whose versions the hub keeps (and no job of that name now)."""
    found = conn.typed(wire_jobs.DeletedJobs, "GET", f"{API}/deleted")
    return [DeletedJob.from_wire(j) for j in found.jobs]


def restore_deleted(conn: HubConnection, name: str) -> wire_jobs.JobSummary:
    """A deleted job back from its last version; Conflict if a job of that name exists."""
    path = f"{API}/deleted/{quote(name, safe='')}/restore"
    return conn.typed(wire_jobs.JobSaved, "POST", path).job


def versions(conn: HubConnection, name: str) -> tuple[wire_store.VersionInfo, ...]:
    """Saved versions, newest first."""
    return conn.typed(wire_store.VersionList, "GET", f"{job_path(name)}/versions").versions


def version_code(conn: HubConnection, name: str, number: int) -> str:
    path = f"{job_path(name)}/versions/{number}"
    return conn.typed(wire_store.VersionDetail, "GET", path).code


def restore(conn: HubConnection, name: str, number: int) -> wire_jobs.JobSummary:
    """Save version ``number``'s code again as the newest version."""
    path = f"{job_path(name)}/versions/{number}/restore"
    return conn.typed(wire_jobs.JobSaved, "POST", path).job


def stop(conn: HubConnection, job_id: str) -> bool:
    """End a run now; NotFound when it is no longer in flight on this node."""
    path = f"{API}/{quote(job_id, safe='')}/stop"
    done = conn.typed(wire_jobs.StoppedHere | wire_jobs.PassedOn, "POST", path)  # type: ignore[arg-type]
    return bool(done.stopped)


def schedules_of(conn: HubConnection, name: str) -> list[wire_schedules.Schedule]:
    """Every schedule (``/schedules``) that runs ``name``, with its plain-words cron."""
    found = conn.typed(wire_schedules.ScheduleList, "GET", f"{API}/schedules").schedules
    return [s for s in found if s.jobName == name]


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
