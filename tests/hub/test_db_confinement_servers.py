"""The confinement battery on PostgreSQL and MariaDB, in the README's worst case: the
hub's own tables on the same server as the business database, the business login made
exactly as the README's blocks make it. A job, as an attacker would write it, reads no
file of the hub's host, reaches no hub table and leaves no lasting change to its login
— and the hub's start-up warning names what it still cannot rule out.

Both servers are the development machine's (``make test`` starts them); when one is
down its tests FAIL, never skip. (SQLite's battery is tests/hub/test_db_escape.py.)"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyodbc
import pytest

from hub.outside.sqlite_guard import REFUSED_STATE
from tests.hub.conftest import TEST_SECRET, TOKEN, HubProcess, running_hub
from tests.hub.test_db_escape import _try_each
from tests.servers import MARIA_ADMIN, PG_URL, maria_admin, pg_admin

PASSWORD = "business-pw-1"


@dataclass
class Site:
    kind: str
    hub: HubProcess
    hub_database: str
    business: str
    login: str
    job_db: str
    canary: Path


def _pg(database: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg  # the test machine's admin connection, as tests/servers.py has it

    with psycopg.connect(PG_URL % database, autocommit=True, connect_timeout=10) as conn:
        cursor = conn.execute(sql)
        return list(cursor.fetchall()) if cursor.description else []


def _make_maria(suffix: str) -> tuple[str, str, str, str]:
    hub_db, business, login = f"wjhub_{suffix}", f"wjbiz_{suffix}", f"wjl_{suffix}"
    maria_admin(f"CREATE DATABASE {hub_db}")
    maria_admin(f"CREATE DATABASE {business}")
    maria_admin(f"CREATE TABLE {business}.Person (PersonID INT AUTO_INCREMENT PRIMARY KEY, "
           "Name TEXT)")
    # The README's MariaDB block, word for word but the names.
    maria_admin(f"CREATE USER '{login}'@'%' IDENTIFIED BY '{PASSWORD}'")
    maria_admin(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {business}.* TO '{login}'@'%'")
    maria_admin("SET GLOBAL local_infile = 1")  # the server's default: only the hub may refuse
    job_db = (f"odbc:DRIVER={{MariaDB Unicode}};SERVER=127.0.0.1;PORT=3306;"
              f"DATABASE={business};UID={login};PWD={PASSWORD}")
    return hub_db, business, login, job_db


def _make_pg(suffix: str) -> tuple[str, str, str, str]:
    hub_db, business, login = f"wjhub_{suffix}", f"wjbiz_{suffix}", f"wjl_{suffix}"
    pg_admin(f"CREATE DATABASE {hub_db}")
    pg_admin(f"CREATE DATABASE {business}")
    # The README's PostgreSQL block, word for word but the names.
    pg_admin(f"CREATE ROLE {login} LOGIN PASSWORD '{PASSWORD}' NOSUPERUSER NOCREATEDB "
             "NOCREATEROLE")
    pg_admin(f"REVOKE ALL ON DATABASE {hub_db} FROM PUBLIC")
    _pg(business, "CREATE TABLE Person (PersonID SERIAL PRIMARY KEY, Name TEXT)")
    _pg(business, f"GRANT CONNECT ON DATABASE {business} TO {login}")
    _pg(business, f"GRANT USAGE ON SCHEMA public TO {login}")
    _pg(business, f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public "
                  f"TO {login}")
    _pg(business, f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {login}")
    job_db = (f"odbc:DRIVER={{PostgreSQL Unicode}};SERVER=127.0.0.1;PORT=5432;"
              f"DATABASE={business};UID={login};PWD={PASSWORD}")
    return hub_db, business, login, job_db


def _drop(kind: str, hub_db: str, business: str, login: str) -> None:
    if kind == "mariadb":
        maria_admin(f"DROP DATABASE IF EXISTS {hub_db}")
        maria_admin(f"DROP DATABASE IF EXISTS {business}")
        maria_admin(f"DROP USER IF EXISTS '{login}'@'%'")
        return
    pg_admin(f"DROP DATABASE IF EXISTS {hub_db} WITH (FORCE)")
    pg_admin(f"DROP DATABASE IF EXISTS {business} WITH (FORCE)")
    pg_admin(f"DROP ROLE IF EXISTS {login}")


@pytest.fixture(scope="module", params=["postgresql", "mariadb"])
def site(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    kind = str(request.param)
    suffix = os.urandom(4).hex()
    hub_db, business, login, job_db = (_make_pg if kind == "postgresql" else _make_maria)(
        suffix)
    hub_url = (PG_URL % hub_db if kind == "postgresql" else
               f"odbc:{MARIA_ADMIN.replace('DATABASE=test', f'DATABASE={hub_db}')}")
    env = {"WEBHUB_DB": hub_url, "WEBJOB_DB": job_db, "WEBJOB_STORE": "db",
           "WEBJOB_HISTORY_STORE": "sql"}
    try:
        with running_hub(tmp_path_factory.mktemp(f"confine-{kind}"), env, jobs={}) as hub:
            canary = hub.home / "canary.txt"
            canary.write_text(f"canary-{suffix}\n")
            yield Site(kind, hub, hub_db, business, login, job_db, canary)
    finally:
        _drop(kind, hub_db, business, login)


def _secrets_of(site: Site) -> list[str]:
    """What must never appear in any job's answer."""
    return [site.canary.read_text().strip(), TOKEN, TEST_SECRET]


def _hub_tables(site: Site) -> list[str]:
    if site.kind == "mariadb":
        return [str(r[0]) for r in maria_admin(f"SHOW TABLES FROM {site.hub_database}")]
    return [str(r[0]) for r in _pg(site.hub_database, "SELECT tablename FROM pg_tables "
                                   "WHERE schemaname = 'public'")]


def _login_state(site: Site) -> list[tuple[Any, ...]]:
    """The login's stored password, settings and roles as the server keeps them."""
    if site.kind == "mariadb":
        return maria_admin(f"SELECT Priv FROM mysql.global_priv WHERE User = '{site.login}'")
    return pg_admin("SELECT rolpassword, rolsuper, rolcreaterole FROM pg_authid "
                    f"WHERE rolname = '{site.login}'") + pg_admin(
        "SELECT setdatabase, setrole, setconfig FROM pg_db_role_setting")


def _file_probes(site: Site, outside: Path) -> list[str]:
    canary = site.canary
    if site.kind == "mariadb":
        return [
            f"LOAD DATA LOCAL INFILE '{canary}' INTO TABLE Person (Name)",
            f"LOAD DATA LOW_PRIORITY LOCAL INFILE '{canary}' INTO TABLE Person (Name)",
            f"load data/**/local infile '{canary}' into table Person (Name)",
            f"LoAd  DaTa\n-- x\n LOCAL INFILE '{canary}' INTO TABLE Person (Name)",
            f"LOAD XML LOCAL INFILE '{canary}' INTO TABLE Person",
            f"/*!50000 LOAD DATA LOCAL INFILE '{canary}' INTO TABLE Person (Name) */",
            f"SELECT 'x\\''; LOAD DATA LOCAL INFILE '{canary}' INTO TABLE Person (Name); -- '",
            "LOAD DATA LOCAL INFILE '/proc/self/environ' INTO TABLE Person (Name)",
            f"SELECT LOAD_FILE('{canary}') AS v",
            f"SELECT Name FROM Person INTO OUTFILE '{outside}/out.txt'",
        ]
    return [
        f"COPY Person (Name) FROM '{canary}'",
        f"COPY Person (Name) FROM PROGRAM 'cat {canary}'",
        f"SELECT pg_read_file('{canary}') AS v",
        f"SELECT lo_import('{canary}') AS v",
        "CREATE EXTENSION IF NOT EXISTS dblink",
        f"SELECT dblink_connect('dbname={site.hub_database}')",
    ]


def _login_probes(site: Site) -> list[str]:
    if site.kind == "mariadb":
        return [
            "SET PASSWORD = PASSWORD('stolen')",
            "SET PASSWORD FOR CURRENT_USER() = PASSWORD('stolen')",
            "ALTER USER CURRENT_USER() IDENTIFIED BY 'stolen'",
            f"RENAME USER '{site.login}'@'%' TO 'gone'@'%'",
            f"GRANT ALL ON *.* TO '{site.login}'@'%'",
            "SET ROLE NONE", "SET DEFAULT ROLE NONE",
            "EXECUTE IMMEDIATE 'SET PASSWORD = PASSWORD(''stolen'')'",
            "PREPARE s FROM 'SET PASSWORD = PASSWORD(''stolen'')'",
            "BEGIN NOT ATOMIC SET PASSWORD = PASSWORD('stolen'); END",
            "SET STATEMENT max_statement_time=10 FOR SET PASSWORD = PASSWORD('stolen')",
            "SET @webhub_userstaffid = '99'",
            # a red team's bypasses of an earlier reading
            "/*!999999 ' */ SET PASSWORD = PASSWORD('stolen') -- '",
            "SET --\x7f '\nPASSWORD = PASSWORD('stolen') -- '",
            "IF 1 THEN SET PASSWORD = PASSWORD('stolen'); END IF",
            "EXECUTE /*!*/ IMMEDIATE 'SET PASSWORD = PASSWORD(''stolen'')'",
            "XA START 'held'",
            "/*!999999 /* */ ' */ SET PASSWORD = PASSWORD('stolen') -- '",
            "SELECT 1, 9 INTO @a.b, @webhub_userstaffid",
            "SET @a=1, PASSWORD = PASSWORD('stolen')",
        ]
    return [
        "ALTER ROLE CURRENT_USER PASSWORD 'stolen'",
        "ALTER ROLE CURRENT_USER SET statement_timeout = 1",
        f"ALTER USER {site.login} PASSWORD 'stolen'",
        f"ALTER DATABASE {site.business} SET statement_timeout = 1",
        "SET ROLE postgres", "SET SESSION AUTHORIZATION postgres",
        "DO $$BEGIN EXECUTE 'ALTER ROLE ' || current_user || ' PASSWORD ''stolen'''; END$$",
        "CREATE FUNCTION f() RETURNS void LANGUAGE sql AS "
        "$$ ALTER ROLE CURRENT_USER PASSWORD 'stolen' $$",
        "SELECT set_config('role', 'postgres', false)",
        "SELECT set_config('webhub.userstaffid', '99', false)",
        "SET webhub.userstaffid = '99'",
        "UPDATE pg_settings SET setting = '99' WHERE name = 'webhub.userstaffid'",
        # a red team's bypasses of an earlier reading
        "/* /* */ ' */ ALTER ROLE CURRENT_USER PASSWORD 'stolen' -- '",
        "SELECT 1; --\rALTER ROLE CURRENT_USER PASSWORD 'stolen'",
        "SELECT $a$b$ $a$ AS x; ALTER ROLE CURRENT_USER PASSWORD 'stolen'; -- $a$b$",
        "SELECT set_config(''||'webhub.userstaffid', '9', false)",
        "SELECT query_to_xml('select set_config(''webhub.userstaffid'', ''9'', false)', "
        "true, true, '')",
        "PREPARE TRANSACTION 'held'",
        "SELECT 1 AS \u00a0$a$; ALTER ROLE CURRENT_USER PASSWORD 'stolen'; SELECT 2 AS b$a$",
        "SET U&\"webhub.userstaffid\" = '9'", "RESET ALL",
        "SELECT word FROM ts_stat('SELECT set_config(''webhub.userstaffid'', ''9'', false)"
        "::tsvector')",
        "{oj ALTER ROLE CURRENT_USER PASSWORD 'stolen'}",
        "SELECT e'\\'\\{d '2020-01-01'} AS a; ALTER ROLE CURRENT_USER PASSWORD $$stolen$$ --'",
    ]


def _answers(out: dict[str, Any]) -> str:
    return json.dumps(out)


def test_no_file_of_the_hubs_host_reaches_a_job(site: Site, tmp_path: Path) -> None:
    probes = _file_probes(site, tmp_path)
    out = _try_each(site.hub, [*probes, "SELECT Name FROM Person"])
    for sql in probes:
        assert "answer" not in out[sql] or out[sql]["answer"] == [{"v": None}], (sql, out[sql])
    loads = [sql for sql in probes if "load" in sql.lower() and "load_file" not in sql.lower()]
    for sql in loads:  # refused up front: the connector is never asked
        assert out[sql]["code"] == REFUSED_STATE, (sql, out[sql])
    text = _answers(out)
    for secret in _secrets_of(site):
        assert secret not in text
    assert out["SELECT Name FROM Person"]["answer"] == []
    assert list(tmp_path.iterdir()) == []


def test_no_hub_table_reaches_a_job(site: Site) -> None:
    tables = _hub_tables(site)
    assert tables, "the hub made its tables on the shared server"
    if site.kind == "mariadb":
        probes = [f"SELECT * FROM {site.hub_database}.{t}" for t in tables]
        probes += [f"DELETE FROM {site.hub_database}.{t}" for t in tables]
        probes += ["SHOW DATABASES"]
    else:  # another database: only dblink could cross, and it is refused above
        probes = [f"SELECT * FROM {site.hub_database}.public.{t}" for t in tables]
    out = _try_each(site.hub, probes)
    for sql in probes:
        if sql == "SHOW DATABASES":
            assert site.hub_database not in _answers(out[sql]), out[sql]
            continue
        assert "code" in out[sql], (sql, out[sql])
    assert sorted(_hub_tables(site)) == sorted(tables)


def test_the_login_cannot_be_changed_from_a_job(site: Site) -> None:
    before = _login_state(site)
    probes = _login_probes(site)
    out = _try_each(site.hub, probes)
    for sql in probes:
        assert out[sql].get("code") == REFUSED_STATE, (sql, out[sql])
        assert out[sql]["message"].startswith("db.exec refuses "), (sql, out[sql])
    assert _login_state(site) == before
    # The login still answers, with the password it was given.
    again = _try_each(site.hub, ["SELECT COUNT(*) AS n FROM Person"])
    assert again["SELECT COUNT(*) AS n FROM Person"] == {"answer": [{"n": 0}]}
    direct = pyodbc.connect(site.job_db.removeprefix("odbc:"), autocommit=True, timeout=10)
    direct.close()


def test_the_start_warning_names_what_the_hub_cannot_rule_out(site: Site) -> None:
    log = site.hub.log_text()
    assert log.count("WEBJOB_DB shares its server with WEBHUB_DB") == 1, log[-3000:]
    line = next(x for x in log.splitlines() if "WEBJOB_DB shares its server" in x)
    for risk in ("grants", "file", "load"):
        assert risk in line, line
