"""The job catalogue: listing, reading, saving and deleting jobs, their versions, and
moving the jobs folder into the hub database. Async at its boundary: what reads or
writes a store runs in a thread, so the routes never do."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hub.engine.engine import Engine
from hub.engine.strictness import StrictFinding, strict_findings
from hub.services.runs import JobRunner
from hub.store.base import RESERVED_NAMES, JobStore, JobVersion, StoredJob, check_job_name
from hub.store.files import SUFFIX
from shared.errors import (
    BadJobName,
    BadRequest,
    Conflict,
    JobChanged,
    JobDoesNotParse,
    NotFound,
    StoreUnavailable,
)
from shared.header import JobHeader, parse_header, resolve_limits

log = logging.getLogger("webhub.catalog")
MAX_CODE_BYTES = 2 * 1024 * 1024


class Catalog:
    def __init__(self, store: JobStore, runner: JobRunner, engine: Engine,
                 files_dir: Path | None = None) -> None:
        self.store = store
        self.runner = runner
        self.engine = engine
        self.files_dir = files_dir  # the jobs folder, for an import into the database
        # Names no job is saved under: the console's list until the app's routes are
        # known (``reserve``), then also every first segment a route spells out.
        self.reserved: frozenset[str] = RESERVED_NAMES

    @property
    def store_kind(self) -> str:
        """Where the jobs are kept, as /available, /store and /metrics show it: ``files``
        or ``db`` (a label; what differs between stores is the store's business)."""
        return self.store.store_name

    def reserve(self, names: Iterable[str]) -> None:
        """The first path segments the hub's routes take under /api/webjobs: a job of
        such a name could never be run, so none is saved under one."""
        self.reserved = RESERVED_NAMES | {name.lower() for name in names}

    def check_new_name(self, name: str) -> None:
        check_job_name(name, for_save=True)
        if name.lower() in self.reserved:
            raise BadJobName(f"'{name}' is reserved for the hub's own routes; pick another name")

    async def start(self) -> None:
        """At hub start: what the store has to say once (a folder's files that are no
        jobs); and where it can be told of other nodes' changes (the hub database
        through psycopg), listen, so runs use this node's copies of jobs without asking
        the database (see hub.store.dbjobs)."""
        self.store.report_at_start()
        if self.store.start_listening():
            log.info("jobs: this node listens for changes to them (PostgreSQL NOTIFY)")

    async def close(self) -> None:
        """At hub stop, before the database is closed: stop listening."""
        await asyncio.to_thread(self.store.close)

    def summary(self, stored: StoredJob) -> dict[str, Any]:
        """The job as ``/available`` and a save list it. Blocks for the strict-mode
        check of code it has not seen: a caller on the event loop uses ``_summary``."""
        job = self.runner.describe(stored.name, stored.code)
        header, resolved = job.header, job.resolved
        strict = [f.as_text() for f in _strict(header, stored.code)]
        return {
            "name": stored.name,
            "title": header.name or stored.name,
            "description": header.description,
            "author": header.author,
            "version": header.version,
            "lastUpdated": header.last_updated,
            "access": header.access,
            "mode": header.mode,
            "secrets": list(header.secrets),
            "limits": resolved.limits.as_job_view(),
            "extended": resolved.extended,
            "warnings": (header.warnings + list(resolved.notes)
                         + _name_warnings(stored.name, self.reserved) + strict),
            "store": self.store_kind,
            "modified": stored.modified,
            # What an editor sends back as ``baseVersion`` (null: the store cannot tell).
            "currentVersion": stored.version or None,
        }

    def reachable(self) -> None:
        """StoreUnavailable when the job store cannot be reached now (in a thread)."""
        self.store.reachable()

    async def available(self) -> list[dict[str, Any]]:
        """Every job, as ``summary`` gives it (in a thread: the store, and strict mode's
        check of code not seen before)."""
        return await asyncio.to_thread(
            lambda: [self.summary(job) for job in self.store.list_jobs()])

    async def _summary(self, stored: StoredJob) -> dict[str, Any]:
        return await asyncio.to_thread(self.summary, stored)

    async def current(self, name: str) -> StoredJob:
        """The job as it is now (its code and version)."""
        check_job_name(name)
        stored = await asyncio.to_thread(self.store.get, name)
        if stored is None:
            raise NotFound(f"There is no job named '{name}'")
        return stored

    async def version_with(self, name: str, code: str) -> int | None:
        """The job's current version when its code is ``code`` (the editor runs the saved
        text: the run is of that version, and a replay finds it); None otherwise."""
        try:
            stored = await self.current(name)
        except (BadJobName, NotFound):  # no job of that name: an ad-hoc run
            return None
        except StoreUnavailable:  # the run goes ahead; only its version is not known
            return None
        return stored.version if stored.version and stored.code == code else None

    async def check(self, code: str) -> None:
        """Refuse a job whose body does not parse, naming the line."""
        problem = await self.engine.check_syntax(code)
        if not problem.get("ok"):
            line = problem.get("line")
            where = f" (line {line})" if line else ""
            raise JobDoesNotParse(f"{problem.get('message', 'Syntax error')}{where}",
                                  line=line, column=problem.get("column"))

    async def problems(self, code: str) -> dict[str, Any]:
        """What a save would say of ``code``, without saving: the parse check (an
        error), the header's warnings (unreadable values, limits above the server's
        maxima) and what strict mode refuses (unless ``Isolation: fresh``), each with
        its line and column."""
        if len(code.encode("utf-8")) > MAX_CODE_BYTES:
            raise BadRequest("A job's source may be at most 2 MB")
        found: list[dict[str, Any]] = []
        header = parse_header(code)
        if code.strip():
            parsed = await self.engine.check_syntax(code)
            if not parsed.get("ok"):
                found.append(_problem(parsed.get("line"), parsed.get("column"),
                                      str(parsed.get("message") or "Syntax error"),
                                      "error", "syntax"))
            else:
                for f in await asyncio.to_thread(_strict, header, code):
                    found.append(_problem(f.line, f.column, f.message, "warning", "strict"))
        for (line, column), message in zip(header.warning_places, header.warnings,
                                           strict=True):
            found.append(_problem(line, column, message, "warning", "header"))
        for note in resolve_limits(header, self.runner.settings.maxima).notes:
            line, column = header.limit_places.get(note.split(":", 1)[0].lower(), (1, 1))
            found.append(_problem(line, column, note, "warning", "header"))
        found.sort(key=lambda p: (p["line"], p["column"]))
        return {"ok": not any(p["severity"] == "error" for p in found), "problems": found}

    async def save(self, name: str, code: Any, by: str | None = None,
                   base_version: int | None = None) -> dict[str, Any]:
        """Save a new version. ``base_version`` is the version the editor opened: when
        the job is at another one now, JobChanged and nothing is saved (0: a new job,
        so JobChanged if one of that name exists; None: save over whatever is there)."""
        self.check_new_name(name)
        if not isinstance(code, str) or not code.strip():
            raise BadRequest("'code' must be the job's source text")
        if len(code.encode("utf-8")) > MAX_CODE_BYTES:
            raise BadRequest("A job's source may be at most 2 MB")
        await self.check(code)
        stored = await asyncio.to_thread(self.store.save, name, code, by, base_version)
        log.info("[WebJob:%s] saved as version %d by %s (%d bytes)", name, stored.version,
                 by or "unknown", len(code.encode("utf-8")))
        return await self._summary(stored)

    async def delete(self, name: str, by: str | None = None) -> None:
        check_job_name(name)
        if not await asyncio.to_thread(self.store.delete, name, by):
            raise NotFound(f"There is no job named '{name}'")
        log.info("[WebJob:%s] deleted (its versions are kept)", name)

    # -- versions -------------------------------------------------------------------

    async def versions(self, name: str) -> list[dict[str, Any]]:
        """Newest first. A deleted job still lists the versions it can be restored from."""
        check_job_name(name)
        found = await asyncio.to_thread(self.store.versions, name)
        if not found:
            raise NotFound(f"There is no job named '{name}'")
        return [_version_view(v) for v in found]

    def _stored_version(self, name: str, version: int) -> StoredJob:
        check_job_name(name)
        if version < 1:
            raise BadRequest("A version is a whole number from 1 up")
        stored = self.store.get_version(name, version)
        if stored is None:
            raise NotFound(f"Job '{name}' has no version {version}")
        return stored

    async def get_version(self, name: str, version: int) -> StoredJob | None:
        """Version ``version`` of job ``name`` as it was saved; None when there is none
        (a debug replay then runs today's code)."""
        return await asyncio.to_thread(self.store.get_version, name, version)

    async def version(self, name: str, version: int) -> dict[str, Any]:
        """One version's details and code."""
        return await asyncio.to_thread(self._version, name, version)

    def _version(self, name: str, version: int) -> dict[str, Any]:
        stored = self._stored_version(name, version)
        listed = [v for v in self.store.versions(name) if v.version == version]
        info = listed[0] if listed else JobVersion(
            name, version, stored.modified, stored.updated_by,
            len(stored.code.encode("utf-8")), current=False)
        return {"name": name, **_version_view(info), "code": stored.code}

    async def restore(self, name: str, version: int, by: str | None = None) -> dict[str, Any]:
        """Version ``version``'s code saved again as the newest version (a deleted job
        comes back). Checked like any save: history may hold code this hub refuses."""
        self.check_new_name(name)
        old = await asyncio.to_thread(self._stored_version, name, version)
        await self.check(old.code)
        stored = await asyncio.to_thread(self.store.restore, name, version, by)
        log.info("[WebJob:%s] version %d restored as version %d by %s", name, version,
                 stored.version, by or "unknown")
        return await self._summary(stored)

    # -- deleted jobs -------------------------------------------------------------------

    async def deleted(self) -> list[dict[str, Any]]:
        """Jobs deleted whose versions are kept (no job of that name now), newest
        deletion first; those deleted before deletions were recorded last, by name."""
        found = sorted(await asyncio.to_thread(self.store.deleted),
                       key=lambda d: (-(d.deleted_at or 0), d.name))
        return [{"name": d.name, "deletedAt": d.deleted_at, "deletedBy": d.deleted_by,
                 "lastVersion": d.last_version} for d in found]

    async def restore_deleted(self, name: str, by: str | None = None) -> dict[str, Any]:
        """A deleted job back: its last saved version's code saved as its newest version
        (so the history says who brought it back). Conflict if a job of that name
        exists; checked like any save."""
        self.check_new_name(name)
        if await asyncio.to_thread(self.store.get, name) is not None:
            raise Conflict(f"A job named '{name}' exists; only a deleted job can be restored")
        found = await asyncio.to_thread(self.store.versions, name)
        if not found:
            raise NotFound(f"No deleted job named '{name}' has versions kept")
        last = await asyncio.to_thread(self._stored_version, name, found[0].version)
        await self.check(last.code)
        try:
            stored = await asyncio.to_thread(self.store.save, name, last.code, by, 0)
        except JobChanged:  # saved again meanwhile
            raise Conflict(f"A job named '{name}' exists; only a deleted job can be "
                           "restored") from None
        log.info("[WebJob:%s] deleted job restored from version %d as version %d by %s",
                 name, last.version, stored.version, by or "unknown")
        return await self._summary(stored)

    # -- the store --------------------------------------------------------------------

    async def store_info(self) -> dict[str, Any]:
        def info() -> dict[str, Any]:
            return {"store": self.store_kind, "database": self.store.database_kind(),
                    "jobs": len(self.store.list_jobs())}
        return await asyncio.to_thread(info)

    async def import_files(self, overwrite: bool, by: str | None) -> dict[str, list[str]]:
        """Copy the jobs folder into the database store (see hub.store.importer)."""
        folder = self.files_dir

        def imported() -> dict[str, list[str]]:
            if folder is None or not folder.is_dir():
                raise BadRequest(f"There is no jobs folder to import from "
                                 f"({folder or 'not set'}; see WEBJOB_JOBS_DIR)")
            return self.store.import_folder(folder, overwrite=overwrite, by=by)
        # Many saves to a database (and a look at the folder): off the event loop.
        report = await asyncio.to_thread(imported)
        log.info("jobs folder %s imported by %s: %d copied, %d replaced, %d skipped", folder,
                 by or "unknown", len(report["copied"]), len(report["replaced"]),
                 len(report["skipped"]))
        return report


def _problem(line: Any, column: Any, message: str, severity: str,
             source: str) -> dict[str, Any]:
    return {"line": line if isinstance(line, int) and line >= 1 else 1,
            "column": column if isinstance(column, int) and column >= 1 else 1,
            "message": message, "severity": severity, "source": source}


def _strict(header: JobHeader, code: str) -> tuple[StrictFinding, ...]:
    """What strict mode refuses in ``code``: nothing for a job that keeps the old
    behaviour (``Isolation: fresh`` runs sloppy, in a fresh isolate)."""
    return () if header.isolation == "fresh" else strict_findings(code)


def _name_warnings(name: str, reserved: frozenset[str]) -> list[str]:
    """A job stored under a name a hub route took later (from before the route, or
    put in the folder by hand) is shadowed there: say so rather than leave it silent."""
    if name not in reserved:
        return []
    return [f"'{name}' is also the hub's route /api/webjobs/{name}: requests there may reach "
            "the route instead of this job; save it under another name"]


def _version_view(v: JobVersion) -> dict[str, Any]:
    return {"version": v.version, "saved": v.saved, "savedBy": v.saved_by, "size": v.size,
            "current": v.current}


def job_name_from_file(filename: str, given: str) -> str:
    """The name an upload is saved under: ``given``, else the file's name less its
    ``.job.js`` (or ``.js``)."""
    if given:
        return given
    base = filename.rsplit("/", 1)[-1]
    for suffix in (SUFFIX, ".js"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base
