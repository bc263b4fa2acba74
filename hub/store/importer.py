"""Copying the jobs folder into the database store (moving a node to ``WEBJOB_STORE=db``).

Each job file's current code is saved to the database as a new version, saved by
whoever asked for the import; the file's own history stays in the folder. Per job:

* ``copied``   — the database had no such job;
* ``replaced`` — it had different code and ``overwrite`` was asked for;
* ``skipped``  — it had different code and ``overwrite`` was not asked for, or it
  already had exactly this code (with or without ``overwrite``: saving it again would
  only add a version that changes nothing).

A job that was deleted from the database but keeps its versions there counts as
``copied`` and continues its numbering. Code is copied as it is, unchecked: the
import moves jobs, it does not edit them.
"""

from __future__ import annotations

from hub.store.base import JobStore
from hub.store.files import FileJobStore

__all__ = ["import_files"]


def import_files(source: FileJobStore, target: JobStore, *, overwrite: bool,
                 by: str | None) -> dict[str, list[str]]:
    report: dict[str, list[str]] = {"copied": [], "skipped": [], "replaced": []}
    for job in source.list_jobs():
        existing = target.get(job.name)
        if existing is None:
            outcome = "copied"
        elif existing.code == job.code or not overwrite:
            outcome = "skipped"
        else:
            outcome = "replaced"
        if outcome != "skipped":
            target.save(job.name, job.code, by)
        report[outcome].append(job.name)
    return report
