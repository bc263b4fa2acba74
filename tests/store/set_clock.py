"""A database clock a test sets: a one-row table that :class:`LimitsStore` reads
(``clock_sql``) where it would read the PostgreSQL server's ``clock_timestamp()``, so
that a test can walk the rate window through minutes without waiting them out."""

from __future__ import annotations

from hub.store.hubdb import HubDatabase
from hub.store.limits_store import LimitsStore

TABLE = "TestLimitClock"
CLOCK_SQL = f"(SELECT Seconds FROM {TABLE})"


class SetClock:
    """The clock table in ``db``, made at ``start`` (seconds since the epoch)."""

    def __init__(self, db: HubDatabase, start: float) -> None:
        self.db = db
        db.write(f"CREATE TABLE IF NOT EXISTS {TABLE} (Seconds DOUBLE PRECISION NOT NULL)")
        db.write(f"DELETE FROM {TABLE}")
        db.write(f"INSERT INTO {TABLE} (Seconds) VALUES (?)", [start])

    def set(self, seconds: float) -> None:
        self.db.write(f"UPDATE {TABLE} SET Seconds = ?", [seconds])

    def store(self) -> LimitsStore:
        """A store timed by this clock."""
        return LimitsStore(self.db, clock_sql=CLOCK_SQL)
