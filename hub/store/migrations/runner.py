"""Schema upgrades of the hub's databases, with Alembic, one node at a time.

Alembic is given a SQLAlchemy engine whose only connection is the hub's own
(``creator=``: the same driver, options and fixes as the stores' pool), with the
SQLAlchemy dialect matching it:

* ``sqlite:///`` — ``sqlite+pysqlite``;
* ``postgresql://`` (psycopg 3) — ``postgresql+psycopg``;
* ODBC PostgreSQL — PostgreSQL's dialect over pyodbc's connector
  (:mod:`.odbc_dialect`; SQLAlchemy ships none);
* ODBC MariaDB — ``mysql+pyodbc``;
* ODBC SQLite — the file itself through ``sqlite3`` (SQLAlchemy has no SQLite
  dialect over ODBC; SQLite's own lock covers both drivers);
* SQL Server is refused: no server runs here to prove its lock and DDL.

The revisions run only their own plain DDL (through :mod:`hub.store.dialects`), so
the dialect matters only for Alembic's ``alembic_version`` table.

One node upgrades at a time: the others wait on a lock (``pg_advisory_lock`` on
PostgreSQL, ``GET_LOCK`` on MariaDB, SQLite's write lock taken by ``BEGIN
IMMEDIATE``), then read the version again and find nothing left to do. A database
at a revision this code does not know (written by a newer hub) is refused.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from hub.store.drivers import _open_sqlite
from hub.store.hubdb import HubDatabase
from shared.errors import BadRequest, InternalError, StoreUnavailable

__all__ = ["current_revision", "head_revision", "pending_migrations", "upgrade"]

SCRIPTS = Path(__file__).resolve().parent
SCOPES = ("hub", "history")
LOCK_KEY = 0x57454A4F42  # any constant shared by every node of the hub
LOCK_NAME = "webjobs.schema_upgrade"
LOCK_WAIT_S = 600
OPEN_RETRY_S = 10.0


@functools.cache
def _script() -> ScriptDirectory:
    return ScriptDirectory(str(SCRIPTS))


def head_revision() -> str:
    head = _script().get_current_head()
    assert head is not None
    return head


def upgrade(db: HubDatabase, scope: str = "hub") -> list[str]:
    """Bring ``db`` to the newest revision under the migration lock; the revisions
    this call applied, oldest first (none when another node already did)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown migration scope {scope!r}")
    with _connected(db) as conn, _locked(conn, db):
        todo = _pending(db, _heads(conn))
        if todo:
            config = Config()
            config.set_main_option("script_location", str(SCRIPTS))
            config.attributes.update(connection=conn, hub_dialect=db.dialect, hub_scope=scope)
            command.upgrade(config, "head")
        conn.commit()
    return todo


def current_revision(db: HubDatabase) -> str | None:
    """The revision ``db`` is at (None: never upgraded, e.g. made by an older hub)."""
    with _connected(db) as conn:
        heads = _heads(conn)
        conn.rollback()
    return heads[0] if heads else None


def pending_migrations(db: HubDatabase) -> list[str]:
    """The revisions ``db`` lacks, oldest first (empty: up to date). A database newer
    than this code is an :class:`InternalError` saying so."""
    with _connected(db) as conn:
        heads = _heads(conn)
        conn.rollback()
    return _pending(db, heads)


def pending_on_pool(db: HubDatabase) -> list[str]:
    """:func:`pending_migrations`, read on one of ``db``'s pooled connections: readiness
    asks every second, and opening a connection each time would load the database."""
    try:
        rows = db.read("SELECT version_num FROM alembic_version")
    except StoreUnavailable:
        raise
    except InternalError:  # no version table yet: the whole way, which knows that case
        return pending_migrations(db)
    return _pending(db, tuple(str(row[0]) for row in rows))


def _heads(conn: Connection) -> tuple[str, ...]:
    return tuple(MigrationContext.configure(conn).get_current_heads())


def _pending(db: HubDatabase, heads: tuple[str, ...]) -> list[str]:
    script = _script()
    known = {rev.revision for rev in script.walk_revisions()}
    strange = [h for h in heads if h not in known]
    if strange:
        raise InternalError(
            f"The {db.label} ({db.setting}) is at schema revision {', '.join(strange)}, which "
            f"this hub does not know (its newest is {head_revision()}): a newer hub has "
            "upgraded it. Run that newer version of the hub here too.")
    lower = heads[0] if heads else "base"
    return [rev.revision for rev in reversed(list(script.iterate_revisions("head", lower)))]


# -- connections -------------------------------------------------------------------


@contextlib.contextmanager
def _connected(db: HubDatabase) -> Iterator[Connection]:
    """One SQLAlchemy connection on one new hub connection; driver failures leave as
    the hub's errors (StoreUnavailable when the database cannot be reached)."""
    engine = _engine(db)
    try:
        with engine.connect() as conn:
            yield conn
    except DBAPIError as exc:
        raise db.translate(exc.orig if isinstance(exc.orig, Exception) else exc) from None
    finally:
        engine.dispose()


def _engine(db: HubDatabase) -> Engine:
    name = db.dialect.name
    if db.url.kind == "sqlite":
        return create_engine("sqlite+pysqlite://", poolclass=NullPool,
                             creator=lambda: _sqlite_waiting(db.driver.connect))
    if db.url.kind == "odbc" and name == "sqlite":
        path = _odbc_sqlite_file(db.url.target, db.setting)
        return create_engine("sqlite+pysqlite://", poolclass=NullPool,
                             creator=lambda: _sqlite_waiting(lambda: _open_sqlite(path)))
    if name == "mssql":
        raise BadRequest(f"{db.setting}: the hub cannot upgrade its tables on SQL Server "
                         "(its upgrades are tested on SQLite, PostgreSQL and MariaDB only)")
    if db.url.kind == "odbc":
        from hub.store.migrations import odbc_dialect

        url = odbc_dialect.URL if name == "postgresql" else "mysql+pyodbc://"
    else:
        url = "postgresql+psycopg://"
    return create_engine(url, creator=lambda: _hub_connection(db), poolclass=NullPool)


def _hub_connection(db: HubDatabase) -> Any:
    # A connection made as the stores' pool makes them (driver options, MariaDB's
    # FOUND_ROWS and UTF-8), in transactions: the upgrade lands whole or not at all.
    conn = db.driver.connect()
    conn.autocommit = False
    return conn


def _sqlite_waiting(open_file: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
    """The hub's own connection (its file mode, WAL, pragmas), with a busy timeout
    long enough to wait for another node's upgrade. isolation_level is None, so the
    transaction is the one _locked begins."""
    deadline = time.monotonic() + OPEN_RETRY_S
    while True:
        try:
            conn = open_file()
            break
        except StoreUnavailable as exc:
            # Two nodes opening a new file at once: one finds it locked while the other
            # turns WAL on, an answer SQLite gives at once, without its busy wait.
            if "locked" not in exc.message or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    conn.execute(f"PRAGMA busy_timeout = {LOCK_WAIT_S * 1000}")
    return conn


def _odbc_sqlite_file(conn_str: str, setting: str) -> Path:
    for part in conn_str.split(";"):
        key, _, value = part.partition("=")
        if key.strip().lower() == "database" and value.strip():
            return Path(value.strip())
    raise BadRequest(f"{setting}: an ODBC SQLite database is upgraded through its file; "
                     "name it in the connection string with Database=<path>")


# -- the migration lock ------------------------------------------------------------


@contextlib.contextmanager
def _locked(conn: Connection, db: HubDatabase) -> Iterator[None]:
    """Held while the version is read and the revisions run; released however the
    upgrade ended (a session lock also goes with its connection)."""
    name = db.dialect.name
    if name == "postgresql":
        conn.exec_driver_sql(f"SELECT pg_advisory_lock({LOCK_KEY})").all()
        conn.commit()
        release = f"SELECT pg_advisory_unlock({LOCK_KEY})"
    elif name == "mariadb":
        got = conn.exec_driver_sql(f"SELECT GET_LOCK('{LOCK_NAME}', {LOCK_WAIT_S})").scalar()
        conn.commit()
        if got != 1:
            raise StoreUnavailable(f"The {db.label} is being upgraded by another node "
                                   f"for more than {LOCK_WAIT_S} s; try again later")
        release = f"SELECT RELEASE_LOCK('{LOCK_NAME}')"
    else:  # SQLite: the write lock, held by the transaction the upgrade runs in
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(DBAPIError):
            conn.rollback()
            conn.exec_driver_sql(release).all()
            conn.commit()
