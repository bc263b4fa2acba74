"""The job catalogue: listing, reading, saving and deleting jobs."""

from __future__ import annotations

import logging
from typing import Any

from hub.engine.engine import Engine
from hub.services.runs import JobRunner
from hub.store.base import JobStore, StoredJob, check_job_name
from shared.errors import BadRequest, JobDoesNotParse, NotFound

log = logging.getLogger("webhub.catalog")
MAX_CODE_BYTES = 2 * 1024 * 1024


class Catalog:
    def __init__(self, store: JobStore, runner: JobRunner, engine: Engine) -> None:
        self.store = store
        self.runner = runner
        self.engine = engine

    def summary(self, stored: StoredJob) -> dict[str, Any]:
        job = self.runner.describe(stored.name, stored.code)
        header, resolved = job.header, job.resolved
        return {
            "name": stored.name,
            "title": header.name or stored.name,
            "description": header.description,
            "author": header.author,
            "version": header.version,
            "lastUpdated": header.last_updated,
            "access": header.access,
            "mode": header.mode,
            "limits": resolved.limits.as_job_view(),
            "extended": resolved.extended,
            "warnings": header.warnings + list(resolved.notes),
            "store": self.store.kind,
            "modified": stored.modified,
        }

    def available(self) -> list[dict[str, Any]]:
        return [self.summary(job) for job in self.store.list_jobs()]

    def code(self, name: str) -> str:
        check_job_name(name)
        stored = self.store.get(name)
        if stored is None:
            raise NotFound(f"There is no job named '{name}'")
        return stored.code

    async def check(self, code: str) -> None:
        """Refuse a job whose body does not parse, naming the line."""
        problem = await self.engine.check_syntax(code)
        if not problem.get("ok"):
            line = problem.get("line")
            where = f" (line {line})" if line else ""
            raise JobDoesNotParse(f"{problem.get('message', 'Syntax error')}{where}",
                                  line=line, column=problem.get("column"))

    async def save(self, name: str, code: Any) -> dict[str, Any]:
        check_job_name(name, for_save=True)
        if not isinstance(code, str) or not code.strip():
            raise BadRequest("'code' must be the job's source text")
        if len(code.encode("utf-8")) > MAX_CODE_BYTES:
            raise BadRequest("A job's source may be at most 2 MB")
        await self.check(code)
        stored = self.store.save(name, code)
        log.info("[WebJob:%s] saved (%d bytes)", name, len(code))
        return self.summary(stored)

    def delete(self, name: str) -> None:
        check_job_name(name)
        if not self.store.delete(name):
            raise NotFound(f"There is no job named '{name}'")
        log.info("[WebJob:%s] deleted", name)
