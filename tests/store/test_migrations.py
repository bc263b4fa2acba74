"""Schema migrations (hub.store.migrations) on every backend the hub keeps tables in.

A database made by the stores as they are (``CREATE TABLE IF NOT EXISTS`` on first
use, no version) is upgraded in place and keeps every row; two nodes upgrading one
database at once both succeed; a database newer than the code is refused.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.history.base import HistoryQuery
from hub.history.sqlstore import SqlHistoryStore
from hub.schedule.model import ScheduleInput
from hub.schedule.store import ScheduleStore
from hub.secrets.box import SecretBox
from hub.secrets.store import SecretStore
from hub.settings import load_settings
from hub.store.dbjobs import DbJobStore
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.identity import IdentityStore
from hub.store.migrations import (
    current_revision,
    head_revision,
    pending_migrations,
    prepare_at_start,
    upgrade,
    upgrade_local_history,
)
from shared.errors import InternalError
from tests.history.conftest import run
from tests.hub.conftest import AUTH, assert_clean_log, launch_hub
from tests.servers import PG_DB, fresh_database

# Every table of migration 0001, as the stores made them before migrations.
OLD_TABLES = ("webjob_runs", "webjob_run_hours", "webjob_run_jobs", "webjob_history_marks",
              "schema_version", "users", "api_tokens", "sessions", "api_keys",
              "IQXNetWebJobSchedule", "IQXNetWebJobScheduleClaim", "IQXNetWebJobSecret",
              "IQXNetWebJobSecretChange", "IQXNetWebJob", "IQXNetWebJobVersion",
              "IQXNetWebJobDeletion")
# ODBC SQLite is upgraded through its file (see hub.store.migrations.runner); it is in
# the tests that need no store to fill it.
FILLED = ("sqlite", "postgresql", "mariadb", "postgresql-odbc")
BACKENDS = (*FILLED, "sqlite-odbc")
SECRET = "migration-test-secret"
REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def database_url(kind: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database: ``postgresql`` through psycopg, ``postgresql-odbc`` through
    psqlODBC (one server database either way)."""
    server = kind.removesuffix("-odbc") if kind == "postgresql-odbc" else kind
    with fresh_database(server, tmp_path) as url:
        if server != "postgresql":
            yield url
            return
        name = _pg_name(url)
        yield (f"odbc:{PG_DB % name}" if kind == "postgresql-odbc"
               else f"postgresql://postgres@127.0.0.1:5432/{name}")


def _pg_name(url: str) -> str:
    found = re.search(r"DATABASE=([^;]+)", url) or re.search(r"/([^/?]+)(\?|$)", url)
    assert found, url
    return found.group(1)


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as made:
        yield made


@pytest.fixture(params=FILLED)
def filled_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as made:
        yield made


@contextlib.contextmanager
def opened(url: str) -> Iterator[HubDatabase]:
    db = open_hub_database(url)
    try:
        yield db
    finally:
        db.close()


def fill_with_old_stores(db: HubDatabase) -> None:
    """A user with a token and a session, a job saved twice and deleted one, a
    schedule with a claim, a secret, history runs: through the stores, which make
    their tables on first use as hubs before migrations did."""
    users = IdentityStore(db)
    user = users.add_user("ann", "OWNER", 7)
    users.set_password("ann", "a long enough password")
    users.issue_token("ann", "cli")
    users.open_session(user.id)
    users.issue_key("report", "partner")
    jobs = DbJobStore(db)
    jobs.save("report", "return 1;", "ann")
    jobs.save("report", "return 2;", "ann")
    jobs.save("gone", "return 0;", "ann")
    jobs.delete("gone", "ann")
    schedules = ScheduleStore(db)
    made = schedules.create(ScheduleInput("nightly", "0 3 * * *", "report", '{"a":1}',
                                          True, "UTC"), "ann")
    schedules.claim(made.id, "2027-01-15T03:00", "node-a")
    SecretStore(db, SecretBox(SECRET)).put("API_KEY", "s3cret", "ann")
    SqlHistoryStore(db).put([run("r1"), run("r2", outcome="failed"), run("r3")])


def snapshot(db: HubDatabase) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every old table, in a stable order."""
    return {table: sorted(tuple(map(repr, row)) for row in db.read(f"SELECT * FROM {table}"))
            for table in OLD_TABLES}


def test_an_upgrade_keeps_every_row_of_a_database_made_before_migrations(
        filled_url: str) -> None:
    url = filled_url
    with opened(url) as db:
        fill_with_old_stores(db)
        before = snapshot(db)
        assert current_revision(db) is None
        assert pending_migrations(db) == ["0001", "0002", "0003", "0004", "0005", "0006", "0007"]
    with opened(url) as db:
        assert upgrade(db) == ["0001", "0002", "0003", "0004", "0005", "0006", "0007"]
        assert snapshot(db) == before
        assert current_revision(db) == head_revision() and pending_migrations(db) == []
        # The stores still read what they wrote (and their own DDL is harmless now).
        assert IdentityStore(db).check_password("ann", "a long enough password")
        assert DbJobStore(db).get("report").code == "return 2;"  # type: ignore[union-attr]
        assert SecretStore(db, SecretBox(SECRET)).values(["API_KEY"]) == {"API_KEY": "s3cret"}
        assert [s.name for s in ScheduleStore(db).list_schedules()] == ["nightly"]
        assert SqlHistoryStore(db).get("r2").outcome == "failed"  # type: ignore[union-attr]
        assert upgrade(db) == []


def test_a_fresh_database_gets_the_tables_the_stores_make(url: str, tmp_path: Path) -> None:
    """Migration 0001 is a frozen copy of the stores' DDL: the same columns, so a store
    finds on a migrated database exactly what it would have made itself."""
    with opened(url) as db:
        upgrade(db)
        migrated = {t: _columns(db, t) for t in OLD_TABLES}
    with database_url("sqlite", tmp_path / "stores") as other, opened(other) as db:
        fill_with_old_stores(db)
        made = {t: _columns(db, t) for t in OLD_TABLES}
    assert migrated == made, "a store's table differs from migration 0001: add a revision"


@pytest.mark.parametrize("url", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_the_cluster_tables_are_the_ones_the_cluster_stores_make(url: str,
                                                                 tmp_path: Path) -> None:
    """Migration 0004 is a frozen copy of the cluster stores' DDL, as 0001 of the rest."""
    from hub.cluster.nodes import node_schema
    from hub.cluster.registry import running_schema
    from hub.schedule.store import _schedule_tables
    from hub.store.limits_store import limit_tables

    tables = ("webhub_nodes", "webhub_running", "IQXNetWebJobScheduleRun",
              "IQXNetWebJobScheduleLease", "IQXNetWebJobLimitHit", "IQXNetWebJobLimitLock")
    with opened(url) as db:
        upgrade(db)
        migrated = {t: _columns(db, t) for t in tables}
    with database_url("sqlite", tmp_path / "stores") as other, opened(other) as db:
        for made_by in (node_schema, running_schema, _schedule_tables, limit_tables):
            db.ensure_schema(made_by(db.dialect))
        made = {t: _columns(db, t) for t in tables}
    assert migrated == made, "a cluster store's table differs from migration 0004"


def test_the_rate_window_table_is_the_one_the_limits_store_makes(tmp_path: Path) -> None:
    """Migration 0005 is a frozen copy of the PostgreSQL rate windows' DDL."""
    from hub.store.limits_store import WINDOW_TABLE, window_tables

    with database_url("postgresql", tmp_path / "migrated") as url, opened(url) as db:
        upgrade(db)
        migrated = _columns(db, WINDOW_TABLE)
    with database_url("postgresql", tmp_path / "made") as url, opened(url) as db:
        db.ensure_schema(window_tables(db.dialect))
        made = _columns(db, WINDOW_TABLE)
    assert migrated == made == ["counter", "buckets", "hits", "admitted", "touched"]


def _columns(db: HubDatabase, table: str) -> list[str]:
    # A query that names its columns without reading rows, the same on every backend.
    with db.transaction() as tx:
        cursor = tx._execute(f"SELECT * FROM {table} WHERE 1 = 0", [])
        names = [str(d[0]).lower() for d in cursor.description]
        cursor.fetchall()
    return names


def test_two_upgrades_started_at_once_both_succeed(url: str) -> None:
    applied: list[list[str]] = []
    failures: list[BaseException] = []
    start = threading.Barrier(2)

    def node() -> None:
        try:
            with opened(url) as db:
                start.wait(timeout=30)
                applied.append(upgrade(db))
        except BaseException as exc:  # reported below, with the other node's result
            failures.append(exc)

    threads = [threading.Thread(target=node) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert sorted(applied) == [[], ["0001", "0002", "0003", "0004", "0005", "0006", "0007"]]
    with opened(url) as db:
        assert pending_migrations(db) == []
        assert db.read("SELECT version_num FROM alembic_version") == [(head_revision(),)]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
def test_a_database_newer_than_the_code_is_refused(kind: str, tmp_path: Path) -> None:
    with database_url(kind, tmp_path) as url, opened(url) as db:
        upgrade(db)
        db.write("UPDATE alembic_version SET version_num = ?", ("9001",))
        refusal = r"revision 9001, which this hub does not know .* a newer hub"
        with pytest.raises(InternalError, match=refusal):
            pending_migrations(db)
        with pytest.raises(InternalError, match=refusal):
            upgrade(db)
        settings = load_settings({"WEBHUB_HOME": str(tmp_path / "home"), "WEBHUB_DB": url,
                                  "WEBHUB_SECRET": SECRET})
        with pytest.raises(InternalError, match="9001"):
            prepare_at_start(settings)


def test_the_local_history_file_is_versioned_and_keeps_its_vacuum_mode(
        tmp_path: Path) -> None:
    assert upgrade_local_history(tmp_path) == [
        "0001", "0002", "0003", "0004", "0005", "0006", "0007"]
    assert upgrade_local_history(tmp_path) == []
    conn = sqlite3.connect(tmp_path / "history.db")
    try:
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # INCREMENTAL
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master "
                                             "WHERE type = 'table'")}
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (head_revision(),)]
    finally:
        conn.close()
    assert "webjob_runs" in tables and "webjob_runs_fts" in tables
    assert not tables & {"users", "IQXNetWebJob", "webhub_key_check"}


def test_history_search_on_postgresql_can_read_the_trigram_index(tmp_path: Path) -> None:
    with database_url("postgresql", tmp_path) as url, opened(url) as db:
        upgrade(db)
        store = SqlHistoryStore(db)
        store.put([run(f"r{i}", params={"order": f"cust-{i:04d}"}) for i in range(200)])
        with db.transaction() as tx:
            # Only the index can answer once the table and its other indexes are ruled
            # out: the plan shows whether the search's own query form is indexable.
            tx.read("SELECT set_config('enable_seqscan', 'off', true)")
            tx.read("SELECT set_config('enable_indexscan', 'off', true)")
            sql, params = store.search_statement(HistoryQuery(search="CUST-0042"))
            plan = "\n".join(str(r[0]) for r in tx.read(f"EXPLAIN {sql}", params))
        assert "webjob_runs_search_trgm" in plan, plan
        found = store.search(HistoryQuery(search="CUST-0042"))
        assert [r.job_id for r in found] == ["r42"]


def test_the_trigram_index_keeps_a_short_pending_list(tmp_path: Path) -> None:
    """Every search reads the GIN pending list whole: 0007 keeps it at 64 kB, not 4 MB,
    and runs written past that are still found."""
    with database_url("postgresql", tmp_path) as url, opened(url) as db:
        upgrade(db)
        options = db.read("SELECT reloptions FROM pg_class WHERE relname = ?",
                          ("webjob_runs_search_trgm",))
        assert "gin_pending_list_limit=64" in str(options), options
        store = SqlHistoryStore(db)
        words = " ".join(f"w{i:05d}x" for i in range(60))
        for batch in range(6):
            store.put([run(f"p{batch}-{i}", params={"note": f"{words} {batch}-{i}"})
                       for i in range(100)])
        assert len(store.search(HistoryQuery(search="W00059X 5-42"))) == 1


@contextlib.contextmanager
def plain_role_database(tmp_path: Path) -> Iterator[str]:
    """A fresh database and a login role that may make tables in it but not
    extensions (no CREATE on the database): a psycopg URL as that role."""
    role = f"wjtest_role_{os.urandom(4).hex()}"
    with database_url("postgresql", tmp_path) as admin_url, opened(admin_url) as admin:
        admin.write(f"CREATE ROLE {role} LOGIN NOSUPERUSER")
        try:
            admin.write(f"GRANT USAGE, CREATE ON SCHEMA public TO {role}")
            yield admin_url.replace("postgresql://postgres@", f"postgresql://{role}@")
        finally:
            admin.write(f"DROP OWNED BY {role}")
            admin.write(f"DROP ROLE {role}")


@pytest.mark.expected_warning
def test_without_pg_trgm_the_upgrade_warns_and_search_keeps_its_scan(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with plain_role_database(tmp_path) as url, opened(url) as db:
        with caplog.at_level(logging.WARNING, logger="webhub.db"):
            assert upgrade(db) == ["0001", "0002", "0003", "0004", "0005", "0006", "0007"]
        assert "history search keeps its scan" in caplog.text
        assert "pg_trgm" in caplog.text
        indexes = {r[0] for r in db.read("SELECT indexname FROM pg_indexes "
                                         "WHERE tablename = 'webjob_runs'")}
        assert "webjob_runs_search_trgm" not in indexes and "webjob_runs_started" in indexes
        store = SqlHistoryStore(db)
        store.put([run("r1", params={"order": "cust-7"}), run("r2")])
        assert [r.job_id for r in store.search(HistoryQuery(search="CUST-7"))] == ["r1"]


def _webhub(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
    return subprocess.run([sys.executable, "-m", "hub.cli", *args], capture_output=True,
                          text=True, env={**clean, **env}, cwd=REPO, timeout=60)


def test_webhub_db_current_and_upgrade(tmp_path: Path) -> None:
    with database_url("postgresql", tmp_path) as url:
        with opened(url) as db:
            fill_with_old_stores(db)
        env = {"WEBHUB_HOME": str(tmp_path / "home"), "WEBHUB_DB": url}
        before = _webhub(env, "db", "current")
        upgraded = _webhub(env, "db", "upgrade")
        after = _webhub(env, "db", "current")
        again = _webhub(env, "db", "upgrade")
        with opened(url) as db:
            db.write("UPDATE alembic_version SET version_num = ?", ("9001",))
        newer = _webhub(env, "db", "current")
    assert before.returncode == 0, before.stderr
    assert before.stdout == ("hub database: at no revision (tables made before migrations, "
                             "or none)\n  pending: 0001, 0002, 0003, 0004, 0005, 0006, "
                             "0007 (newest: 0007)\n")
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout == ("hub database: applied 0001, 0002, 0003, 0004, 0005, 0006, "
                               "0007; at 0007\n")
    assert after.stdout == "hub database: at 0007\n  pending: none (newest: 0007)\n"
    assert again.stdout == "hub database: nothing to do; at 0007\n"
    assert newer.returncode == 2 and newer.stdout == "hub database: at 9001\n"
    assert re.fullmatch(r"webhub: SYS-500: .*revision 9001, which this hub does not know.*\n",
                        newer.stderr), newer.stderr


def test_a_hub_started_on_a_database_made_before_migrations_upgrades_it(
        tmp_path: Path) -> None:
    with database_url("postgresql", tmp_path) as url:
        with opened(url) as db:
            fill_with_old_stores(db)
            before = snapshot(db)
        hub = launch_hub(tmp_path / "node", {"WEBHUB_DB": url, "WEBJOB_STORE": "db",
                                             "WEBJOB_HISTORY_STORE": "sql"}, jobs={})
        try:
            with hub.client() as client:
                ran = client.get("/api/webjobs/report",
                                 headers={**AUTH, "Accept": "application/json"})
                runs = client.get("/api/webjobs/history", params={"job": "report"},
                                  headers=AUTH).json()["runs"]
        finally:
            hub.stop()
        with opened(url) as db:
            assert pending_migrations(db) == []
            kept = snapshot(db)
    assert ran.status_code == 200 and ran.json() == 2, ran.text
    assert {"r1", "r2", "r3"} <= {r["jobId"] for r in runs}, runs
    for table in ("users", "api_tokens", "IQXNetWebJob", "IQXNetWebJobVersion",
                  "IQXNetWebJobSchedule", "IQXNetWebJobSecret"):
        assert kept[table] == before[table], table
    assert "upgraded to schema revision 0007" in hub.log_text()
    assert_clean_log(hub)
