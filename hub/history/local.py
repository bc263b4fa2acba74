"""The embedded history store (``WEBJOB_HISTORY_STORE=local``): ``<home>/history.db``.

The tables and queries of :class:`~hub.history.sqlstore.SqlHistoryStore` in a
SQLite file of its own (WAL mode, so the API reads while the recorder writes),
plus what a file on the hub's own disk needs:

* a size cap — ``prune`` keeps only the newest ``max_runs`` runs, as well as
  dropping those older than ``retention_days``;
* space given back — the file is made with ``auto_vacuum = INCREMENTAL`` (set
  before its first table, and made to land by a ``VACUUM`` of the empty file).
  After a prune the full-text index merges its deleted entries away (a bounded
  step, see ``SqlHistoryStore._after_prune``), the freed pages are released
  (``PRAGMA incremental_vacuum``) and the WAL is checkpointed and truncated, so
  the file shrinks instead of staying at its high-water mark.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from hub.history.sqlstore import SqlHistoryStore
from hub.store.hubdb import BUSY_S, HubDatabase, open_hub_database

__all__ = ["LocalHistoryStore", "open_local_history"]

log = logging.getLogger("webhub.history")
FILE_NAME = "history.db"


class LocalHistoryStore(SqlHistoryStore):
    """A :class:`SqlHistoryStore` on its own SQLite file (see the module docstring)."""

    store_name = "local"
    shared = False  # this node's own file

    def __init__(self, db: HubDatabase, *, max_runs: int, retention_days: int) -> None:
        super().__init__(db, retention_days=retention_days, max_runs=max_runs,
                         own_db=True)

    def _before_schema(self) -> None:
        # Only a file without tables can change mode; one made by an older hub keeps its
        # own. The connection already wrote the WAL header, so the mode needs a VACUUM
        # to land (instant on an empty file).
        if self.db.read("SELECT name FROM sqlite_master LIMIT 1"):
            return
        self.db.write("PRAGMA auto_vacuum = INCREMENTAL")
        self.db.write("VACUUM")

    def _after_prune(self) -> None:
        super()._after_prune()
        # The pragma frees one page per step and its rows have no columns, so a cursor
        # stops after the first; only ``executescript`` steps it to the end, and the
        # pooled connections do not offer that, hence a short-lived one of its own.
        conn = sqlite3.connect(self.db.url.target, isolation_level=None, timeout=BUSY_S)
        try:
            conn.executescript("PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE);")
        except sqlite3.Error as exc:
            # The runs are gone either way; the space comes back after the next prune.
            log.info("history file space not given back yet: %s", exc)
        finally:
            conn.close()


def open_local_history(home: Path, *, max_runs: int = 100_000,
                       retention_days: int = 90) -> SqlHistoryStore:
    """The local store in ``home`` (made if need be), its tables ready."""
    db = open_hub_database(f"sqlite:///{Path(home).resolve() / FILE_NAME}",
                           setting="WEBHUB_HOME", label="local run history")
    store = LocalHistoryStore(db, max_runs=max_runs, retention_days=retention_days)
    try:
        store.prepare()
    except Exception:
        db.close()
        raise
    return store
