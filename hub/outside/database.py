"""The host side of a job's ``db.exec(sql, params?)``: one bounded pool of connections.

Two kinds of URL (the ``WEBJOB_DB`` setting):

* ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` — Python's
  :mod:`sqlite3`, the embedded default. Each connection is in WAL mode with
  foreign keys on, and every statement commits on its own (autocommit).
* ``odbc:<ODBC connection string>`` — any ODBC driver through :mod:`pyodbc`, which
  is imported only when such a URL is used, so the embedded default needs no ODBC
  on the system. Connections are in autocommit.

Every statement runs off the event loop, in a thread pool as large as the pool of
connections. ``?`` placeholders are bound by the driver, never formatted into the
text. A statement that returns rows gives a list of row objects keyed by column
name (values mapped by :mod:`hub.outside.values`); any other gives
``{"affectedRows": n}``. Failures reach the job as :class:`~shared.errors.JobFailed`:

* ``database busy: …`` — no connection came free within the run's time;
* ``database unavailable: …`` — connecting failed (never a hang: the login is bounded);
* ``the statement was cancelled: the run's time ran out`` — the statement was cancelled
  (``cursor.cancel()`` for ODBC, ``connection.interrupt()`` for SQLite) and its
  connection thrown away;
* ``db.exec refuses …`` with ``extra["sqlstate"] == "42501"`` — the statement tried
  to reach past the business database (:mod:`hub.outside.sqlite_guard`);
* the driver's own message otherwise, with ``extra["sqlstate"]`` set to the SQL state
  (ODBC) or the error class name (SQLite, e.g. ``IntegrityError``).

Nothing of one statement's session outlives it, so no caller sees another's TEMP
table, session variable, prepared statement or open transaction (a transaction
cannot span two ``db.exec`` calls; each one commits on its own):

* ``sqlite:///`` — TEMP objects are refused by the connection's authorizer, and an
  open transaction is rolled back before the connection goes back to the pool;
* PostgreSQL (ODBC) — ``DISCARD ALL`` (after a ``ROLLBACK`` when a transaction was
  left open) before the connection goes back; a connection-string ``ConnSettings``
  is discarded with the rest, so per-user settings belong in ``ALTER ROLE … SET``;
* every other ODBC database (MariaDB, whose Connector/ODBC offers no
  ``mysql_reset_connection``; SQL Server; SQLite3) — a fresh session: the
  connection is closed after its statement and the pool only bounds how many are
  open at once.

Session context: when ``session_sql`` is set it runs before *every* statement on the
borrowed connection, with one ``?`` bound to the caller's staff id as text ('' when
there is none), so a later borrower never sees an earlier one's value. PostgreSQL:
``SELECT set_config('webhub.userstaffid', ?, false)``; MariaDB:
``SET @webhub_userstaffid = ?``; SQLite has no session settings, so every SQLite
connection gets a ``temp.webhub_session(name TEXT PRIMARY KEY, value TEXT)`` table:
``INSERT OR REPLACE INTO temp.webhub_session VALUES ('userstaffid', ?)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from hub.dburl import DatabaseUrl, utf8_parameters
from hub.dburl import parse_database_url as parse_url
from hub.outside.sqlite_guard import SqliteGuard, refusal, refused_in_sqlite_text
from hub.outside.values import params_from_json, to_json
from shared.errors import BadRequest, JobFailed

__all__ = ["CANCELLED", "Database", "DatabaseUrl", "parse_database_url", "utf8_parameters"]

CANCELLED = "the statement was cancelled: the run's time ran out"
SQLITE_TEMP_TABLE = (
    "CREATE TEMP TABLE IF NOT EXISTS webhub_session (name TEXT PRIMARY KEY, value TEXT)"
)
# Longest an ODBC login may take, whatever time the run has left.
MAX_LOGIN_S = 10.0
SQLITE_BUSY_S = 5.0
CANCEL_EVERY_S = 0.1
CANCEL_TRIES = 100

Result = list[dict[str, Any]] | dict[str, Any]
SETTING = "WEBJOB_DB"  # the jobs' database (hub.settings), named in its errors


def parse_database_url(url: str) -> DatabaseUrl:
    """The jobs' database URL (``WEBJOB_DB``): see :func:`hub.dburl.parse_database_url`."""
    return parse_url(url, SETTING)


@dataclass
class _Call:
    """One statement in flight: what the event loop needs to cancel it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    conn: Any = None
    cursor: Any = None
    finished: bool = False
    cancelled: bool = False


class _Driver:
    """What differs between sqlite3 and pyodbc."""

    def connect(self, login_s: float) -> Any:
        raise NotImplementedError

    def cancel(self, call: _Call) -> None:
        raise NotImplementedError

    def failure(self, exc: Exception, conn: Any = None) -> JobFailed | None:
        """The job's error for a driver exception, or None if it is not the driver's."""
        raise NotImplementedError

    def broken(self, exc: Exception) -> bool:
        """True when the connection should be thrown away after ``exc``."""
        return False

    def before_statement(self, conn: Any, sql: str, hub_statement: bool) -> None:
        """Refuse (JobFailed) what this driver cannot let ``sql`` do; ``hub_statement``
        is True for the hub's own session statement."""

    def reset(self, conn: Any) -> bool:
        """Clear what a statement left in the connection's session; False when the
        connection must be closed instead of going back to the pool."""
        return True


class _SqliteDriver(_Driver):
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
            factory=_GuardedConnection,
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

    def cancel(self, call: _Call) -> None:
        if call.conn is not None:
            call.conn.interrupt()

    def failure(self, exc: Exception, conn: Any = None) -> JobFailed | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        refused = conn.guard.refused if isinstance(conn, _GuardedConnection) else None
        if refused is not None and isinstance(exc, sqlite3.DatabaseError):
            return refusal(refused)
        return JobFailed(str(exc) or type(exc).__name__, sqlstate=type(exc).__name__)

    def before_statement(self, conn: Any, sql: str, hub_statement: bool) -> None:
        conn.guard.refused = None
        conn.guard.hub_statement = hub_statement

    def reset(self, conn: Any) -> bool:
        if conn.in_transaction:  # a job's BEGIN or SAVEPOINT never reaches the next caller
            conn.rollback()
        return True


class _GuardedConnection(sqlite3.Connection):
    """A sqlite3 connection that carries its authorizer, so a failure can say what
    the authorizer refused."""

    guard: SqliteGuard

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = SqliteGuard()


class _OdbcDriver(_Driver):
    def __init__(self, conn_str: str) -> None:
        self.conn_str = conn_str
        # Imported lazily: only for odbc: URLs.
        self.pyodbc: Any = cast(Any, importlib.import_module("pyodbc"))
        self.pyodbc.native_uuid = True  # uuid columns as uuid.UUID, so values.py maps them

        self.dbms = ""  # the server's SQL_DBMS_NAME, lower case, once connected

    def connect(self, login_s: float) -> Any:
        timeout = max(1, round(min(login_s, MAX_LOGIN_S)))
        conn = self.pyodbc.connect(self.conn_str, autocommit=True, timeout=timeout)
        self.dbms = str(conn.getinfo(self.pyodbc.SQL_DBMS_NAME)).lower()
        utf8_parameters(self.pyodbc, conn)
        return conn

    def before_statement(self, conn: Any, sql: str, hub_statement: bool) -> None:
        refused = None if hub_statement or "sqlite" not in self.dbms else (
            refused_in_sqlite_text(sql))
        if refused is not None:
            raise refusal(refused)

    def reset(self, conn: Any) -> bool:
        if "postgresql" not in self.dbms:
            return False  # a fresh session for the next statement (see the module text)
        cursor = conn.cursor()
        try:
            try:
                cursor.execute("DISCARD ALL")
            except self.pyodbc.Error:  # it cannot run inside the transaction a job left open
                cursor.execute("ROLLBACK")
                cursor.execute("DISCARD ALL")
        finally:
            cursor.close()
        return True

    def cancel(self, call: _Call) -> None:
        if call.cursor is not None:
            call.cursor.cancel()

    def failure(self, exc: Exception, conn: Any = None) -> JobFailed | None:
        if not isinstance(exc, self.pyodbc.Error):
            return None
        state = str(exc.args[0]) if len(exc.args) > 1 else None
        message = str(exc.args[-1]) if exc.args else type(exc).__name__
        return JobFailed(message, sqlstate=state)

    def broken(self, exc: Exception) -> bool:
        state = str(exc.args[0]) if len(exc.args) > 1 else ""
        return state.startswith(("08", "HYT")) or isinstance(exc, self.pyodbc.InterfaceError)


def _driver_for(url: DatabaseUrl, max_value_bytes: int) -> _Driver:
    if url.kind == "sqlite":
        return _SqliteDriver(url.target, max_value_bytes)
    try:
        return _OdbcDriver(url.target)
    except ImportError:
        raise BadRequest(f"{SETTING}: odbc URLs need the pyodbc package and unixODBC") from None


class Database:
    """A bounded pool of connections to one database, used from the event loop."""

    def __init__(self, url: str, pool_size: int = 8, session_sql: str | None = None,
                 max_value_mb: int = 64) -> None:
        if pool_size < 1:
            raise BadRequest("the database pool needs at least one connection")
        self.url = parse_database_url(url)
        self.pool_size = pool_size
        self.session_sql = session_sql
        self._driver = _driver_for(self.url, max_value_mb * 1024 * 1024)
        self._idle: list[Any] = []
        self._idle_lock = threading.Lock()
        self._slots = asyncio.Semaphore(pool_size)
        self._executor = ThreadPoolExecutor(pool_size, thread_name_prefix="webjobs-db")
        self._closed = False

    async def exec(
        self, sql: str, params: list[Any] | None, staff_id: int | None, timeout_s: float
    ) -> Result:
        """Run one statement within ``timeout_s`` seconds (waiting for a connection included)."""
        if self._closed:
            raise JobFailed("database unavailable: the hub is shutting down")
        if not isinstance(sql, str) or not sql.strip():
            raise JobFailed("db.exec needs an SQL statement as its first argument")
        bound = params_from_json(params)
        deadline = time.monotonic() + timeout_s
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=max(timeout_s, 0.0))
        except TimeoutError:
            raise JobFailed(
                f"database busy: no free connection within {timeout_s:g}s "
                f"(all {self.pool_size} in use)"
            ) from None
        return await self._run(sql, bound, staff_id, deadline)

    async def _run(
        self, sql: str, bound: list[Any], staff_id: int | None, deadline: float
    ) -> Result:
        call = _Call()
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(
                self._executor, self._work, call, sql, bound, staff_id, deadline
            )
        except RuntimeError:  # closed while this run waited for a connection
            self._slots.release()
            raise JobFailed("database unavailable: the hub is shutting down") from None
        # The slot comes back only once the thread is really done with the connection.
        future.add_done_callback(self._thread_done)
        try:
            done, _ = await asyncio.wait({future}, timeout=max(deadline - time.monotonic(), 0.0))
        except asyncio.CancelledError:
            self._cancel(call)
            raise
        if future in done or not self._cancel(call):
            return await future
        raise JobFailed(CANCELLED)

    def _thread_done(self, future: asyncio.Future[Result]) -> None:
        if not future.cancelled():
            future.exception()  # retrieved: a cancelled run's late failure is not news
        self._slots.release()

    def _cancel(self, call: _Call) -> bool:
        """Cancel the statement from another thread; False if it had already finished."""
        with call.lock:
            if call.finished:
                return False
            call.cancelled = True
        threading.Thread(
            target=self._keep_cancelling, args=(call,), name="webjobs-db-cancel", daemon=True
        ).start()
        return True

    def _keep_cancelling(self, call: _Call) -> None:
        # A cancel that lands between two steps (connecting, the session statement) is
        # a no-op, so it is repeated until the thread gives the connection up.
        # Under the lock: the thread never closes the cursor while it is being cancelled.
        for _ in range(CANCEL_TRIES):
            with call.lock:
                if call.finished:
                    return
                _quietly(self._driver.cancel, call)
            time.sleep(CANCEL_EVERY_S)

    # Everything below runs in a pool thread.

    def _work(
        self, call: _Call, sql: str, bound: list[Any], staff_id: int | None, deadline: float
    ) -> Result:
        keep = False
        try:
            call.conn = self._borrow(deadline)
            with call.lock:
                if call.cancelled:
                    raise JobFailed(CANCELLED)
            result = self._statement(call, sql, bound, staff_id)
            keep = True
            return result
        except JobFailed:
            raise
        except Exception as exc:
            keep = not self._driver.broken(exc)
            raise self._failure(exc, call.conn) from None
        finally:
            with call.lock:
                call.finished = True
                keep = keep and not call.cancelled and not self._closed
            self._give_back(call.conn, keep)

    def _failure(self, exc: Exception, conn: Any) -> Exception:
        failure = self._driver.failure(exc, conn)
        if failure is None:
            return exc
        if self._driver.broken(exc):
            return JobFailed(f"database unavailable: {failure.message}", **failure.extra)
        return failure

    def _borrow(self, deadline: float) -> Any:
        with self._idle_lock:
            if self._idle:
                return self._idle.pop()
        try:
            return self._driver.connect(max(deadline - time.monotonic(), 1.0))
        except Exception as exc:
            failure = self._driver.failure(exc)
            if failure is None:
                raise
            raise JobFailed(f"database unavailable: {failure.message}") from None

    def _give_back(self, conn: Any, keep: bool) -> None:
        if conn is None:
            return
        if keep:
            keep = _reset(self._driver, conn)
        if keep:
            with self._idle_lock:
                self._idle.append(conn)
        else:
            _quietly(conn.close)

    def _statement(self, call: _Call, sql: str, bound: list[Any], staff_id: int | None) -> Result:
        cursor = call.conn.cursor()
        call.cursor = cursor
        try:
            if self.session_sql is not None:
                staff = "" if staff_id is None else str(staff_id)
                self._driver.before_statement(call.conn, self.session_sql, True)
                cursor.execute(self.session_sql, [staff])
                if cursor.description is not None:
                    cursor.fetchall()
            self._driver.before_statement(call.conn, sql, False)
            cursor.execute(sql, bound)
            if cursor.description is None:
                return {"affectedRows": max(cursor.rowcount, 0)}
            names = [str(col[0]) for col in cursor.description]
            return [
                {name: to_json(value) for name, value in zip(names, row, strict=False)}
                for row in cursor.fetchall()
            ]
        finally:
            with call.lock:
                call.cursor = None
                _quietly(cursor.close)

    async def close(self) -> None:
        """Refuse new statements, close idle connections, let running ones finish."""
        self._closed = True
        with self._idle_lock:
            idle, self._idle = self._idle, []
        await asyncio.to_thread(_close_all, idle)
        self._executor.shutdown(wait=False, cancel_futures=True)


def _reset(driver: _Driver, conn: Any) -> bool:
    try:
        return driver.reset(conn)
    except Exception:  # a connection that cannot be reset is not reused
        return False


def _close_all(conns: list[Any]) -> None:
    for conn in conns:
        _quietly(conn.close)


def _quietly(fn: Callable[..., Any], *args: Any) -> None:
    # Closing or cancelling a dead connection must not fail the run.
    with contextlib.suppress(Exception):
        fn(*args)
