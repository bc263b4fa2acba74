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
* ``the statement was cancelled: the run's time ran out`` — the run ended (its time or
  CPU ran out, it was stopped, its caller went away): the statement was cancelled
  (``connection.interrupt()`` for SQLite; for ODBC ``SQLCancel``, then on PostgreSQL and
  MariaDB the server itself, see :mod:`hub.outside.db_odbc`) and its connection thrown
  away. Rows are fetched in batches, and a cancelled fetch stops between two;
* ``db.exec refuses …`` with ``extra["sqlstate"] == "42501"`` — the statement tried
  to reach past the business database, the hub's host or the login
  (:mod:`hub.outside.sqlite_guard`, :mod:`hub.outside.server_sql`);
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
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from hub.dburl import DatabaseUrl, utf8_parameters
from hub.dburl import parse_database_url as parse_url
from hub.outside import mariadb_client
from hub.outside.db_drivers import Call, Driver, SqliteDriver
from hub.outside.db_odbc import OdbcDriver
from hub.outside.values import params_from_json, to_json
from shared.errors import BadRequest, JobFailed, LimitExceeded

__all__ = ["CANCELLED", "Database", "DatabaseUrl", "parse_database_url", "utf8_parameters"]

CANCELLED = "the statement was cancelled: the run's time ran out"
CANCEL_EVERY_S = 0.1
CANCEL_TRIES = 100
# A statement still not back this long after its first cancel has its session ended.
END_SESSION_AFTER_S = 2.0
FETCH_BATCH = 500

Result = list[dict[str, Any]] | dict[str, Any]
SETTING = "WEBJOB_DB"  # the jobs' database (hub.settings), named in its errors
ROWS_SETTING, PAYLOAD_SETTING = "WEBJOB_DB_MAX_ROWS", "WEBJOB_MAX_PAYLOAD_MB"

# Connector/C reads MARIADB_HOME once, when the process's first MariaDB connection
# starts the library: set it on import, before any connection of a hub process.
mariadb_client.point_connector_here()


def parse_database_url(url: str) -> DatabaseUrl:
    """The jobs' database URL (``WEBJOB_DB``): see :func:`hub.dburl.parse_database_url`."""
    return parse_url(url, SETTING)


def _driver_for(url: DatabaseUrl, max_value_bytes: int) -> Driver:
    if url.kind == "sqlite":
        return SqliteDriver(url.target, max_value_bytes)
    try:
        return OdbcDriver(url.target)  # imports pyodbc: only for odbc: URLs
    except ImportError:
        raise BadRequest(f"{SETTING}: odbc URLs need the pyodbc package and unixODBC") from None


class Database:
    """A bounded pool of connections to one database, used from the event loop."""

    def __init__(self, url: str, pool_size: int = 8, session_sql: str | None = None,
                 max_value_mb: int = 64, max_rows: int = 100_000) -> None:
        if pool_size < 1:
            raise BadRequest("the database pool needs at least one connection")
        self.url = parse_database_url(url)
        self.pool_size = pool_size
        self.session_sql = session_sql
        self._driver = _driver_for(self.url, max_value_mb * 1024 * 1024)
        # One answer's caps, counted while its rows are fetched (JOB-003 past either).
        self._caps = _AnswerCaps(max_rows, max_value_mb * 1024 * 1024)
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
        call = Call()
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

    def _cancel(self, call: Call) -> bool:
        """Cancel the statement from another thread; False if it had already finished."""
        with call.lock:
            if call.finished:
                return False
            call.cancelled = True
        threading.Thread(
            target=self._keep_cancelling, args=(call,), name="webjobs-db-cancel", daemon=True
        ).start()
        return True

    def _keep_cancelling(self, call: Call) -> None:
        # A cancel that lands between two steps (connecting, the session statement) is
        # a no-op, so it is repeated until the thread gives the connection up.
        # Under the lock: the thread never closes the cursor while it is being cancelled.
        # The server is asked too, from a connection of its own and outside the lock
        # (opening one takes time): first for the statement, later for its session, so
        # a driver that ignores the cancel (or a statement the client itself is feeding)
        # never holds a connection of the pool for good.
        started, asked = time.monotonic(), 0
        for _ in range(CANCEL_TRIES):
            with call.lock:
                if call.finished:
                    return
                _quietly(self._driver.cancel, call)
            if asked == 0 or (asked == 1 and time.monotonic() - started >= END_SESSION_AFTER_S):
                _quietly(self._driver.cancel_on_server, call, asked == 1)
                asked += 1
            time.sleep(CANCEL_EVERY_S)

    # Everything below runs in a pool thread.

    def _work(
        self, call: Call, sql: str, bound: list[Any], staff_id: int | None, deadline: float
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
        except LimitExceeded:
            raise  # rows were left unread: the connection goes (keep stays False)
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

    def _statement(self, call: Call, sql: str, bound: list[Any], staff_id: int | None) -> Result:
        cursor = call.conn.cursor()
        call.cursor = cursor
        try:
            if self.session_sql is not None:
                staff = "" if staff_id is None else str(staff_id)
                self._driver.before_statement(call.conn, self.session_sql, True)
                cursor.execute(self.session_sql, [staff])
                if cursor.description is not None:
                    cursor.fetchall()
            self._driver.before_statement(call.conn, sql, False, with_params=bool(bound))
            cursor.execute(sql, bound)
            if cursor.description is None:
                return {"affectedRows": max(cursor.rowcount, 0)}
            return _rows(call, cursor, self._caps)
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


@dataclass(frozen=True)
class _AnswerCaps:
    rows: int
    size: int  # bytes of JSON, about


def _rows(call: Call, cursor: Any, caps: _AnswerCaps) -> list[dict[str, Any]]:
    """Every row as an object, fetched in batches: a cancel stops the fetch between two,
    and so does an answer over either cap (JOB-003 naming it), before the rest is read."""
    names = [str(col[0]) for col in cursor.description]
    per_row = sum(len(name) + 4 for name in names) + 2
    rows: list[dict[str, Any]] = []
    size = 0
    while batch := cursor.fetchmany(FETCH_BATCH):
        if call.cancelled:
            raise JobFailed(CANCELLED)
        if len(rows) + len(batch) > caps.rows:
            raise LimitExceeded(f"db.exec's answer has more than {caps.rows} rows "
                                f"({ROWS_SETTING})", limit="rows")
        for row in batch:
            converted = {name: to_json(value) for name, value in zip(names, row, strict=False)}
            size += per_row + sum(len(v) if isinstance(v, str) else 8
                                  for v in converted.values())
            if size > caps.size:
                raise LimitExceeded(f"db.exec's answer is over {caps.size // (1024 * 1024)} MB "
                                    f"({PAYLOAD_SETTING})", limit="payload")
            rows.append(converted)
    return rows


def _reset(driver: Driver, conn: Any) -> bool:
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
