"""The hub database's pool after its server ended the sessions (what a PostgreSQL
restart does): the next reads, writes and transactions succeed with no error; while
the database refuses connections a call fails fast with StoreUnavailable, and works
again once it accepts them. A statement's own failure keeps its connection."""

from __future__ import annotations

import gc
import logging
import os
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from hub.store.hubdb import HubDatabase, open_hub_database
from shared.errors import Conflict, StoreUnavailable
from tests.servers import database_name, fresh_database, pg_admin

POOL = 3
FAST_S = 2.0
WAIT_S = 10.0


def _eventually(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _sessions(name: str) -> int:
    return int(pg_admin("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = %s",
                        [name])[0][0])


def _terminate_all(name: str) -> None:
    """End every session on the database and wait until they are gone."""
    pg_admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
             [name])
    _eventually(lambda: _sessions(name) == 0)


def _fill_pool(db: HubDatabase) -> None:
    """POOL connections open at once, then all idle in the pool."""
    with ExitStack() as stack:
        for _ in range(POOL):
            stack.enter_context(db.transaction()).read("SELECT 1")


@contextmanager
def _pooled(kind: str, tmp_path: Path) -> Iterator[tuple[HubDatabase, str]]:
    with fresh_database(kind, tmp_path) as url:
        db = open_hub_database(url, pool_size=POOL)
        try:
            db.write("CREATE TABLE notes (id INTEGER PRIMARY KEY, body VARCHAR(40))")
            _fill_pool(db)
            yield db, database_name(url)
        finally:
            db.close()


def _replaced(caplog: pytest.LogCaptureFixture) -> int:
    return caplog.text.count("a pooled connection was closed by the server; replacing it")


def _use(db: HubDatabase, first: int) -> None:
    """A write first (never repeated by the pool), then reads and a transaction."""
    db.write("INSERT INTO notes (id, body) VALUES (?, ?)", [first, "written"])
    assert db.read_one("SELECT body FROM notes WHERE id = ?", [first]) == ("written",)
    with db.transaction() as tx:
        tx.write("UPDATE notes SET body = ? WHERE id = ?", ["changed", first])
        tx.write("INSERT INTO notes (id, body) VALUES (?, ?)", [first + 1, "in tx"])
    assert db.read("SELECT body FROM notes WHERE id >= ? ORDER BY id", [first]) == [
        ("changed",), ("in tx",)]


def test_psycopg_pool_survives_terminated_sessions(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with _pooled("postgresql", tmp_path) as (db, name):
        _terminate_all(name)
        with caplog.at_level(logging.INFO, "webhub.db"):
            _use(db, 1)  # a write first: the dead connections are never sent it
        assert _replaced(caplog) == POOL
        _terminate_all(name)
        with db.transaction() as tx:  # a transaction first
            tx.write("INSERT INTO notes (id, body) VALUES (?, ?)", [10, "tx first"])
        _terminate_all(name)
        assert db.read("SELECT COUNT(*) FROM notes") == [(3,)]


@pytest.mark.parametrize("kind", ["postgresql", "postgresql-odbc"])
def test_a_pool_idle_past_the_check_pings_first(kind: str, tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    # Every reuse counts as idle long enough: the ping is what finds the dead ones.
    with _pooled(kind, tmp_path) as (db, name):
        db.driver.idle_check_s = 0  # type: ignore[attr-defined]
        _terminate_all(name)
        with caplog.at_level(logging.INFO, "webhub.db"):
            _use(db, 1)
        assert _replaced(caplog) == POOL


def test_odbc_read_lost_on_a_reused_connection_is_read_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with _pooled("postgresql-odbc", tmp_path) as (db, name):
        db.write("INSERT INTO notes (id, body) VALUES (?, ?)", [1, "kept"])
        _terminate_all(name)
        # No ping (idle for less than the check): the read meets the dead connection,
        # and is sent again on a new one; the other dead ones are dropped with it.
        with caplog.at_level(logging.INFO, "webhub.db"):
            assert db.read("SELECT body FROM notes") == [("kept",)]
        assert "lost under a read; reading again" in caplog.text
        _use(db, 2)


@pytest.mark.parametrize("kind", ["postgresql", "postgresql-odbc"])
def test_a_refusing_database_fails_fast_then_works_again(kind: str, tmp_path: Path) -> None:
    with _pooled(kind, tmp_path) as (db, name):
        pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
        try:
            _terminate_all(name)
            for call in (lambda: db.read("SELECT 1"),
                         lambda: db.write("DELETE FROM notes"),
                         lambda: db.transaction().__enter__()):
                started = time.monotonic()
                with pytest.raises(StoreUnavailable) as caught:
                    call()
                assert time.monotonic() - started < FAST_S
                assert "not currently accepting connections" in caught.value.message
        finally:
            pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true")
        _use(db, 1)


@pytest.mark.parametrize("url", ["postgresql://hub:s3cret-pw@127.0.0.1:1/hub",
                                 "postgresql://hub@127.0.0.1:1/hub?password=s3cret-pw"])
def test_a_database_that_is_down_fails_fast_without_its_password(url: str) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        open_hub_database(url)
    assert time.monotonic() - started < FAST_S
    message = caught.value.message
    assert "s3cret" not in message and "postgresql://hub@127.0.0.1:1/hub" in message


def test_an_unknown_database_names_the_url_without_its_password(tmp_path: Path) -> None:
    # Trust authentication takes any password: the message is the server's own.
    with pytest.raises(StoreUnavailable) as caught:
        open_hub_database("postgresql://postgres:s3cret-pw@127.0.0.1:5432/wjtest_none")
    assert "s3cret" not in caught.value.message
    assert 'database "wjtest_none" does not exist' in caught.value.message


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "postgresql-odbc", "mariadb"])
def test_a_clash_keeps_the_connection(kind: str, tmp_path: Path) -> None:
    with fresh_database(kind, tmp_path) as url:
        db = open_hub_database(url, pool_size=1)
        try:
            db.write("CREATE TABLE keyed (k INTEGER PRIMARY KEY)")
            db.write("INSERT INTO keyed (k) VALUES (?)", [1])
            first = db._idle.queue[0][0]
            with pytest.raises(Conflict):
                db.write("INSERT INTO keyed (k) VALUES (?)", [1])
            with pytest.raises(Conflict), db.transaction() as tx:
                tx.write("INSERT INTO keyed (k) VALUES (?)", [2])
                tx.write("INSERT INTO keyed (k) VALUES (?)", [1])
            assert db._idle.queue[0][0] is first
            assert db.read("SELECT k FROM keyed") == [(1,)]  # the transaction left nothing
        finally:
            db.close()


def test_a_connection_past_fd_1024_is_reused(tmp_path: Path) -> None:
    # A busy hub has sockets numbered past select()'s limit: checking one must not
    # take it for dead (a new connection for every statement).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    # No collection meanwhile: a socket an earlier test left would be closed by it and
    # free a low number for the connection (seen once on a CI run: fd 32).
    gc.disable()
    fillers = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with fresh_database("postgresql", tmp_path) as url:
            while (hole := os.open(os.devnull, os.O_RDONLY)) <= 1024:
                fillers.append(hole)  # a number freed since the fillers were opened
            os.close(hole)
            db = open_hub_database(url, pool_size=1)
            try:
                assert db._idle.queue[0][0].fileno() > 1024
                pid = db.read_one("SELECT pg_backend_pid()")
                assert db.read_one("SELECT pg_backend_pid()") == pid
            finally:
                db.close()
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        gc.enable()
