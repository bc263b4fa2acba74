"""The host side of ``db.exec``: values.py's mapping, URL parsing, and one contract suite
run against every backend — embedded SQLite, and PostgreSQL, MariaDB and SQLite3
(Debian's ``libsqliteodbc``, on a temporary file) through ODBC.

The server backends expect the servers of the development machine (``make setup``
installs the ODBC drivers): PostgreSQL on 127.0.0.1:5432 (user ``postgres``, trust
auth, database ``test``) and MariaDB on 127.0.0.1:3306 (``root``, empty password,
database ``test``). When a server is unreachable its tests FAIL, never skip."""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hub.outside.database import CANCELLED, Database, DatabaseUrl, parse_database_url
from hub.outside.values import param_from_json, params_from_json, to_json
from shared.errors import BadRequest, JobFailed

REPO = Path(__file__).resolve().parents[2]
PG_ODBC = "DRIVER={PostgreSQL Unicode};SERVER=127.0.0.1;PORT=5432;DATABASE=test;UID=postgres"
MARIA_ODBC = "DRIVER={MariaDB Unicode};SERVER=127.0.0.1;PORT=3306;DATABASE=test;UID=root;PWD="
SQLITE_ODBC = "Driver=SQLite3;BigInt=1;Database="
# The SQLite3 ODBC driver runs every statement of a multi-statement text with the same
# parameters bound by position, and counts only `?` markers: one `?` plus a named
# `:staff` (also position 1 in its own statement) creates the per-connection temp table
# on first use and sets it every time.
SQLITE_ODBC_SESSION = (
    "CREATE TEMP TABLE IF NOT EXISTS webhub_session AS SELECT 'userstaffid' AS name, "
    "? AS value; UPDATE temp.webhub_session SET value = :staff WHERE name = 'userstaffid'"
)
UUID = "6f1c9f3e-7d7a-4a63-9a89-2b0b8f6c7e11"
TZ2 = dt.timezone(dt.timedelta(hours=2))
RECURSIVE_FOREVER = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)


# ---------------------------------------------------------------- values.py


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None), (True, True), (False, False), (42, 42), (2**53, 2**53),
        (-(2**53), -(2**53)), (2**53 + 1, "9007199254740993"),
        (-(2**63), "-9223372036854775808"),
        (1.25, 1.25), (float("nan"), None), (float("inf"), None), (float("-inf"), None),
        (decimal.Decimal("1.50"), 1.5), (decimal.Decimal("-3"), -3.0),
        (decimal.Decimal("0.1"), "0.1"),
        (decimal.Decimal("12345678901234567890.12"), "12345678901234567890.12"),
        (decimal.Decimal("NaN"), None), (decimal.Decimal("-Infinity"), None),
        (dt.datetime(2024, 5, 1, 13, 45), "2024-05-01T13:45:00"),
        (dt.datetime(2024, 5, 1, 13, 45, 0, 250000), "2024-05-01T13:45:00.250000"),
        (dt.datetime(2024, 5, 1, 13, 45, tzinfo=TZ2), "2024-05-01T13:45:00+02:00"),
        (dt.datetime(2024, 5, 1, tzinfo=dt.UTC), "2024-05-01T00:00:00+00:00"),
        (dt.date(2024, 5, 1), "2024-05-01"),
        (dt.time(13, 45), "13:45:00"), (dt.time(13, 45, 1, 5), "13:45:01.000005"),
        (dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5), "P1DT2H3M4.5S"),
        (dt.timedelta(0), "PT0S"), (dt.timedelta(seconds=-30), "-PT30S"),
        (dt.timedelta(days=2), "P2D"), (dt.timedelta(microseconds=1), "PT0.000001S"),
        (b"\x00\x01\xff", "AAH/"), (bytearray(b"\x00\x01\xff"), "AAH/"),
        (memoryview(b"\x00\x01\xff"), "AAH/"), (b"", ""),
        (uuid.UUID(UUID), UUID), ("héllo ✓", "héllo ✓"), (complex(1, 2), "(1+2j)"),
        (dt.timedelta(days=-1, seconds=5), "-PT23H59M55S"),
    ],
)
def test_every_value_has_one_json_form(value: Any, expected: Any) -> None:
    got = to_json(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("value", [None, True, 3, -2.5, "x", ""])
def test_json_parameters_pass_through(value: Any) -> None:
    assert param_from_json(value) == value


def test_a_base64_object_is_bytes() -> None:
    assert params_from_json([{"base64": "AAH/"}, 1]) == [b"\x00\x01\xff", 1]
    assert params_from_json(None) == []


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ([1, [2, 3]], "parameter 2 is a list"),
        ([{"a": 1}], "parameter 1 is an object"),
        ([{"base64": "not base64!"}], "not valid base64"),
        ([{"base64": 5}], "must be a string"),
        ({"a": 1}, "must be a list"),
        ("SELECT", "must be a list"),
    ],
)
def test_other_parameters_are_refused_clearly(params: Any, words: str) -> None:
    with pytest.raises(JobFailed, match=words):
        params_from_json(params)


# ---------------------------------------------------------------- URLs


def test_database_urls() -> None:
    assert parse_database_url("sqlite:///data/webjobs.db") == DatabaseUrl(
        "sqlite", "data/webjobs.db"
    )
    assert parse_database_url("sqlite:////var/lib/w.db") == DatabaseUrl("sqlite", "/var/lib/w.db")
    odbc = parse_database_url(f"odbc:{PG_ODBC}")
    assert odbc == DatabaseUrl("odbc", PG_ODBC)
    assert "postgres" not in str(odbc)  # a connection string may hold a password


@pytest.mark.parametrize(
    "url", ["", "postgres://x", "sqlite://relative.db", "sqlite:///", "sqlite:///:memory:", "odbc:"]
)
def test_other_urls_name_the_setting(url: str) -> None:
    with pytest.raises(BadRequest, match=r"^WEBJOB_DB[: ]"):
        parse_database_url(url)


def test_the_setting_named_is_the_callers() -> None:
    from hub import dburl

    with pytest.raises(BadRequest, match=r"^WEBHUB_DB must be"):
        dburl.parse_database_url("postgres://x", "WEBHUB_DB")


def test_the_embedded_default_never_imports_pyodbc(tmp_path: Path) -> None:
    code = (
        "import asyncio, sys\n"
        "from hub.outside.database import Database\n"
        f"db = Database('sqlite:///{tmp_path}/x.db')\n"
        "print(asyncio.run(db.exec('SELECT 1 AS one', None, None, 5)))\n"
        "assert 'pyodbc' not in sys.modules\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "[{'one': 1}]" in out.stdout


# ---------------------------------------------------------------- one contract, every backend


@dataclass
class Backend:
    name: str
    url: str
    unreachable_url: str
    session_sql: str
    read_staff_sql: str
    long_sql: str
    float_type: str
    blob_type: str
    syntax_state: str
    unique_state: str
    types: list[tuple[str, Any]] = field(default_factory=list)  # (SELECT expression, JSON)


def _sqlite(tmp_path: Path) -> Backend:
    return Backend(
        name="sqlite",
        url=f"sqlite:///{tmp_path}/webjobs.db",
        unreachable_url=f"sqlite:///{tmp_path}/no/such/dir/webjobs.db",
        session_sql="INSERT OR REPLACE INTO temp.webhub_session VALUES ('userstaffid', ?)",
        read_staff_sql="SELECT value AS v FROM temp.webhub_session WHERE name = 'userstaffid'",
        long_sql=RECURSIVE_FOREVER,
        float_type="REAL", blob_type="BLOB",
        syntax_state="OperationalError", unique_state="IntegrityError",
        types=[
            ("9007199254740993", "9007199254740993"), ("9007199254740992", 9007199254740992),
            ("x'0001ff'", "AAH/"), ("date('2024-05-01')", "2024-05-01"),
        ],
    )


POSTGRESQL = Backend(
    name="postgresql",
    url=f"odbc:{PG_ODBC};BoolsAsChar=0",
    unreachable_url=f"odbc:{PG_ODBC.replace('5432', '1')}",
    session_sql="SELECT set_config('webhub.userstaffid', ?, false)",
    read_staff_sql="SELECT current_setting('webhub.userstaffid', true) AS v",
    long_sql="SELECT pg_sleep(30)",
    float_type="DOUBLE PRECISION", blob_type="BYTEA",
    syntax_state="42601", unique_state="23505",
    types=[
        ("1.5::numeric", 1.5), ("0.1::numeric", "0.1"),
        ("12345678901234567890.5::numeric", "12345678901234567890.5"),
        ("9007199254740993::bigint", "9007199254740993"),
        ("DATE '2024-05-01'", "2024-05-01"),
        ("TIMESTAMP '2024-05-01 13:45:00.25'", "2024-05-01T13:45:00.250000"),
        ("TIME '13:45:00.5'", "13:45:00.500000"),
        (f"'{UUID}'::uuid", UUID),
        ("'\\x0001ff'::bytea", "AAH/"),
        ("true", True),
        ("'NaN'::float8", None), ("'Infinity'::float8", None),
        ("INTERVAL '1 day 2 hours'", "1 day 02:00:00"),  # the driver hands intervals as text
    ],
)

MARIADB = Backend(
    name="mariadb",
    url=f"odbc:{MARIA_ODBC}",
    unreachable_url=f"odbc:{MARIA_ODBC.replace('3306', '1')}",
    session_sql="SET @webhub_userstaffid = ?",
    read_staff_sql="SELECT CAST(@webhub_userstaffid AS CHAR) AS v",
    long_sql="SELECT SLEEP(30)",
    float_type="DOUBLE", blob_type="BLOB",
    syntax_state="42000", unique_state="23000",
    types=[
        ("CAST(1.5 AS DECIMAL(10,2))", 1.5), ("CAST(0.1 AS DECIMAL(10,2))", "0.10"),
        ("CAST(9007199254740993 AS SIGNED)", "9007199254740993"),
        ("DATE '2024-05-01'", "2024-05-01"),
        ("TIMESTAMP '2024-05-01 13:45:00.25'", "2024-05-01T13:45:00.250000"),
        ("TIME '13:45:00'", "13:45:00"),
        ("UNHEX('0001FF')", "AAH/"), ("true", 1),
    ],
)


def _sqlite_odbc(tmp_path: Path) -> Backend:
    return Backend(
        name="sqlite-odbc",
        url=f"odbc:{SQLITE_ODBC}{tmp_path}/webjobs.db",
        unreachable_url=f"odbc:{SQLITE_ODBC}{tmp_path}/no/such/dir/webjobs.db",
        session_sql=SQLITE_ODBC_SESSION,
        read_staff_sql="SELECT value AS v FROM temp.webhub_session WHERE name = 'userstaffid'",
        long_sql=RECURSIVE_FOREVER,
        float_type="REAL", blob_type="BLOB",
        # The driver reports every SQLite error as HY000 (it has no 23xxx/42xxx classes);
        # the SQLite result code is in the message: "UNIQUE constraint failed: t.name (19)".
        syntax_state="HY000", unique_state="HY000",
        types=[
            ("9007199254740993", "9007199254740993"), ("9007199254740992", 9007199254740992),
            ("x'0001ff'", "AAH/"), ("date('2024-05-01')", "2024-05-01"),
            ("1.5", 1.5), ("'héllo ✓'", "héllo ✓"), ("NULL", None),
        ],
    )


@pytest.fixture(params=["sqlite", "postgresql", "mariadb", "sqlite-odbc"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite-odbc":
        return _sqlite_odbc(tmp_path)
    return {"sqlite": _sqlite(tmp_path), "postgresql": POSTGRESQL, "mariadb": MARIADB}[
        request.param
    ]


def using(
    backend: Backend,
    body: Callable[[Database], Awaitable[None]],
    pool_size: int = 2,
    session: bool = False,
) -> None:
    async def main() -> None:
        session_sql = backend.session_sql if session else None
        db = Database(backend.url, pool_size=pool_size, session_sql=session_sql)
        try:
            await body(db)
        finally:
            await db.close()

    asyncio.run(main())


@pytest.fixture
def table() -> str:
    return f"webjobs_t_{uuid.uuid4().hex[:12]}"


def _create(backend: Backend, table: str) -> str:
    return (
        f"CREATE TABLE {table} (id BIGINT PRIMARY KEY, name VARCHAR(100) UNIQUE, "
        f"f {backend.float_type}, b {backend.blob_type}, n VARCHAR(10))"
    )


def test_values_round_trip_through_a_table(backend: Backend, table: str) -> None:
    row = {"id": 2**60, "name": "héllo ✓ 'quoted'", "f": -2.5, "b": "AAH/", "n": None}

    async def body(db: Database) -> None:
        await db.exec(_create(backend, table), None, None, 10)
        try:
            params = [row["id"], row["name"], row["f"], {"base64": row["b"]}, row["n"]]
            done = await db.exec(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?)", params, None, 10)
            assert done == {"affectedRows": 1}
            got = await db.exec(f"SELECT id, name, f, b, n FROM {table}", None, None, 10)
            assert got == [{**row, "id": str(2**60)}]  # beyond 2**53: text
        finally:
            await db.exec(f"DROP TABLE {table}", None, None, 10)

    using(backend, body)


def test_each_driver_type_maps_as_documented(backend: Backend) -> None:
    async def body(db: Database) -> None:
        for expr, expected in backend.types:
            got = await db.exec(f"SELECT {expr} AS v", None, None, 10)
            assert isinstance(got, list)
            value = got[0]["v"]
            assert value == expected and type(value) is type(expected), expr

    using(backend, body)


def test_parameters_stay_literal(backend: Backend, table: str) -> None:
    evil = f"x'); DROP TABLE {table}; --"

    async def body(db: Database) -> None:
        await db.exec(_create(backend, table), None, None, 10)
        try:
            await db.exec(f"INSERT INTO {table} (id, name) VALUES (?, ?)", [1, evil], None, 10)
            got = await db.exec(f"SELECT name FROM {table} WHERE name = ?", [evil], None, 10)
            assert got == [{"name": evil}]
            sneaky = ["' OR 1=1 --"]
            none = await db.exec(f"SELECT id FROM {table} WHERE name = ?", sneaky, None, 10)
            assert none == []
            echoed = await db.exec("SELECT ? AS v", [evil], None, 10)
            assert echoed == [{"v": evil}]
            still = await db.exec(f"SELECT count(*) AS n FROM {table}", None, None, 10)
            assert still == [{"n": 1}]
        finally:
            await db.exec(f"DROP TABLE {table}", None, None, 10)

    using(backend, body)


def test_long_text_parameters_arrive_intact(backend: Backend) -> None:
    """MariaDB's driver garbles UTF-16 text parameters of 254+ characters: connections
    to it send UTF-8."""
    text = ("héllo ✓ " * 700)[:5000]

    async def body(db: Database) -> None:
        assert await db.exec("SELECT ? AS v", [text], None, 10) == [{"v": text}]

    using(backend, body)


def test_affected_rows(backend: Backend, table: str) -> None:
    async def body(db: Database) -> None:
        assert await db.exec(_create(backend, table), None, None, 10) == {"affectedRows": 0}
        try:
            insert = f"INSERT INTO {table} (id, name) VALUES (?, ?), (?, ?), (?, ?)"
            params = [1, "a", 2, "b", 3, "c"]
            assert await db.exec(insert, params, None, 10) == {"affectedRows": 3}
            update = f"UPDATE {table} SET n = ? WHERE id > ?"
            assert await db.exec(update, ["z", 1], None, 10) == {"affectedRows": 2}
            delete = f"DELETE FROM {table} WHERE id = ?"
            assert await db.exec(delete, [99], None, 10) == {"affectedRows": 0}
            assert await db.exec(f"SELECT id FROM {table} WHERE id = 99", None, None, 10) == []
        finally:
            await db.exec(f"DROP TABLE {table}", None, None, 10)

    using(backend, body)


def test_a_failing_statement_carries_its_state(backend: Backend, table: str) -> None:
    async def body(db: Database) -> None:
        with pytest.raises(JobFailed) as syntax:
            await db.exec("SELEC 1", None, None, 10)
        assert syntax.value.extra["sqlstate"] == backend.syntax_state
        assert syntax.value.message
        await db.exec(_create(backend, table), None, None, 10)
        try:
            await db.exec(f"INSERT INTO {table} (id, name) VALUES (1, 'a')", None, None, 10)
            with pytest.raises(JobFailed) as unique:
                await db.exec(f"INSERT INTO {table} (id, name) VALUES (2, 'a')", None, None, 10)
            assert unique.value.extra["sqlstate"] == backend.unique_state
            count = await db.exec(f"SELECT count(*) AS n FROM {table}", None, None, 10)
            assert count == [{"n": 1}]  # the connection is still good
        finally:
            await db.exec(f"DROP TABLE {table}", None, None, 10)

    using(backend, body, pool_size=1)


def test_an_unreachable_database_fails_quickly(backend: Backend) -> None:
    async def main() -> None:
        db = Database(backend.unreachable_url, pool_size=1)
        started = time.monotonic()
        with pytest.raises(JobFailed, match=r"^database unavailable: "):
            await db.exec("SELECT 1", None, None, 20)
        assert time.monotonic() - started < 10
        await db.close()

    asyncio.run(main())


def test_a_full_pool_is_busy_then_recovers(backend: Backend) -> None:
    async def body(db: Database) -> None:
        long = asyncio.create_task(db.exec(backend.long_sql, None, None, 1.5))
        await asyncio.sleep(0.3)
        started = time.monotonic()
        with pytest.raises(JobFailed, match=r"^database busy: "):
            await db.exec("SELECT 1 AS one", None, None, 0.4)
        assert 0.35 < time.monotonic() - started < 1.2
        with pytest.raises(JobFailed, match=CANCELLED):
            await long
        assert await db.exec("SELECT 1 AS one", None, None, 10) == [{"one": 1}]

    using(backend, body, pool_size=1)


def test_the_time_running_out_cancels_the_statement(backend: Backend) -> None:
    async def body(db: Database) -> None:
        started = time.monotonic()
        with pytest.raises(JobFailed) as cancelled:
            await db.exec(backend.long_sql, None, None, 0.5)
        assert cancelled.value.message == CANCELLED
        assert time.monotonic() - started < 1.5
        # The one connection was discarded and the thread freed: the pool still works.
        again = time.monotonic()
        assert await db.exec("SELECT 2 AS two", None, None, 10) == [{"two": 2}]
        assert time.monotonic() - again < 5

    using(backend, body, pool_size=1)


def test_a_cancelled_run_cancels_its_statement(backend: Backend) -> None:
    async def body(db: Database) -> None:
        task = asyncio.create_task(db.exec(backend.long_sql, None, None, 60))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await db.exec("SELECT 3 AS three", None, None, 5) == [{"three": 3}]

    using(backend, body, pool_size=1)


def test_the_staff_id_never_leaks_between_borrowers(backend: Backend) -> None:
    async def staff(db: Database, staff_id: int | None) -> Any:
        got = await db.exec(backend.read_staff_sql, None, staff_id, 10)
        assert isinstance(got, list) and len(got) == 1
        return got[0]["v"]

    async def body(db: Database) -> None:  # one connection: every borrower reuses it
        assert await staff(db, 7) == "7"
        assert await staff(db, 8) == "8"
        assert await staff(db, None) in ("", None)
        assert await staff(db, 7) == "7"
        assert await staff(db, None) in ("", None)

    using(backend, body, pool_size=1, session=True)


def test_many_statements_run_side_by_side(backend: Backend) -> None:
    async def body(db: Database) -> None:
        results = await asyncio.gather(
            *(db.exec("SELECT ? AS n", [i], i, 10) for i in range(40))
        )
        # PostgreSQL types an untyped parameter as text: compare the text.
        assert [str(r[0]["n"]) for r in results if isinstance(r, list)] == [
            str(i) for i in range(40)
        ]

    using(backend, body, pool_size=8, session=True)


def test_closing_fails_a_waiting_run_cleanly(backend: Backend) -> None:
    async def body(db: Database) -> None:
        long = asyncio.create_task(db.exec(backend.long_sql, None, None, 1.0))
        await asyncio.sleep(0.2)
        waiting = asyncio.create_task(db.exec("SELECT 1", None, None, 10))
        await asyncio.sleep(0.1)
        await db.close()
        with pytest.raises(JobFailed, match=CANCELLED):
            await long
        with pytest.raises(JobFailed, match="database unavailable"):
            await waiting
        with pytest.raises(JobFailed, match="database unavailable"):
            await db.exec("SELECT 1", None, None, 10)

    using(backend, body, pool_size=1)


def test_bad_input_fails_the_job_before_any_statement(backend: Backend) -> None:
    async def body(db: Database) -> None:
        with pytest.raises(JobFailed, match="parameter 1 is a list"):
            await db.exec("SELECT ?", [[1]], None, 10)
        with pytest.raises(JobFailed, match="needs an SQL statement"):
            await db.exec("  ", None, None, 10)

    using(backend, body)


def test_sqlite_is_wal_with_foreign_keys(tmp_path: Path) -> None:
    backend = _sqlite(tmp_path)

    async def body(db: Database) -> None:
        assert await db.exec("PRAGMA journal_mode", None, None, 5) == [{"journal_mode": "wal"}]
        assert await db.exec("PRAGMA foreign_keys", None, None, 5) == [{"foreign_keys": 1}]
        await db.exec("CREATE TABLE p (id INTEGER PRIMARY KEY)", None, None, 5)
        await db.exec("CREATE TABLE c (p INTEGER REFERENCES p(id))", None, None, 5)
        with pytest.raises(JobFailed) as fk:
            await db.exec("INSERT INTO c VALUES (1)", None, None, 5)
        assert fk.value.extra["sqlstate"] == "IntegrityError"

    using(backend, body)

