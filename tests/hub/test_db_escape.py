"""The escape battery for ``db.exec``: a job reaches the business database and nothing
else. On SQLite every way out of the business file is refused with the code 42501
(through a real hub for the embedded default, and through the database layer for the
SQLite3 ODBC driver); on every backend nothing of one statement's session — a TEMP
table, a session variable, a prepared statement, an open transaction — is seen by
the next statement on the same pooled connection.

PostgreSQL and MariaDB are the development machine's servers (see test_database.py);
when one is unreachable its tests FAIL, never skip."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub.outside.database import Database
from hub.outside.isolation import warn_if_hub_tables_reachable
from hub.outside.sqlite_guard import REFUSED_STATE, SqliteGuard, refused_in_sqlite_text
from hub.settings import Settings, load_settings
from shared.errors import JobFailed
from tests.hub.conftest import HubProcess, running_hub
from tests.hub.test_database import MARIA_ODBC, PG_ODBC, SQLITE_ODBC
from tests.hub.test_outside import execute

# ---------------------------------------------------------------- a real hub, embedded SQLite


@pytest.fixture(scope="module")
def sqlite_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("escape"), jobs={}) as process:
        yield process


def _try_each(hub: HubProcess, statements: list[str]) -> dict[str, Any]:
    """Each statement in one job run: what it answered, or the error's code and message."""
    code = f"""
const out = {{}}
for (const sql of {json.dumps(statements)}) {{
  try {{ out[sql] = {{ answer: await db.exec(sql) }} }}
  catch (e) {{ out[sql] = {{ code: e.code, message: e.message }} }}
}}
return out"""
    return execute(hub, code)


def _escapes(home: Path, outside: Path) -> list[str]:
    return [
        f"ATTACH DATABASE '{home / 'hub.db'}' AS hub",
        f"ATTACH DATABASE '{home / 'history.db'}' AS history",
        f"ATTACH DATABASE '{outside / 'made-by-attach.db'}' AS made",
        "ATTACH DATABASE ':memory:' AS scratch",
        "DETACH DATABASE main",
        f"VACUUM INTO '{outside / 'made-by-vacuum.db'}'",
        "VACUUM",
        "SELECT load_extension('/no/such/library')",
        "SELECT fts3_tokenizer('simple')",
        "PRAGMA database_list",
        "SELECT file FROM pragma_database_list",
        f"PRAGMA temp_store_directory = '{outside}'",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA foreign_keys = OFF",
        "PRAGMA writable_schema = ON",
        "PRAGMA main.cache_size = 1",
        "CREATE TEMP TABLE Vacancy (VacancyID INTEGER, Position TEXT)",
        "CREATE TEMPORARY VIEW Person AS SELECT 'poisoned' AS Name",
        "CREATE TABLE temp.Department AS SELECT 1 AS DepartmentID, 'poisoned' AS Name",
        "CREATE VIEW temp.Department AS SELECT 1 AS DepartmentID",
        "CREATE TEMP TRIGGER capture AFTER INSERT ON main.Person BEGIN SELECT 1; END",
        "INSERT INTO temp.webhub_session VALUES ('userstaffid', '1')",
        "DROP TABLE temp.webhub_session",
        "SELECT sql FROM sqlite_stmt",  # other callers' statements on the pooled connection
        "SELECT name, pageno FROM dbstat",
    ]


def test_every_way_out_of_the_business_file_is_refused(
    sqlite_hub: HubProcess, tmp_path: Path
) -> None:
    statements = _escapes(sqlite_hub.home, tmp_path)
    out = _try_each(sqlite_hub, statements)
    assert set(out) == set(statements)
    for sql, got in out.items():
        assert got.get("code") == REFUSED_STATE, (sql, got)
        assert got["message"].startswith("db.exec refuses "), (sql, got)
        assert str(sqlite_hub.home) not in got["message"], (sql, got)
    assert list(tmp_path.iterdir()) == []  # nothing was created outside


def test_the_business_tables_still_answer(sqlite_hub: HubProcess) -> None:
    """Refusing the way out leaves the ordinary work: reading, writing, harmless pragmas."""
    out = _try_each(sqlite_hub, [
        "PRAGMA table_info(Department)",
        "SELECT name FROM pragma_table_info('Department') ORDER BY cid",
        "PRAGMA foreign_keys",
        "PRAGMA journal_mode",
        "UPDATE Department SET Name = Name WHERE DepartmentID = 1",
        "SELECT value FROM temp.webhub_session",
    ])
    assert [c["name"] for c in out["PRAGMA table_info(Department)"]["answer"]] == [
        "DepartmentID", "Name"]
    assert out["SELECT name FROM pragma_table_info('Department') ORDER BY cid"]["answer"] == [
        {"name": "DepartmentID"}, {"name": "Name"}]
    assert out["PRAGMA foreign_keys"]["answer"] == [{"foreign_keys": 1}]
    assert out["PRAGMA journal_mode"]["answer"] == [{"journal_mode": "wal"}]
    assert out["UPDATE Department SET Name = Name WHERE DepartmentID = 1"]["answer"] == {
        "affectedRows": 1}
    assert out["SELECT value FROM temp.webhub_session"]["answer"] == []  # reading is fine


def test_no_value_grows_beyond_what_could_reach_the_job(sqlite_hub: HubProcess) -> None:
    out = _try_each(sqlite_hub, ["SELECT length(randomblob(100000000)) AS n",
                                 "SELECT length(randomblob(1000000)) AS n"])
    assert "too big" in out["SELECT length(randomblob(100000000)) AS n"]["message"]
    assert out["SELECT length(randomblob(1000000)) AS n"]["answer"] == [{"n": 1000000}]


# ---------------------------------------------------------------- every backend: sessions


def _run(url: str, body: Callable[[Database], Awaitable[None]]) -> None:
    async def main() -> None:
        db = Database(url, pool_size=1)  # one connection: every statement reuses it
        try:
            await body(db)
        finally:
            await db.close()

    asyncio.run(main())


async def _refused_or_answered(db: Database, sql: str) -> None:
    """The statement either runs or is refused as an escape; nothing else."""
    try:
        await db.exec(sql, None, None, 10)
    except JobFailed as exc:
        assert exc.extra.get("sqlstate") == REFUSED_STATE, (sql, exc.message)


SESSION_BACKENDS = ["sqlite", "sqlite-odbc", "postgresql", "mariadb"]


def _url(kind: str, tmp_path: Path) -> str:
    return {
        "sqlite": f"sqlite:///{tmp_path}/business.db",
        "sqlite-odbc": f"odbc:{SQLITE_ODBC}{tmp_path}/business.db",
        "postgresql": f"odbc:{PG_ODBC}",
        "mariadb": f"odbc:{MARIA_ODBC}",
    }[kind]


@pytest.fixture
def table() -> str:
    return f"webjobs_esc_{uuid.uuid4().hex[:12]}"


@pytest.mark.parametrize("kind", SESSION_BACKENDS)
def test_a_temp_table_never_shadows_the_next_statements_table(
    kind: str, tmp_path: Path, table: str
) -> None:
    temporary = "TEMPORARY" if kind == "mariadb" else "TEMP"

    async def body(db: Database) -> None:
        await db.exec(f"CREATE TABLE {table} (v VARCHAR(20))", None, None, 10)
        try:
            await db.exec(f"INSERT INTO {table} VALUES ('real')", None, None, 10)
            poison = f"CREATE {temporary} TABLE {table} AS SELECT 'poisoned' AS v"
            await _refused_or_answered(db, poison)
            assert await db.exec(f"SELECT v FROM {table}", None, None, 10) == [{"v": "real"}]
        finally:
            await db.exec(f"DROP TABLE {table}", None, None, 10)

    _run(_url(kind, tmp_path), body)


@pytest.mark.parametrize("kind", SESSION_BACKENDS)
def test_an_open_transaction_never_reaches_the_next_statement(
    kind: str, tmp_path: Path, table: str
) -> None:
    """A job's BEGIN is rolled back with its statement: the next caller's insert on the
    same connection commits at once, so another connection sees it."""
    url = _url(kind, tmp_path)
    begin = "START TRANSACTION" if kind == "mariadb" else "BEGIN"

    async def body(db: Database) -> None:
        await db.exec(f"CREATE TABLE {table} (v VARCHAR(20))", None, None, 10)
        try:
            await db.exec(begin, None, None, 10)
            await db.exec(f"INSERT INTO {table} VALUES ('committed')", None, None, 10)
            other = Database(url, pool_size=1)
            try:
                seen = await other.exec(f"SELECT v FROM {table}", None, None, 10)
            finally:
                await other.close()
            assert seen == [{"v": "committed"}]
        finally:
            await db.exec(f"DROP TABLE {table}", None, None, 10)

    _run(url, body)


def test_a_postgresql_session_setting_and_prepared_statement_go(tmp_path: Path) -> None:
    async def body(db: Database) -> None:
        await db.exec("SELECT set_config('business.leak', 'one caller', false)", None, None, 10)
        got = await db.exec("SELECT current_setting('business.leak', true) AS v", None, None, 10)
        assert got in ([{"v": None}], [{"v": ""}])
        await db.exec("SET search_path TO pg_catalog", None, None, 10)
        path = await db.exec("SELECT current_setting('search_path') AS v", None, None, 10)
        assert path != [{"v": "pg_catalog"}]
        await db.exec("PREPARE leak AS SELECT 1", None, None, 10)
        with pytest.raises(JobFailed) as gone:
            await db.exec("EXECUTE leak", None, None, 10)
        assert gone.value.extra["sqlstate"] == "26000"  # no such prepared statement

    _run(_url("postgresql", tmp_path), body)


def test_a_mariadb_session_variable_goes(tmp_path: Path) -> None:
    async def body(db: Database) -> None:
        await db.exec("SET @leak = 'one caller'", None, None, 10)
        assert await db.exec("SELECT @leak AS v", None, None, 10) == [{"v": None}]
        await db.exec("SET SESSION sql_mode = 'ANSI_QUOTES'", None, None, 10)
        mode = await db.exec("SELECT @@SESSION.sql_mode AS v", None, None, 10)
        assert mode != [{"v": "ANSI_QUOTES"}]

    _run(_url("mariadb", tmp_path), body)


# ---------------------------------------------------------------- the SQLite3 ODBC driver


@pytest.mark.parametrize("sql", [
    "ATTACH DATABASE '{outside}/made.db' AS made",
    "attach '{outside}/made.db' as made",
    "SELECT 1; ATTACH '{outside}/made.db' AS made",
    "VACUUM INTO '{outside}/made.db'",
    "/* */ DETACH main",
    "SELECT load_extension('{outside}/made')",
    'SELECT "load_extension"(\'{outside}/made\')',
    "PRAGMA database_list",
    "SELECT file FROM pragma_database_list",
    "PRAGMA temp_store_directory = '{outside}'",
    "PRAGMA main.journal_mode = DELETE",
])
def test_the_sqlite_odbc_driver_refuses_the_way_out(sql: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    statement = sql.format(outside=outside)

    async def body(db: Database) -> None:
        with pytest.raises(JobFailed) as refused:
            await db.exec(statement, None, None, 10)
        assert refused.value.extra["sqlstate"] == REFUSED_STATE
        assert await db.exec("PRAGMA table_info(t)", None, None, 10) == []  # still allowed

    _run(f"odbc:{SQLITE_ODBC}{tmp_path}/business.db", body)
    assert list(outside.iterdir()) == []


# ---------------------------------------------------------------- the check at start

PG_OTHER = PG_ODBC.replace("DATABASE=test", "DATABASE=business")


def _settings(home: Path, **env: str) -> Settings:
    return load_settings({"WEBHUB_HOME": str(home), "WEBHUB_SECRET": "s",
                          "WEBHUB_SYSTEM_TOKEN": "t", **env})


def _reaching(home: Path) -> list[dict[str, str]]:
    """Set-ups whose business database is one of the hub's own."""
    return [
        {"WEBJOB_DB": f"sqlite:///{home / 'hub.db'}"},
        {"WEBJOB_DB": f"sqlite:///{home / 'history.db'}"},
        {"WEBJOB_DB": f"sqlite:///{home / 'sub' / '..' / 'hub.db'}"},
        {"WEBJOB_DB": f"sqlite:///{home / 'link.db'}"},  # a symbolic link to hub.db
        {"WEBHUB_DB": f"sqlite:///{home / 'own.db'}",
         "WEBJOB_DB": f"odbc:Driver=SQLite3;Database={home / 'own.db'}"},
        {"WEBHUB_DB": f"odbc:{PG_ODBC}", "WEBJOB_STORE": "db",
         "WEBJOB_DB": "odbc:uid=postgres;database=TEST;Driver={PostgreSQL Unicode};"
                      "Server=localhost"},
        {"WEBHUB_DB": f"odbc:{PG_ODBC.replace('DATABASE=test', 'DATABASE=postgres')}",
         "WEBJOB_DB": f"odbc:{PG_ODBC.replace(';DATABASE=test', '')}"},
        {"WEBHUB_DB": f"odbc:{MARIA_ODBC.replace('DATABASE=test', 'DATABASE=hub')}",
         "WEBJOB_DB": f"odbc:{MARIA_ODBC}", "WEBJOB_HISTORY_STORE": "sql"},
        {"WEBHUB_DB": "postgresql://postgres:pw@localhost/test", "WEBJOB_DB": f"odbc:{PG_ODBC}"},
    ]


def _apart(home: Path, other: Path) -> list[dict[str, str]]:
    """Set-ups whose business database the hub does not keep its tables in."""
    return [
        {},  # the default: business.db beside hub.db
        {"WEBJOB_DB": f"sqlite:///{other / 'hub.db'}"},  # a hub.db, but not this hub's
        {"WEBHUB_DB": f"odbc:{PG_ODBC}", "WEBJOB_DB": f"sqlite:///{home / 'business.db'}"},
        {"WEBHUB_DB": f"odbc:{PG_ODBC}", "WEBJOB_DB": f"odbc:{PG_ODBC.replace('5432', '5433')}"},
    ]


def _sharing_a_server() -> list[dict[str, str]]:
    """Set-ups whose business database is apart, on the server of the hub's tables."""
    return [
        {"WEBHUB_DB": f"odbc:{PG_ODBC}", "WEBJOB_DB": f"odbc:{PG_OTHER}"},
        {"WEBHUB_DB": f"odbc:{MARIA_ODBC.replace('DATABASE=test', 'DATABASE=hub')}",
         "WEBJOB_DB": f"odbc:{MARIA_ODBC.replace('UID=root', 'UID=jobs')}"},
        {"WEBHUB_DB": "postgres://postgres@127.0.0.1:5432/hub", "WEBJOB_DB": f"odbc:{PG_ODBC}"},
    ]


@pytest.mark.expected_warning
@pytest.mark.parametrize("case", range(len(_reaching(Path("x")))))
def test_the_hub_warns_when_the_business_database_is_its_own(
    case: int, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "hub.db").touch()
    (home / "link.db").symlink_to(home / "hub.db")
    settings = _settings(home, **_reaching(home)[case])
    with caplog.at_level(logging.WARNING, logger="webhub.outside"):
        assert warn_if_hub_tables_reachable(settings)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].getMessage().startswith("WEBJOB_DB reaches the hub's own tables: ")


@pytest.mark.expected_warning
@pytest.mark.parametrize("case", range(len(_sharing_a_server())))
def test_the_hub_names_the_risks_of_a_shared_server(
    case: int, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = _settings(tmp_path / "home", **_sharing_a_server()[case])
    with caplog.at_level(logging.WARNING, logger="webhub.outside"):
        assert warn_if_hub_tables_reachable(settings)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.startswith("WEBJOB_DB shares its server with WEBHUB_DB ("), warning
    assert "cannot rule out: grants" in warning and "local_infile" in warning


@pytest.mark.parametrize("case", range(len(_apart(Path("x"), Path("y")))))
def test_the_hub_is_quiet_when_the_business_database_is_apart(
    case: int, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home, other = tmp_path / "home", tmp_path / "other"
    settings = _settings(home, **_apart(home, other)[case])
    with caplog.at_level(logging.INFO, logger="webhub.outside"):
        assert not warn_if_hub_tables_reachable(settings)
    assert caplog.records == []


# ---------------------------------------------------------------- the statement reader

_WAYS_OUT = [
    ["ATTACH", "DATABASE", "'x.db'", "AS", "x"],
    ["VACUUM", "INTO", "'x.db'"],
    ["PRAGMA", "database_list"],
    ["PRAGMA", "main", ".", "journal_mode", "=", "DELETE"],
    ["SELECT", "*", "FROM", "pragma_database_list"],
    ["SELECT", "load_extension", "(", "'x'", ")"],
    ["SELECT", '"load_extension"', "(", "'x'", ")"],
]
_GAPS = st.sampled_from([" ", "\n", "\t", " /* attach */ ", " -- vacuum\n", "/**/"])


@given(st.text())
def test_the_reader_takes_any_text(text: str) -> None:
    refused = refused_in_sqlite_text(text)
    assert refused is None or refused.startswith(("ATTACH", "DETACH", "VACUUM", "PRAGMA", "the"))


@given(st.text())
def test_text_in_strings_and_comments_is_never_refused(text: str) -> None:
    quoted = "'" + text.replace("'", "''") + "'"
    assert refused_in_sqlite_text(f"SELECT {quoted} AS v") is None
    assert refused_in_sqlite_text(f"SELECT 1 -- {text.replace(chr(10), ' ')}") is None
    assert refused_in_sqlite_text(f"SELECT 1 /* {text.replace('*/', '')} */") is None


@given(st.sampled_from(_WAYS_OUT), st.data())
def test_the_reader_and_the_authorizer_refuse_every_spelling(
    tokens: list[str], data: st.DataObject
) -> None:
    """However a way out is cased and spaced, the SQLite3 ODBC driver's reader refuses
    it, and so does the sqlite:/// authorizer, which needs no reading at all."""
    spelled = [data.draw(st.sampled_from([t, t.lower(), t.upper(), t.title()])) for t in tokens]
    sql = "".join(word + data.draw(_GAPS) for word in spelled)
    assert refused_in_sqlite_text(sql) is not None, sql
    conn = sqlite3.connect(":memory:")
    try:
        guard = SqliteGuard()
        conn.set_authorizer(guard)
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute(sql)
        assert guard.refused is not None, sql
    finally:
        conn.close()


def test_a_hub_whose_business_database_is_its_own_says_so_at_start(
        start_hub: Callable[..., HubProcess], tmp_path: Path) -> None:
    hub = start_hub({"WEBJOB_DB": f"sqlite:///{tmp_path / 'hub0' / 'home' / 'hub.db'}"})
    assert hub.log_text().count("WEBJOB_DB reaches the hub's own tables") == 1
