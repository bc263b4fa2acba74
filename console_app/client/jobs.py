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
    "JobInfo",
    "JobList",
    "LastRun",
    "RunningRun",
    "available",
    "code",
    "delete",
    "execute_stream",
    "job_path",
    "job_url",
    "restore",
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
    answer = conn.fetch("GET", f"{job_path(name)}/code")
    return answer.body.decode("utf-8", errors="replace")


def save(conn: HubConnection, name: str, source: str) -> dict[str, Any]:
    """Write a job; raises JobDoesNotParse (``.line``/``.column``) or BadJobName."""
    return dict(conn.post(f"{API}/save", json={"name": name, "code": source}).get("job") or {})


def upload(conn: HubConnection, path: Path, name: str | None = None) -> dict[str, Any]:
    """A ``.job.js`` file; the hub names the job after the file unless ``name`` is given."""
    files = {"file": (path.name, path.read_bytes(), "text/javascript")}
    data = {"name": name} if name else {}
    return dict(conn.call("POST", f"{API}/upload", files=files, data=data).get("job") or {})


def delete(conn: HubConnection, name: str) -> None:
    conn.delete(job_path(name))


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
