"""The hub's own database (``WEBHUB_DB``): users, jobs, schedules, shared history.

``sqlite:///path`` (the embedded default, Python's :mod:`sqlite3`) or
``odbc:<connection string>`` through :mod:`pyodbc` (imported only then) to
PostgreSQL, MariaDB, SQLite3 or SQL Server; the dialect is read from the driver.

A small pool of connections is shared by the hub's threads. Every statement
borrows one, autocommit; :meth:`HubDatabase.transaction` holds one for several
statements that must land together. Driver failures leave as the hub's errors:

* a unique or foreign-key clash is :class:`Conflict` (a ``BadRequest``);
* a database that cannot be reached, or is locked past the busy timeout, is
  :class:`~shared.errors.StoreUnavailable` — the broken connection is dropped and
  the next call connects afresh, so a server that comes back is used again;
* anything else is an :class:`~shared.errors.InternalError` naming the database error.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

from hub.dburl import DatabaseUrl, parse_database_url, utf8_parameters
from hub.store.dialects import DIALECTS, Dialect, dialect_for_dbms
from shared.errors import BadRequest, Conflict, InternalError, StoreUnavailable

__all__ = ["Conflict", "HubDatabase", "Row", "Tx", "iso_of", "open_hub_database", "seconds_of",
           "utf8_parameters"]

log = logging.getLogger("webhub.db")
Row = tuple[Any, ...]
LOGIN_S = 10
BUSY_S = 5.0


def seconds_of(value: object) -> float:
    """A stored time (seconds since the epoch) as a float; tolerates a date-time from
    another tool (naive ones taken as UTC); anything else is 0."""
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return stamp.timestamp()
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    return 0.0


def iso_of(seconds: float | None) -> str | None:
    """Seconds since the epoch as ISO 8601 UTC text (``...Z``); None stays None."""
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


class Tx:
    """Statements on one borrowed connection (inside a transaction, or one alone)."""

    def __init__(self, db: HubDatabase, conn: Any) -> None:
        self.db = db
        self.conn = conn
        self.dialect = db.dialect

    def _execute(self, sql: str, params: Sequence[Any]) -> Any:
        try:
            cursor = self.conn.cursor()
            cursor.execute(sql, list(params))
            return cursor
        except Exception as exc:
            raise self.db.translate(exc) from None

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cursor = self._execute(sql, params)
        try:
            return [tuple(r) for r in cursor.fetchall()]
        except Exception as exc:
            raise self.db.translate(exc) from None

    def read_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.read(sql, params)
        return rows[0] if rows else None

    def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        return int(self._execute(sql, params).rowcount)

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run ``INSERT ... VALUES ...`` into a table keyed by ``id``; the new id."""
        cursor = self._execute(self.dialect.returning_id(sql), params)
        follow_up = self.dialect.last_id_query
        if isinstance(self.conn, sqlite3.Connection):
            return int(cursor.lastrowid or 0)
        row = (self.read_one(follow_up) if follow_up else cursor.fetchone())
        if row is None or row[0] is None:
            raise InternalError("The hub database did not say which id it gave a new row")
        return int(row[0])


class HubDatabase:
    """A pool of connections to one database, with its dialect."""

    def __init__(self, url: DatabaseUrl, *, pool_size: int = 4, label: str = "hub database",
                 setting: str = "WEBHUB_DB") -> None:
        self.url = url
        self.label = label
        self.setting = setting
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(pool_size)
        self._closed = False
        self._prepared: set[str] = set()   # schemas ensure_schema_once has made
        self._prepare_lock = threading.Lock()
        self._pyodbc: Any = None
        if url.kind == "odbc":
            try:
                self._pyodbc = cast(Any, importlib.import_module("pyodbc"))
            except ImportError:
                raise BadRequest(f"{setting}: odbc URLs need the pyodbc package and unixODBC"
                                 ) from None
            self._conn_str = url.target
            conn = self._connect()
            self.dialect = self._odbc_dialect(conn)
            if self.dialect.name == "mariadb" and "option=" not in url.target.lower():
                # FOUND_ROWS: an UPDATE reports the rows it matched, as everywhere
                # else, not only the ones whose values changed.
                _quietly_close(conn)
                self._conn_str = f"{url.target.rstrip(';')};OPTION=2"
                conn = self._connect()
            self._idle.put(conn)
        else:
            self.dialect = DIALECTS["sqlite"]

    @property
    def kind(self) -> str:
        """What the database is, for /store and /metrics: ``sqlite`` or the ODBC dialect."""
        return self.dialect.name if self.url.kind == "odbc" else "sqlite"

    def describe(self) -> str:
        return str(self.url) if self.url.kind == "sqlite" else f"odbc:{self.dialect.name}"

    # -- connections ------------------------------------------------------------

    def _odbc_dialect(self, conn: Any) -> Dialect:
        dbms = str(conn.getinfo(self._pyodbc.SQL_DBMS_NAME))
        dialect = dialect_for_dbms(dbms)
        if dialect is None:
            conn.close()
            raise BadRequest(f"{self.setting}: the hub cannot keep its tables in {dbms}; use "
                             "SQLite, PostgreSQL, MariaDB or SQL Server")
        return dialect

    def _connect(self) -> Any:
        if self._pyodbc is not None:
            try:
                conn = self._pyodbc.connect(self._conn_str, autocommit=True, timeout=LOGIN_S)
            except self._pyodbc.Error as exc:
                raise StoreUnavailable(f"The {self.label} is unavailable: "
                                       f"{_odbc_message(exc)}") from None
            utf8_parameters(self._pyodbc, conn)
            return conn
        return _open_sqlite(Path(self.url.target))

    @contextlib.contextmanager
    def _borrow(self) -> Iterator[Any]:
        if self._closed:
            raise StoreUnavailable(f"The {self.label} is closed")
        self._slots.acquire()
        conn = None
        keep = False
        try:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = self._connect()
            yield conn
            keep = True
        finally:
            if conn is not None:
                if keep and not self._closed:
                    self._idle.put(conn)
                else:
                    _quietly_close(conn)
            self._slots.release()

    # -- statements -------------------------------------------------------------

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._borrow() as conn:
            return Tx(self, conn).read(sql, params)

    def read_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.read(sql, params)
        return rows[0] if rows else None

    def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self._borrow() as conn:
            return Tx(self, conn).write(sql, params)

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self._borrow() as conn:
            return Tx(self, conn).insert(sql, params)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Tx]:
        """Statements that land together or not at all. SQLite takes its write lock at
        the start (``BEGIN IMMEDIATE``), so a read-then-write inside is not raced."""
        with self._borrow() as conn:
            tx = Tx(self, conn)
            self._begin(conn)
            try:
                yield tx
            except BaseException:
                self._end(conn, commit=False)
                raise
            self._end(conn, commit=True)

    def _begin(self, conn: Any) -> None:
        try:
            if isinstance(conn, sqlite3.Connection):
                conn.execute("BEGIN IMMEDIATE")
            else:
                conn.autocommit = False
        except Exception as exc:
            raise self.translate(exc) from None

    def _end(self, conn: Any, *, commit: bool) -> None:
        try:
            if isinstance(conn, sqlite3.Connection):
                if conn.in_transaction:
                    conn.execute("COMMIT" if commit else "ROLLBACK")
            else:
                conn.commit() if commit else conn.rollback()
                conn.autocommit = True
        except Exception as exc:
            if commit:
                raise self.translate(exc) from None
            raise StoreUnavailable(f"The {self.label} is unavailable") from None

    def ensure_schema(self, statements: Sequence[str]) -> None:
        """Run DDL (each ``IF NOT EXISTS``). Two nodes starting at once may race on
        the catalogue; the loser tries once more and finds the tables there."""
        for attempt in (1, 2):
            try:
                with self.transaction() as tx:
                    for statement in statements:
                        tx.write(statement)
                return
            except (Conflict, InternalError):
                if attempt == 2:
                    raise

    def ensure_schema_once(self, key: str, statements: Callable[[Dialect], Sequence[str]],
                           before: Callable[[], None] | None = None) -> None:
        """:meth:`ensure_schema` the first time a store asks for ``key`` on this
        database; afterwards a set lookup, so stores may call it before every use.
        ``before`` runs first, once (settings that must precede the first table)."""
        if key in self._prepared:
            return
        with self._prepare_lock:
            if key not in self._prepared:
                if before is not None:
                    before()
                self.ensure_schema(statements(self.dialect))
                self._prepared.add(key)

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                _quietly_close(self._idle.get_nowait())
            except queue.Empty:
                return

    # -- errors -----------------------------------------------------------------

    def translate(self, exc: Exception) -> Exception:
        """The hub's error for a driver's. Marks the connection for dropping when the
        failure is not the statement's own (see ``_borrow``: only a clean exit keeps it)."""
        if isinstance(exc, sqlite3.IntegrityError):
            return Conflict(f"That clashes with a row already in the {self.label}")
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return StoreUnavailable(f"The {self.label} is busy; try again")
        if isinstance(exc, sqlite3.Error):
            return InternalError(f"The {self.label} failed: {exc}")
        if self._pyodbc is not None and isinstance(exc, self._pyodbc.Error):
            state = str(exc.args[0]) if exc.args else ""
            if state.startswith("23"):
                return Conflict(f"That clashes with a row already in the {self.label}")
            if state.startswith("42"):
                return InternalError(f"The {self.label} refused a statement: "
                                     f"{_odbc_message(exc)}")
            if state.startswith("22"):  # a data exception: this row's values, not an outage
                return InternalError(f"The {self.label} refused a value: {_odbc_message(exc)}")
            return StoreUnavailable(f"The {self.label} is unavailable: {_odbc_message(exc)}")
        if isinstance(exc, (StoreUnavailable, InternalError, BadRequest)):
            return exc
        return InternalError(f"The {self.label} failed: {type(exc).__name__}")


def _odbc_message(exc: Exception) -> str:
    """The driver's words without the ``[unixODBC][Driver]`` prefixes and SQL state."""
    text = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    text = text.rsplit("]", 1)[-1].strip()
    return text.split(" (", 1)[0].strip()[:300] or "no reason given"


def _quietly_close(conn: Any) -> None:
    with contextlib.suppress(Exception):
        conn.close()


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


def open_hub_database(url: str, *, setting: str = "WEBHUB_DB", label: str = "hub database",
                      pool_size: int = 4) -> HubDatabase:
    return HubDatabase(parse_database_url(url, setting), pool_size=pool_size, label=label,
                       setting=setting)
