"""Fresh, empty databases on the development machine's servers, for tests of the
hub's own tables (identity, job store, history, schedules) on every backend.

PostgreSQL on 127.0.0.1:5432 (``postgres``, trust auth) and MariaDB on
127.0.0.1:3306 (``root``, empty password) — ``make test`` starts both. Each
fresh database gets a random name and is dropped afterwards. When a server is
down the tests that need it FAIL, never skip.

Kinds: ``sqlite`` (the embedded file), ``sqlite-odbc``, ``postgresql`` (a
``postgresql://`` URL: psycopg 3, the hub's native PostgreSQL driver),
``postgresql-odbc`` (the same server through psqlODBC, as older installs have it)
and ``mariadb`` (ODBC).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pyodbc

from hub.store.hubdb import HubDatabase, open_hub_database

PG_URL = "postgresql://postgres@127.0.0.1:5432/%s"
PG_ADMIN_URL = PG_URL % "postgres"
PG_ADMIN = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=test;UID=postgres"
PG_DB = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=%s;UID=postgres"
MARIA_ADMIN = "DRIVER={MariaDB Unicode};SERVER=127.0.0.1;PORT=3306;DATABASE=test;UID=root;PWD="
MARIA_DB = "DRIVER={MariaDB Unicode};SERVER=127.0.0.1;PORT=3306;DATABASE=%s;UID=root;PWD="
SQLITE_ODBC_DB = "Driver=SQLite3;BigInt=1;Database=%s"

# The hub database backends the contract suites run against.
HUB_BACKENDS = ("sqlite", "postgresql", "postgresql-odbc", "mariadb")


def _admin(conn_str: str, sql: str) -> None:
    conn = pyodbc.connect(conn_str, autocommit=True, timeout=10)
    try:
        conn.cursor().execute(sql)
    finally:
        conn.close()


def maria_admin(sql: str) -> list[tuple[Any, ...]]:
    """One statement as MariaDB's root, on the ``test`` database: its rows, if any."""
    conn = pyodbc.connect(MARIA_ADMIN, autocommit=True, timeout=10)
    try:
        cursor = conn.cursor()
        cursor.execute(sql)
        return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
    finally:
        conn.close()


def pg_admin(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """One statement as the PostgreSQL superuser, on the ``postgres`` database."""
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=10) as conn:
        cursor = conn.execute(sql, list(params) or None)
        return list(cursor.fetchall()) if cursor.description else []


def query(url: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """One statement (``?`` placeholders) on the database a fresh URL names, outside
    any hub: for tests that look at what the hub wrote."""
    db = open_hub_database(url, pool_size=1)
    try:
        return db.read(sql, params)
    finally:
        db.close()


def database_name(url: str) -> str:
    """The PostgreSQL or MariaDB database a fresh URL names."""
    if url.startswith("postgresql://"):
        return url.rsplit("/", 1)[1].split("?", 1)[0]
    fields = dict(f.split("=", 1) for f in url.removeprefix("odbc:").split(";") if "=" in f)
    return fields["DATABASE"]


@contextlib.contextmanager
def fresh_database(kind: str, tmp_path: Path) -> Iterator[str]:
    """A ``WEBHUB_DB``-style URL to a new empty database of ``kind``, dropped after."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'hub-test.db'}"
        return
    if kind == "sqlite-odbc":
        yield f"odbc:{SQLITE_ODBC_DB % (tmp_path / 'hub-test-odbc.db')}"
        return
    name = f"wjtest_{os.urandom(5).hex()}"
    if kind in ("postgresql", "postgresql-odbc"):
        pg_admin(f"CREATE DATABASE {name}")
        try:
            yield PG_URL % name if kind == "postgresql" else f"odbc:{PG_DB % name}"
        finally:
            pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        return
    if kind != "mariadb":
        raise ValueError(f"no such database kind: {kind}")
    _admin(MARIA_ADMIN, f"CREATE DATABASE {name}")
    try:
        yield f"odbc:{MARIA_DB % name}"
    finally:
        _admin(MARIA_ADMIN, f"DROP DATABASE IF EXISTS {name}")


@contextlib.contextmanager
def database_nodes(kind: str, tmp_path: Path) -> Iterator[Callable[[], HubDatabase]]:
    """A fresh database of ``kind`` and a way to open one more hub node's connection
    pool on it (each call another node); every pool is closed, then the database
    dropped."""
    databases: list[HubDatabase] = []
    with fresh_database(kind, tmp_path) as url:
        def node() -> HubDatabase:
            databases.append(open_hub_database(url))
            return databases[-1]

        try:
            yield node
        finally:
            for db in databases:
                db.close()
