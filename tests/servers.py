"""Fresh, empty databases on the development machine's servers, for tests of the
hub's own tables (identity, job store, history, schedules) on every backend.

PostgreSQL on 127.0.0.1:5432 (``postgres``, trust auth) and MariaDB on
127.0.0.1:3306 (``root``, empty password) — ``make test`` starts both. Each
fresh database gets a random name and is dropped afterwards. When a server is
down the tests that need it FAIL, never skip.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pyodbc

from hub.store.hubdb import HubDatabase, open_hub_database

PG_ADMIN = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=test;UID=postgres"
PG_DB = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=%s;UID=postgres"
MARIA_ADMIN = "DRIVER={MariaDB Unicode};SERVER=127.0.0.1;PORT=3306;DATABASE=test;UID=root;PWD="
MARIA_DB = "DRIVER={MariaDB Unicode};SERVER=127.0.0.1;PORT=3306;DATABASE=%s;UID=root;PWD="
SQLITE_ODBC_DB = "Driver=SQLite3;BigInt=1;Database=%s"

# The hub database backends the contract suites run against.
HUB_BACKENDS = ("sqlite", "postgresql", "mariadb")


def _admin(conn_str: str, sql: str) -> None:
    conn = pyodbc.connect(conn_str, autocommit=True, timeout=10)
    try:
        conn.cursor().execute(sql)
    finally:
        conn.close()


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
    admin, template = {"postgresql": (PG_ADMIN, PG_DB), "mariadb": (MARIA_ADMIN, MARIA_DB)}[kind]
    _admin(admin, f"CREATE DATABASE {name}")
    try:
        yield f"odbc:{template % name}"
    finally:
        drop = (f"DROP DATABASE IF EXISTS {name} WITH (FORCE)" if kind == "postgresql"
                else f"DROP DATABASE IF EXISTS {name}")
        _admin(admin, drop)


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
