"""The hub's SQLite database (``<WEBHUB_HOME>/hub.db``): connection and schema.

The SQL is kept plain (integer keys, VARCHAR/INTEGER/REAL columns, timestamps as
REAL seconds since the epoch, booleans as 0/1) so the tables can move to
PostgreSQL or SQL Server later. All SQL lives in the store modules.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from shared.errors import InternalError

SCHEMA_VERSION = 1

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS schema_version (
        version INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS users (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name VARCHAR(64) NOT NULL UNIQUE,
        user_class VARCHAR(16) NOT NULL,
        staff_id INTEGER,
        password_hash VARCHAR(255),
        disabled INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS api_tokens (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id INTEGER NOT NULL REFERENCES users (id),
        digest VARCHAR(64) NOT NULL UNIQUE,
        label VARCHAR(100) NOT NULL,
        created REAL NOT NULL,
        last_used REAL,
        revoked INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX IF NOT EXISTS api_tokens_user ON api_tokens (user_id)",
    """CREATE TABLE IF NOT EXISTS sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id INTEGER NOT NULL REFERENCES users (id),
        digest VARCHAR(64) NOT NULL UNIQUE,
        created REAL NOT NULL,
        last_seen REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id)",
    """CREATE TABLE IF NOT EXISTS api_keys (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_name VARCHAR(100) NOT NULL,
        digest VARCHAR(64) NOT NULL UNIQUE,
        label VARCHAR(100) NOT NULL,
        created REAL NOT NULL,
        last_used REAL,
        revoked INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX IF NOT EXISTS api_keys_job ON api_keys (job_name)",
)


def _create_private(path: Path) -> None:
    """Create an empty database file readable by its owner only (it holds password
    hashes); SQLite gives its -wal and -shm files the same mode."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _ensure_schema(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            conn.execute(statement)
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        found = row[0] if row else None
        if found is None:
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        elif int(found) > SCHEMA_VERSION:
            raise InternalError(f"The hub database has schema version {found}, newer than this "
                                f"hub understands ({SCHEMA_VERSION}); upgrade the hub")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def open_database(path: Path) -> sqlite3.Connection:
    """Open (creating if need be) the hub database at ``path``, schema included.

    One connection is shared by the hub's threads (callers serialise writes with a
    lock); it runs in autocommit mode, so several statements that must land together
    go between an explicit ``BEGIN IMMEDIATE`` and ``COMMIT``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    _create_private(path)
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None,
                           timeout=5.0)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA foreign_keys = ON")
        _ensure_schema(conn)
    except BaseException:
        conn.close()
        raise
    return conn
