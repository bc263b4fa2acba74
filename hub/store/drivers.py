"""The embedded SQLite file and ODBC: two of the hub database's drivers (the third,
psycopg for ``postgresql://``, is :mod:`hub.store.pgconn`).

Each driver opens connections, runs one statement, begins and ends a transaction,
checks a pooled connection before it is handed out again, and says what a driver
error is in the hub's terms — the same methods on every driver, so
:class:`hub.store.hubdb.HubDatabase` holds the pool and the rules once."""

from __future__ import annotations

import contextlib
import importlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from hub.dburl import DatabaseUrl, utf8_parameters
from hub.store.dialects import DIALECTS, Dialect, dialect_for_dbms
from shared.errors import BadRequest, Conflict, InternalError, StoreUnavailable

__all__ = ["BUSY_S", "LOGIN_S", "OdbcDriver", "SqliteDriver"]

LOGIN_S = 10
BUSY_S = 5.0
IDLE_CHECK_S = 5.0  # a pooled server connection idle this long is pinged before reuse


class SqliteDriver:
    """One SQLite file (WAL mode, a busy timeout); nothing to lose between uses."""

    dialect = DIALECTS["sqlite"]

    def __init__(self, url: DatabaseUrl, label: str) -> None:
        self.path = Path(url.target)
        self.label = label

    def connect(self) -> sqlite3.Connection:
        return _open_sqlite(self.path)

    @staticmethod
    def usable(conn: Any, idle_s: float) -> bool:
        return True

    @staticmethod
    def execute(conn: Any, sql: str, params: Sequence[Any], *,
                fresh_plan: bool = False) -> Any:
        return conn.execute(sql, list(params))

    @staticmethod
    def begin(conn: Any) -> None:
        conn.execute("BEGIN IMMEDIATE")  # the write lock now: a read-then-write is not raced

    @staticmethod
    def end(conn: Any, *, commit: bool) -> None:
        if conn.in_transaction:
            conn.execute("COMMIT" if commit else "ROLLBACK")

    @staticmethod
    def new_id(cursor: Any) -> int | None:
        return int(cursor.lastrowid or 0)

    @staticmethod
    def close(conn: Any) -> None:
        with contextlib.suppress(Exception):
            conn.close()

    @staticmethod
    def lost_connection(exc: Exception) -> bool:
        return False

    def translate(self, exc: Exception) -> Exception:
        if isinstance(exc, sqlite3.IntegrityError):
            return Conflict(f"That clashes with a row already in the {self.label}")
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return StoreUnavailable(f"The {self.label} is busy; try again")
        if isinstance(exc, sqlite3.Error):
            return InternalError(f"The {self.label} failed: {exc}")
        return exc


class OdbcDriver:
    """pyodbc to PostgreSQL, MariaDB, SQLite3 or SQL Server; the dialect is read from
    the driver at the first connection."""

    def __init__(self, url: DatabaseUrl, label: str, setting: str) -> None:
        try:
            self.pyodbc: Any = cast(Any, importlib.import_module("pyodbc"))
        except ImportError:
            raise BadRequest(f"{setting}: odbc URLs need the pyodbc package and unixODBC"
                             ) from None
        self.label = label
        self.setting = setting
        self.idle_check_s = IDLE_CHECK_S
        self.conn_str = url.target
        self.first = self.connect()
        self.dialect = self._dialect(self.first)
        if self.dialect.name == "mariadb" and "option=" not in url.target.lower():
            # FOUND_ROWS: an UPDATE reports the rows it matched, as everywhere else,
            # not only the ones whose values changed.
            self.close(self.first)
            self.conn_str = f"{url.target.rstrip(';')};OPTION=2"
            self.first = self.connect()

    def _dialect(self, conn: Any) -> Dialect:
        dbms = str(conn.getinfo(self.pyodbc.SQL_DBMS_NAME))
        dialect = dialect_for_dbms(dbms)
        if dialect is None:
            conn.close()
            raise BadRequest(f"{self.setting}: the hub cannot keep its tables in {dbms}; use "
                             "SQLite, PostgreSQL, MariaDB or SQL Server")
        return dialect

    def connect(self) -> Any:
        try:
            conn = self.pyodbc.connect(self.conn_str, autocommit=True, timeout=LOGIN_S)
        except self.pyodbc.Error as exc:
            raise StoreUnavailable(f"The {self.label} is unavailable: "
                                   f"{odbc_message(exc)}") from None
        utf8_parameters(self.pyodbc, conn)
        return conn

    def usable(self, conn: Any, idle_s: float) -> bool:
        """Whether a pooled connection may be handed out again: one idle for
        ``idle_check_s`` is pinged first (ODBC shows no other sign of a lost one)."""
        if idle_s < self.idle_check_s:
            return True
        try:
            conn.cursor().execute("SELECT 1").fetchall()
        except self.pyodbc.Error:
            return False
        return True

    @staticmethod
    def execute(conn: Any, sql: str, params: Sequence[Any], *,
                fresh_plan: bool = False) -> Any:
        """Every statement is planned for its values (``fresh_plan`` or not): on a new
        cursor, psqlODBC sends it as an unnamed statement."""
        cursor = conn.cursor()
        cursor.execute(sql, list(params))
        return cursor

    @staticmethod
    def begin(conn: Any) -> None:
        conn.autocommit = False

    @staticmethod
    def end(conn: Any, *, commit: bool) -> None:
        conn.commit() if commit else conn.rollback()
        conn.autocommit = True

    @staticmethod
    def new_id(cursor: Any) -> int | None:
        row = cursor.fetchone()
        return None if row is None or row[0] is None else int(row[0])

    @staticmethod
    def close(conn: Any) -> None:
        with contextlib.suppress(Exception):
            conn.close()

    def lost_connection(self, exc: Exception) -> bool:
        state = str(exc.args[0]) if exc.args else ""
        return state.startswith(("08", "57P0")) or isinstance(exc, self.pyodbc.InterfaceError)

    def translate(self, exc: Exception) -> Exception:
        if not isinstance(exc, self.pyodbc.Error):
            return exc
        state = str(exc.args[0]) if exc.args else ""
        if state.startswith("23"):
            return Conflict(f"That clashes with a row already in the {self.label}")
        if state.startswith("42"):
            return InternalError(f"The {self.label} refused a statement: {odbc_message(exc)}")
        if state.startswith("22"):  # a data exception: this row's values, not an outage
            return InternalError(f"The {self.label} refused a value: {odbc_message(exc)}")
        return StoreUnavailable(f"The {self.label} is unavailable: {odbc_message(exc)}")


def odbc_message(exc: Exception) -> str:
    """The driver's words without the ``[unixODBC][Driver]`` prefixes and SQL state."""
    text = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    text = text.rsplit("]", 1)[-1].strip()
    return text.split(" (", 1)[0].strip()[:300] or "no reason given"


def _create_private(path: Path) -> None:
    """An empty file readable by its owner only (the hub's tables hold password
    hashes); SQLite gives its -wal and -shm files the same mode."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _open_sqlite(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _create_private(path)
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None,
                               timeout=BUSY_S)
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
        # In WAL mode NORMAL is crash-safe for the hub and the file never corrupts; only
        # a power cut can lose the last commits. FULL would fsync every history write.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn
    except (OSError, sqlite3.Error) as exc:
        raise StoreUnavailable(f"The database file {path.name} cannot be opened: "
                               f"{getattr(exc, 'strerror', None) or exc}") from None
