"""Statements on one connection borrowed from a :class:`~hub.store.hubdb.HubDatabase`
(inside a transaction, or one alone), and the pool's lease of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hub.store.drivers import SqliteDriver
from hub.store.notify import check_notification
from shared.errors import InternalError, StoreUnavailable

if TYPE_CHECKING:
    from hub.store.hubdb import HubDatabase

__all__ = ["ConnectionLost", "Lease", "Row", "Tx"]

Row = tuple[Any, ...]


class ConnectionLost(StoreUnavailable):
    """The connection failed under a statement (not the statement itself): SYS-503 on
    the wire like any outage; the pool drops the connection and may try again."""


@dataclass
class Lease:
    conn: Any
    reused: bool


class Tx:
    """Statements on one borrowed connection (inside a transaction, or one alone)."""

    def __init__(self, db: HubDatabase, conn: Any) -> None:
        self.db = db
        self.conn = conn
        self.dialect = db.dialect

    def _execute(self, sql: str, params: Sequence[Any], fresh_plan: bool = False) -> Any:
        try:
            return self.db.driver.execute(self.conn, sql, params, fresh_plan=fresh_plan)
        except Exception as exc:
            raise self.db.translate(exc) from None

    def read(self, sql: str, params: Sequence[Any] = (), *,
             fresh_plan: bool = False) -> list[Row]:
        """The rows; ``fresh_plan``: see :meth:`HubDatabase.read`."""
        cursor = self._execute(sql, params, fresh_plan)
        try:
            if cursor.description is None:   # psqlODBC: a RETURNING that matched no row
                return []
            return [tuple(r) for r in cursor.fetchall()]
        except Exception as exc:
            raise self.db.translate(exc) from None

    def read_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.read(sql, params)
        return rows[0] if rows else None

    def write_returning(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one statement that changes rows and returns some; those rows."""
        return self.read(sql, params)

    def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        return int(self._execute(sql, params).rowcount)

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run ``INSERT ... VALUES ...`` into a table keyed by ``id``; the new id."""
        cursor = self._execute(self.dialect.returning_id(sql), params)
        follow_up = self.dialect.last_id_query
        if follow_up and not isinstance(self.db.driver, SqliteDriver):
            row = self.read_one(follow_up)
            new_id = None if row is None or row[0] is None else int(row[0])
        else:
            try:
                new_id = self.db.driver.new_id(cursor)
            except Exception as exc:
                raise self.db.translate(exc) from None
        if new_id is None:
            raise InternalError("The hub database did not say which id it gave a new row")
        return new_id

    def notify(self, channel: str, payload: str = "") -> None:
        """:meth:`HubDatabase.notify` on this connection: inside a transaction it goes
        out when the transaction commits, and not at all if it rolls back."""
        check_notification(channel, payload)
        if self.db.supports_notify:
            self.read("SELECT pg_notify(?, ?)", [channel, payload])
