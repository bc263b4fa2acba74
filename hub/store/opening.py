"""Opening the hub's job store as its settings say."""

from __future__ import annotations

from hub.settings import Settings
from hub.store.base import JobStore


def open_job_store(settings: Settings) -> JobStore:
    """The hub's jobs: in the hub database or in files, as ``settings`` say."""
    if settings.job_store == "db":
        from hub.store.dbjobs import DbJobStore
        from hub.store.hubdb import open_hub_database

        return DbJobStore(open_hub_database(settings.hub_db))
    from hub.store.files import FileJobStore

    return FileJobStore(settings.jobs_dir)
