"""What differs between the business database's drivers, behind one small interface
(:class:`Driver`), and the embedded SQLite driver. The ODBC driver is
:mod:`hub.outside.db_odbc`; the pool that uses them is :mod:`hub.outside.database`."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hub.outside.sqlite_guard import SqliteGuard, refusal
from shared.errors import JobFailed

__all__ = ["SQLITE_TEMP_TABLE", "Call", "Driver", "SqliteDriver"]

SQLITE_TEMP_TABLE = (
    "CREATE TEMP TABLE IF NOT EXISTS webhub_session (name TEXT PRIMARY KEY, value TEXT)"
)
SQLITE_BUSY_S = 5.0


@dataclass
class Call:
    """One statement in flight: what the event loop needs to cancel it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    conn: Any = None
    cursor: Any = None
    finished: bool = False
    cancelled: bool = False


class Driver:
    """What differs between sqlite3 and pyodbc."""

    def connect(self, login_s: float) -> Any:
        raise NotImplementedError

    def cancel(self, call: Call) -> None:
        """Ask the driver to stop ``call``'s statement (quick; repeated until it ends)."""
        raise NotImplementedError

    def cancel_on_server(self, call: Call, end_session: bool) -> None:
        """Stop ``call``'s statement from another connection to the server; with
        ``end_session``, end its whole session. Nothing where the server has none."""

    def failure(self, exc: Exception, conn: Any = None) -> JobFailed | None:
        """The job's error for a driver exception, or None if it is not the driver's."""
        raise NotImplementedError

    def broken(self, exc: Exception) -> bool:
        """True when the connection should be thrown away after ``exc``."""
        return False

    def before_statement(self, conn: Any, sql: str, hub_statement: bool,
                         with_params: bool = False) -> None:
        """Refuse (JobFailed) what this driver cannot let ``sql`` do; ``hub_statement``
        is True for the hub's own session statement, ``with_params`` when ``?``
        parameters come with it."""

    def reset(self, conn: Any) -> bool:
        """Clear what a statement left in the connection's session; False when the
        connection must be closed instead of going back to the pool."""
        return True


class SqliteDriver(Driver):
    def __init__(self, path: str, max_value_bytes: int) -> None:
        self.path = path
        # No string or blob beyond what could cross to the job: randomblob(1e9) would
        # otherwise grow the hub by a GB before the payload cap saw the row.
        self.max_value_bytes = max_value_bytes
        # Switching a new file to WAL from several connections at once fails with
        # "database is locked" (the busy timeout does not cover it): one at a time.
        self._connecting = threading.Lock()

    def connect(self, login_s: float) -> Any:
        if not Path(self.path).parent.is_dir():
            raise sqlite3.OperationalError(f"no directory for {self.path}")
        with self._connecting:
            return self._open()

    def _open(self) -> Any:
        conn = sqlite3.connect(
            self.path, timeout=SQLITE_BUSY_S, isolation_level=None, check_same_thread=False,
            factory=GuardedConnection,
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(SQLITE_TEMP_TABLE)
        except sqlite3.Error:
            conn.close()
            raise
        if hasattr(conn, "enable_load_extension"):  # only where Python was built with it
            conn.enable_load_extension(False)
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.max_value_bytes)
        conn.set_authorizer(conn.guard)  # after the hub's own set-up statements
        return conn

    def cancel(self, call: Call) -> None:
        if call.conn is not None:
            call.conn.interrupt()

    def failure(self, exc: Exception, conn: Any = None) -> JobFailed | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        refused = conn.guard.refused if isinstance(conn, GuardedConnection) else None
        if refused is not None and isinstance(exc, sqlite3.DatabaseError):
            return refusal(refused)
        return JobFailed(str(exc) or type(exc).__name__, sqlstate=type(exc).__name__)

    def before_statement(self, conn: Any, sql: str, hub_statement: bool,
                         with_params: bool = False) -> None:
        conn.guard.refused = None
        conn.guard.hub_statement = hub_statement

    def reset(self, conn: Any) -> bool:
        if conn.in_transaction:  # a job's BEGIN or SAVEPOINT never reaches the next caller
            conn.rollback()
        return True


class GuardedConnection(sqlite3.Connection):
    """A sqlite3 connection that carries its authorizer, so a failure can say what
    the authorizer refused."""

    guard: SqliteGuard

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = SqliteGuard()
