"""The hub's own database (``WEBHUB_DB``): users, jobs, schedules, shared history.

Three kinds of URL (see :mod:`hub.dburl`):

* ``sqlite:///path`` — the embedded default, Python's :mod:`sqlite3`;
* ``postgresql://user:password@host:port/database`` (or ``postgres://``) — PostgreSQL
  through psycopg 3 (:mod:`hub.store.pgconn`, imported only then), the only backend
  with push notifications (:meth:`HubDatabase.notify`, :meth:`HubDatabase.listen`);
* ``odbc:<connection string>`` through :mod:`pyodbc` (imported only then) to
  PostgreSQL, MariaDB, SQLite3 or SQL Server; the dialect is read from the driver.

Stores write one SQL text with ``?`` placeholders on every backend; what differs
per database is asked of ``db.dialect`` (:mod:`hub.store.dialects`).

A small pool of connections is shared by the hub's threads: every statement borrows
one, autocommit; :meth:`HubDatabase.transaction` holds one for several statements.
A pooled connection is checked before reuse (pinged after a few idle seconds; a
psycopg one also shows at once that the server ended its session) and a dead one
replaced. A read, or a transaction's ``BEGIN``, lost on a reused connection is sent
once more on a new one; a statement that changes rows never is (it may have landed):
:meth:`HubDatabase.write`, :meth:`~HubDatabase.insert` and, for one that returns rows
(``... RETURNING``), :meth:`~HubDatabase.write_returning` — unless its caller says that
sending it again is harmless. :meth:`~HubDatabase.read` refuses such a statement.

Driver failures leave as the hub's errors:

* a unique or foreign-key clash is :class:`Conflict`; a statement or a value the
  server refuses an :class:`InternalError` saying so (its fault, not an outage);
  the connection is kept;
* a database that cannot be reached, or is locked past the busy timeout, is
  :class:`~shared.errors.StoreUnavailable`, quickly (a short connect timeout) — the
  broken connection is dropped and the next call connects afresh, so a server that
  comes back is used again;
* anything else is an :class:`~shared.errors.InternalError` naming the database error.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hub.dburl import DatabaseUrl, parse_database_url, utf8_parameters
from hub.store.dialects import Dialect
from hub.store.drivers import BUSY_S, LOGIN_S, OdbcDriver, SqliteDriver
from hub.store.notify import check_notification
from hub.store.times import iso_of, seconds_of
from hub.store.tx import ConnectionLost, Lease, Row, Tx
from shared.errors import BadRequest, Conflict, InternalError, StoreUnavailable

if TYPE_CHECKING:
    from hub.store.notify import Listener

__all__ = ["BUSY_S", "LOGIN_S", "Conflict", "ConnectionLost", "HubDatabase", "Row", "Tx",
           "iso_of", "open_hub_database", "seconds_of", "utf8_parameters"]

log = logging.getLogger("webhub.db")
T = TypeVar("T")


class _Driver(Protocol):
    """What the pool asks of a driver (:mod:`hub.store.drivers`, :mod:`hub.store.pgconn`)."""

    @property
    def dialect(self) -> Dialect: ...
    def connect(self) -> Any: ...
    def usable(self, conn: Any, idle_s: float) -> bool: ...
    def execute(self, conn: Any, sql: str, params: Sequence[Any], *,
                fresh_plan: bool = False) -> Any: ...
    def begin(self, conn: Any) -> None: ...
    def end(self, conn: Any, *, commit: bool) -> None: ...
    def new_id(self, cursor: Any) -> int | None: ...
    def close(self, conn: Any) -> None: ...
    def lost_connection(self, exc: Exception) -> bool: ...
    def translate(self, exc: Exception) -> Exception: ...


class HubDatabase:
    """A pool of connections to one database, with its dialect."""

    def __init__(self, url: DatabaseUrl, *, pool_size: int = 4, label: str = "hub database",
                 setting: str = "WEBHUB_DB") -> None:
        self.url = url
        self.label = label
        self.setting = setting
        self.pool_size = pool_size
        self._idle: queue.LifoQueue[tuple[Any, float]] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(pool_size)
        self._closed = False
        self._prepared: set[str] = set()   # schemas ensure_schema_once has made
        self._prepare_lock = threading.Lock()
        self._local = threading.local()    # the transaction open on this thread, if any
        self._listeners: list[Listener] = []
        self.driver: _Driver
        if url.kind == "postgresql":
            from hub.store.pgconn import PsycopgDriver
            self.driver = PsycopgDriver(url, label, setting)
            self._idle.put((self.driver.connect(), time.monotonic()))  # fails fast if down
        elif url.kind == "odbc":
            odbc = OdbcDriver(url, label, setting)
            self.driver = odbc
            self._idle.put((odbc.first, time.monotonic()))
        else:
            self.driver = SqliteDriver(url, label)
        self.dialect = self.driver.dialect

    @property
    def kind(self) -> str:
        """What the database is, for /store and /metrics: ``sqlite`` or the dialect
        (``postgresql`` through psycopg and through ODBC alike)."""
        return "sqlite" if self.url.kind == "sqlite" else self.dialect.name

    def describe(self) -> str:
        """The SQLite file's URL, or the server's dialect (never a connection detail)."""
        return str(self.url) if self.url.kind == "sqlite" else self.dialect.name

    # -- connections ------------------------------------------------------------

    def _take(self, *, fresh: bool = False) -> Lease:
        if self._closed:
            raise StoreUnavailable(f"The {self.label} is closed")
        self._slots.acquire()
        try:
            lease = None if fresh else self._pooled()
            return lease or Lease(self.driver.connect(), reused=False)
        except BaseException:
            self._slots.release()
            raise

    def _pooled(self) -> Lease | None:
        """The most recently used idle connection that still works; dead ones are
        closed on the way (after a server restart, all of them)."""
        while True:
            try:
                conn, since = self._idle.get_nowait()
            except queue.Empty:
                return None
            if self.driver.usable(conn, time.monotonic() - since):
                return Lease(conn, reused=True)
            log.info("%s: a pooled connection was closed by the server; replacing it",
                     self.label)
            self.driver.close(conn)

    def _give(self, lease: Lease, *, keep: bool) -> None:
        try:
            if keep and not self._closed and self._idle.qsize() < self.pool_size:
                self._idle.put((lease.conn, time.monotonic()))
            else:
                self.driver.close(lease.conn)
        finally:
            self._slots.release()

    def _drop_idle(self) -> None:
        """Close every idle connection: one was lost under a statement, and what ends
        one session (a server restart, a network cut) usually ended them all."""
        while True:
            try:
                conn, _ = self._idle.get_nowait()
            except queue.Empty:
                return
            self.driver.close(conn)

    def _once(self, work: Callable[[Tx], T], *, retry: bool) -> T:
        """``work`` on a borrowed connection; when ``retry`` (the work is a read) and
        the reused connection was lost under it, once more on a new connection."""
        lease = self._take()
        try:
            result = work(Tx(self, lease.conn))
        except ConnectionLost:
            self._give(lease, keep=False)
            self._drop_idle()
            if not (retry and lease.reused):
                raise
            log.info("%s: a pooled connection was lost under a read; reading again",
                     self.label)
            lease = self._take(fresh=True)
            try:
                result = work(Tx(self, lease.conn))
            except BaseException as exc:
                self._give(lease, keep=_keeps_connection(exc))
                raise
        except BaseException as exc:
            self._give(lease, keep=_keeps_connection(exc))
            raise
        self._give(lease, keep=True)
        return result

    # -- statements -------------------------------------------------------------

    def read(self, sql: str, params: Sequence[Any] = (), *,
             fresh_plan: bool = False) -> list[Row]:
        """Rows of a query that changes nothing (sent again if the connection is lost).

        ``fresh_plan``: planned for these very values, never from a plan kept for the
        statement text. PostgreSQL soon gives a prepared statement a generic plan, and
        for a search that plan reads every match of a common term where the newest rows
        would have filled a page at once. psycopg sends such a read as an unnamed
        statement; psqlODBC sends every statement so (a new cursor each time)."""
        if _changes_rows(sql):
            raise InternalError("A statement that changes rows was sent as a read "
                                "(it would be sent again): use write_returning")
        return self._once(lambda tx: tx.read(sql, params, fresh_plan=fresh_plan), retry=True)

    def write_returning(self, sql: str, params: Sequence[Any] = (), *,
                        resend: bool = False) -> list[Row]:
        """Run one statement that changes rows and returns some (``... RETURNING``);
        those rows. A connection lost under it is StoreUnavailable (ConnectionLost),
        not a second try: it may have landed, and sent again it would find its own
        rows (a claim would say another node won, a counter count twice). ``resend``
        is the caller's word that the statement, sent again after it landed, changes
        nothing more and returns the same rows: then it is sent once more."""
        return self._once(lambda tx: tx.read(sql, params), retry=resend)

    def read_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.read(sql, params)
        return rows[0] if rows else None

    def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._once(lambda tx: tx.write(sql, params), retry=False)

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._once(lambda tx: tx.insert(sql, params), retry=False)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Tx]:
        """Statements that land together or not at all. SQLite takes its write lock at
        the start (``BEGIN IMMEDIATE``), so a read-then-write inside is not raced.
        :meth:`notify` called inside (on this thread) goes out at the commit."""
        lease = self._begun()
        tx = Tx(self, lease.conn)
        outer = getattr(self._local, "tx", None)
        self._local.tx = tx
        try:
            yield tx
        except BaseException as exc:
            self._local.tx = outer
            rolled_back = self._end(lease, commit=False)
            self._give(lease, keep=rolled_back and _keeps_connection(exc))
            raise
        self._local.tx = outer
        try:
            self._end(lease, commit=True)
        except BaseException:
            self._give(lease, keep=False)
            raise
        self._give(lease, keep=True)

    def _begun(self) -> Lease:
        """A connection with a transaction begun; a reused connection lost at the
        ``BEGIN`` is replaced once (nothing of the transaction was sent)."""
        lease = self._take()
        try:
            self.driver.begin(lease.conn)
            return lease
        except Exception as exc:
            self._give(lease, keep=False)
            error = self.translate(exc)
            if not isinstance(error, ConnectionLost):
                raise error from None
            self._drop_idle()
            if not lease.reused:
                raise error from None
        lease = self._take(fresh=True)
        try:
            self.driver.begin(lease.conn)
        except Exception as exc:
            self._give(lease, keep=False)
            raise self.translate(exc) from None
        return lease

    def _end(self, lease: Lease, *, commit: bool) -> bool:
        """Commit or roll back; whether a rollback went through (a failed commit
        raises: the changes may not have landed)."""
        try:
            self.driver.end(lease.conn, commit=commit)
            return True
        except Exception as exc:
            if commit:
                raise self.translate(exc) from None
            return False

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

    # -- notifications ----------------------------------------------------------

    @property
    def supports_notify(self) -> bool:
        """Whether :meth:`notify` reaches other nodes' :meth:`listen`: PostgreSQL
        through psycopg only (the ODBC driver cannot receive notifications)."""
        return self.url.kind == "postgresql"

    def notify(self, channel: str, payload: str = "") -> None:
        """Tell every listener on ``channel`` (this node's too) ``payload``.

        Inside :meth:`transaction` on this thread, it goes out when the transaction
        commits (and not if it rolls back); outside, at once. ``channel`` is a name of
        letters, digits and ``_``; ``payload`` under 8000 bytes of UTF-8, else
        BadRequest. A no-op where :attr:`supports_notify` is False. Delivery is at most
        once per connected listener: a listener that was away is told to resync
        instead; one lost connection may, rarely, deliver a notification twice."""
        check_notification(channel, payload)
        if not self.supports_notify:
            return
        tx: Tx | None = getattr(self._local, "tx", None)
        if tx is not None:
            tx.notify(channel, payload)
        else:
            self.read("SELECT pg_notify(?, ?)", [channel, payload])

    def listen(self, channels: Iterable[str], on_message: Callable[[str, str], None],
               on_resync: Callable[[], None],
               on_lost: Callable[[], None] | None = None) -> Listener:
        """Start a :class:`~hub.store.notify.Listener`: its own connection in a daemon
        thread, ``LISTEN`` on each of ``channels``. ``on_message(channel, payload)``
        for every notification, ``on_resync()`` after every (re)connect, the first
        included — notifications sent while it was away are lost, so reload then;
        ``on_lost()`` when a connection is lost (nothing is heard until the next
        ``on_resync()``). All run ON THE LISTENER'S THREAD: keep them short,
        thread-safe, and hand long work elsewhere; an exception from them is logged
        and the listener goes on.
        Stop it with ``Listener.close()`` (also done by :meth:`close`). Only where
        :attr:`supports_notify` (else InternalError)."""
        from hub.store.notify import Listener
        from hub.store.pgconn import PsycopgDriver

        if not isinstance(self.driver, PsycopgDriver):
            raise InternalError(f"The {self.label} cannot push notifications "
                                f"({self.kind} through {self.url.kind})")
        listener = Listener(self.driver, channels, on_message, on_resync, on_lost)
        self._listeners = [*(x for x in self._listeners if x.running), listener]
        return listener

    def close(self) -> None:
        self._closed = True
        for listener in self._listeners:
            listener.close()
        self._drop_idle()

    # -- errors -----------------------------------------------------------------

    def translate(self, exc: Exception) -> Exception:
        """The hub's error for a driver's (see the module doc). A lost connection is a
        :class:`ConnectionLost`, which the pool drops (and may try again)."""
        if isinstance(exc, (StoreUnavailable, InternalError, BadRequest)):
            return exc
        error = self.driver.translate(exc)
        if isinstance(error, StoreUnavailable) and self.driver.lost_connection(exc):
            return ConnectionLost(error.message)
        if error is exc:
            return InternalError(f"The {self.label} failed: {type(exc).__name__}")
        return error


_CHANGES = ("INSERT", "UPDATE", "DELETE", "MERGE", "REPLACE", "UPSERT")


def _changes_rows(sql: str) -> bool:
    """Whether ``sql`` changes rows by its look: it starts with a changing verb or
    returns what it changed (a ``WITH`` around an upsert)."""
    words = sql.upper().split()
    return bool(words) and (words[0] in _CHANGES or "RETURNING" in words)


def _keeps_connection(exc: BaseException) -> bool:
    """Whether a connection may go back to the pool after ``exc``: after the
    statement's own failure (a clash, a refused value, the caller's exception) yes;
    after an outage or an interruption (the connection's state is unknown) no."""
    return isinstance(exc, Exception) and not isinstance(exc, StoreUnavailable)


def open_hub_database(url: str, *, setting: str = "WEBHUB_DB", label: str = "hub database",
                      pool_size: int = 4) -> HubDatabase:
    """The hub database at ``url`` (``sqlite:///``, ``postgresql://`` or ``odbc:``)."""
    return HubDatabase(parse_database_url(url, setting, native_postgresql=True),
                       pool_size=pool_size, label=label, setting=setting)
