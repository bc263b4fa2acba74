"""A statement never outlives its run, and MariaDB's connector never sends a file.

On the real PostgreSQL and MariaDB servers ``make test`` starts: a statement whose run
ends is cancelled on the server even when the driver's own cancel does nothing, its
session is ended when even that is ignored, and a pool of two filled by runs that time
out answers the next job at once. When a server is down its tests FAIL, never skip."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyodbc
import pytest

from hub.outside.database import CANCELLED, Database
from hub.outside.db_drivers import Call
from hub.outside.db_odbc import OdbcDriver
from shared.errors import JobFailed
from tests.hub.conftest import AUTH, HubProcess
from tests.hub.test_database import MARIA_ODBC, PG_ODBC
from tests.servers import maria_admin, pg_admin

URLS = {"postgresql": f"odbc:{PG_ODBC}", "mariadb": f"odbc:{MARIA_ODBC}"}
SLEEP = {"postgresql": "SELECT pg_sleep(30) AS {marker}",
         "mariadb": "SELECT SLEEP(30) AS {marker}"}


def _running(kind: str, marker: str) -> int:
    """How many statements with ``marker`` in their text the server is running."""
    if kind == "mariadb":
        rows = maria_admin("SELECT COUNT(*) FROM information_schema.processlist "
                           f"WHERE info LIKE '%{marker}%' AND info NOT LIKE '%processlist%'")
    else:
        rows = pg_admin("SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND "
                        f"query LIKE '%{marker}%' AND query NOT LIKE '%pg_stat_activity%'")
    return int(rows[0][0])


def _gone(kind: str, marker: str, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if _running(kind, marker) == 0:
            return True
        time.sleep(0.1)  # the server's own list: there is no event to await
    return False


def test_the_mariadb_connector_never_sends_a_file(tmp_path: Path) -> None:
    """The connector's own option, on a connection made as db.exec makes them, with the
    statement reading bypassed: the server (local_infile ON) asks, the hub says no."""
    secret = tmp_path / "secret.txt"
    secret.write_text("never-sent\n")
    table = f"wj_infile_{os.urandom(4).hex()}"
    maria_admin("SET GLOBAL local_infile = 1")
    maria_admin(f"CREATE TABLE {table} (v TEXT)")
    load = f"LOAD DATA LOCAL INFILE '{secret}' INTO TABLE {table}"
    try:
        driver = OdbcDriver(MARIA_ODBC)
        conn = driver.connect(5)
        try:
            with pytest.raises(pyodbc.Error, match=r"\(4166\)"):
                conn.cursor().execute(load)
        finally:
            conn.close()
        assert driver.local_files_refused is True
        assert maria_admin(f"SELECT COUNT(*) FROM {table}") == [(0,)]
        # The same server and table take the file from a connector left as it comes.
        plain = pyodbc.connect(MARIA_ODBC, autocommit=True, timeout=10)
        try:
            plain.cursor().execute(load)
        finally:
            plain.close()
        assert maria_admin(f"SELECT v FROM {table}") == [("never-sent",)]
    finally:
        maria_admin(f"DROP TABLE IF EXISTS {table}")


def _using(kind: str, body: Callable[[Database], Any]) -> None:
    async def main() -> None:
        db = Database(URLS[kind], pool_size=1)
        try:
            await body(db)
        finally:
            await db.close()

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_a_statement_the_driver_will_not_cancel_is_cancelled_on_the_server(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OdbcDriver, "cancel", lambda self, call: None)  # SQLCancel ignored
    marker = f"m_{os.urandom(4).hex()}"

    async def body(db: Database) -> None:
        with pytest.raises(JobFailed) as cancelled:
            await db.exec(SLEEP[kind].format(marker=marker), None, None, 0.5)
        assert cancelled.value.message == CANCELLED
        assert await db.exec("SELECT 1 AS one", None, None, 10) == [{"one": 1}]

    _using(kind, body)
    assert _gone(kind, marker)


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_a_session_that_ignores_every_cancel_is_ended(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the driver's cancel nor the server's statement cancel work: the session
    itself is ended, so the pool's one connection comes back."""
    ended = threading.Event()
    real = OdbcDriver.cancel_on_server

    def only_ending(self: OdbcDriver, call: Call, end_session: bool) -> None:
        if end_session:
            real(self, call, end_session)
            ended.set()

    monkeypatch.setattr(OdbcDriver, "cancel", lambda self, call: None)
    monkeypatch.setattr(OdbcDriver, "cancel_on_server", only_ending)
    marker = f"m_{os.urandom(4).hex()}"

    async def body(db: Database) -> None:
        with pytest.raises(JobFailed):
            await db.exec(SLEEP[kind].format(marker=marker), None, None, 0.5)
        # The slot is back only once the session is gone; 10 s is far below the sleep.
        assert await db.exec("SELECT 1 AS one", None, None, 10) == [{"one": 1}]

    _using(kind, body)
    assert ended.is_set()
    assert _gone(kind, marker)


# ---------------------------------------------------------------- a real hub, a pool of two


def _run(hub: HubProcess, code: str, out: dict[str, Any], key: str) -> None:
    with hub.client() as c:
        resp = c.post("/api/webjobs/execute", headers=AUTH,
                      files={"file": ("t.job.js", code.encode())})
    out[key] = resp.text.strip().splitlines()[-1]


def _job(sql: str) -> str:
    return ("/*\nRuntime: 3 s\n*/\n"
            f"return await db.exec({sql!r})")


@pytest.fixture
def business_login(request: pytest.FixtureRequest) -> Iterator[str]:
    """A login with the README's grants on the test database: no SUPER, so the server
    ends its statements only as it would a real business login's."""
    kind, login = str(request.param), f"wjp_{os.urandom(4).hex()}"
    if kind == "mariadb":
        maria_admin(f"CREATE USER '{login}'@'%' IDENTIFIED BY 'pw'")
        maria_admin(f"GRANT SELECT, INSERT, UPDATE, DELETE ON test.* TO '{login}'@'%'")
        yield f"odbc:{MARIA_ODBC.replace('UID=root;PWD=', f'UID={login};PWD=pw')}"
        maria_admin(f"DROP USER IF EXISTS '{login}'@'%'")
        return
    pg_admin(f"CREATE ROLE {login} LOGIN PASSWORD 'pw'")
    yield f"odbc:{PG_ODBC.replace('UID=postgres', f'UID={login};PWD=pw')}"
    pg_admin(f"DROP ROLE IF EXISTS {login}")


@pytest.mark.parametrize(("kind", "business_login"), [("postgresql", "postgresql"),
                                                      ("mariadb", "mariadb")],
                         indirect=["business_login"])
def test_runs_that_time_out_leave_the_pool_to_the_next_job(
        kind: str, business_login: str, start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBJOB_DB": business_login, "WEBJOB_DB_POOL": "2"}, jobs={})
    marker = f"m_{os.urandom(4).hex()}"
    # MariaDB: a statement the client itself feeds for ever (the server asks for the
    # file; /dev/zero never ends), which once outlived its run and held the pool.
    # PostgreSQL has no such shape: there, two long sleeps.
    if kind == "mariadb":
        maria_admin(f"CREATE TABLE {marker} (v LONGTEXT)")
        maria_admin("SET GLOBAL local_infile = 1")
        long = f"LOAD DATA LOCAL INFILE '/dev/zero' INTO TABLE {marker}"
    else:
        long = SLEEP[kind].format(marker=marker).replace("30", "60")
    out: dict[str, Any] = {}
    runs = [threading.Thread(target=_run, args=(hub, _job(long), out, key))
            for key in ("one", "two")]
    try:
        for run in runs:
            run.start()
        for run in runs:
            run.join(30)
        for key in ("one", "two"):
            assert '"success":false' in out[key].replace(" ", ""), out
        _run(hub, _job("SELECT 1 AS one"), out, "next")
        assert out["next"] == '[{"one":1}]' or '"one": 1' in out["next"], out
        assert _gone(kind, marker)
    finally:
        if kind == "mariadb":
            maria_admin(f"DROP TABLE IF EXISTS {marker}")


def test_the_connector_never_splits_a_text_into_statements() -> None:
    """Its own splitting (``--x`` is a comment to it, not to the server) would let a
    statement past the hub's reading: its MULTI_STATEMENTS option bit is taken out even
    when the connection string sets it."""
    plain = pyodbc.connect(f"{MARIA_ODBC};OPTION=67108864", autocommit=True, timeout=10)
    try:
        plain.cursor().execute("SELECT 1 AS a; SELECT 2 AS b")  # split and run: the bit works
    finally:
        plain.close()
    conn = OdbcDriver(f"{MARIA_ODBC};OPTION=67108864").connect(5)
    try:
        with pytest.raises(pyodbc.Error):
            conn.cursor().execute("SELECT 1 AS a; SELECT 2 AS b")
    finally:
        conn.close()
