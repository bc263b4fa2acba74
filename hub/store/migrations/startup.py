"""What the hub does to its databases before any store uses them: upgrade each one
it keeps tables in (the hub database; the local history file when history is kept
there), then check this node's key against the cluster's."""

from __future__ import annotations

import logging
from pathlib import Path

from hub.settings import Settings
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.keycheck import check_cluster_key
from hub.store.migrations.runner import upgrade

__all__ = ["open_local_history_db", "prepare_at_start", "upgrade_local_history"]

log = logging.getLogger("webhub.db")
LOCAL_HISTORY_FILE = "history.db"  # as hub.history.local keeps it


def prepare_at_start(settings: Settings) -> None:
    """Upgrade, then the key check; any refusal is a WebJobsError saying why (the
    hub does not start on a database it cannot reach or does not understand)."""
    db = open_hub_database(settings.hub_db)
    try:
        _report(db, upgrade(db))
        check_cluster_key(db, settings.secret)
    finally:
        db.close()
    if settings.history_store == "local":
        upgrade_local_history(settings.home)


def open_local_history_db(home: Path) -> HubDatabase:
    return open_hub_database(f"sqlite:///{Path(home).resolve() / LOCAL_HISTORY_FILE}",
                             setting="WEBHUB_HOME", label="local run history")


def upgrade_local_history(home: Path) -> list[str]:
    """The local history file brought to the newest revision (its history tables)."""
    db = open_local_history_db(home)
    try:
        _space_given_back(db)
        applied = upgrade(db, scope="history")
        _report(db, applied)
        return applied
    finally:
        db.close()


def _space_given_back(db: HubDatabase) -> None:
    # As the local store does before its first table: only a file without tables can
    # change its vacuum mode, and the mode needs a VACUUM (instant when empty) to land.
    if db.read("SELECT name FROM sqlite_master LIMIT 1"):
        return
    db.write("PRAGMA auto_vacuum = INCREMENTAL")
    db.write("VACUUM")


def _report(db: HubDatabase, applied: list[str]) -> None:
    if applied:
        log.info("%s upgraded to schema revision %s (applied: %s)", db.label, applied[-1],
                 ", ".join(applied))
