"""``postgresql://`` hub databases (psycopg 3): the URL forms, a printed URL never
showing its password, ``?`` placeholders beside literal ``%`` and ``?`` text, and
the errors by SQLSTATE; ``kind`` says postgresql through psycopg and ODBC alike."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub.dburl import parse_database_url
from hub.store.hubdb import open_hub_database
from hub.store.pgconn import placeholders
from shared.errors import BadRequest, Conflict, InternalError, StoreUnavailable
from tests.servers import database_nodes


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "PostgreSQL"])
def test_postgresql_urls(scheme: str) -> None:
    url = parse_database_url(f"{scheme}://hub:pw@db.example:6543/webjobs?sslmode=require",
                             "WEBHUB_DB", native_postgresql=True)
    assert url.kind == "postgresql" and url.is_server
    assert url.target == "postgresql://hub:pw@db.example:6543/webjobs?sslmode=require"
    assert str(url) == "postgresql://hub@db.example:6543/webjobs"


@pytest.mark.parametrize("url", ["postgresql:x", "postgresql://h:port/db",
                                 "postgresql://h/db#frag"])
def test_unreadable_postgresql_urls_name_the_setting(url: str) -> None:
    with pytest.raises(BadRequest, match=r"^WEBHUB_DB: ") as caught:
        parse_database_url(url, "WEBHUB_DB", native_postgresql=True)
    assert "pw" not in caught.value.message


def test_the_jobs_database_takes_no_postgresql_url() -> None:
    with pytest.raises(BadRequest, match=r"^WEBJOB_DB must be sqlite:///<path> or odbc:") as no:
        parse_database_url("postgresql://u:pw@h/db", "WEBJOB_DB")
    assert "postgresql:// is for WEBHUB_DB" in no.value.message and "pw" not in no.value.message
    with pytest.raises(BadRequest, match="postgresql://user:password@host:port/database"):
        parse_database_url("mysql://u@h/db", "WEBHUB_DB", native_postgresql=True)


_PASSWORDS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]),
                     min_size=4, max_size=30).filter(lambda p: p.strip() == p)


@given(_PASSWORDS, st.sampled_from(["", "?sslmode=disable", "?password=again"]))
def test_a_printed_url_never_shows_its_password(password: str, query: str) -> None:
    secret = quote(password, safe="")
    text = f"postgresql://hub:{secret}@127.0.0.1:5432/hub{query.replace('again', secret)}"
    try:
        url = parse_database_url(text, "WEBHUB_DB", native_postgresql=True)
    except BadRequest as refused:
        assert secret not in refused.message and password not in refused.message
        return
    shown = str(url)
    assert shown == "postgresql://hub@127.0.0.1:5432/hub"
    assert secret not in shown


def test_the_embedded_default_imports_no_driver(tmp_path: Path) -> None:
    code = ("import sys\nfrom hub.store.hubdb import open_hub_database\n"
            f"db = open_hub_database('sqlite:///{tmp_path / 'h.db'}')\n"
            "db.read('SELECT 1')\n"
            "print('psycopg' in sys.modules, 'pyodbc' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.split() == ["False", "False"]


@given(st.lists(st.sampled_from(["?", "%", "'a?%'", "'it''s ?'", '"c?%"', "-- ?%\n",
                                 " x ", "LIKE", "''"]), max_size=12))
def test_placeholders_outside_quotes_only(parts: list[str]) -> None:
    sql = "".join(parts)
    out = placeholders(sql)
    quoted = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*")
    # Outside quotes each ? is a %s and each % doubled; inside, only % doubled.
    assert quoted.sub("", out) == quoted.sub("", sql).replace("%", "%%").replace("?", "%s")
    assert quoted.findall(out) == [q.replace("%", "%%") for q in quoted.findall(sql)]


def test_literal_percent_and_question_marks_reach_the_server(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        db = node()
        row = db.read_one("SELECT '100%', ?, 'a?b', ? || '%', 7 % ?", ["x", "50", 4])
        assert row == ("100%", "x", "a?b", "50%", 3)
        assert db.read_one("SELECT '100%', 'a?b'") == ("100%", "a?b")  # no parameters
        assert db.read_one("SELECT ? * ?", [300, 300]) == (90000,)  # ints are BIGINT
        db.write("CREATE TABLE t (name VARCHAR(20))")
        db.write("INSERT INTO t (name) VALUES (?), (?)", ["50% off", "full"])
        assert db.read("SELECT name FROM t WHERE name LIKE ? ESCAPE '!'", ["%!%%"]) == [
            ("50% off",)]


@pytest.mark.parametrize("kind", ["postgresql", "postgresql-odbc"])
def test_errors_by_sqlstate(kind: str, tmp_path: Path) -> None:
    with database_nodes(kind, tmp_path) as node:
        db = node()
        assert db.kind == "postgresql" and db.describe() == "postgresql"
        assert db.supports_notify is (kind == "postgresql")
        db.write("CREATE TABLE t (k INTEGER PRIMARY KEY, n SMALLINT)")
        db.write("INSERT INTO t (k, n) VALUES (?, ?)", [1, 1])
        with pytest.raises(Conflict):
            db.write("INSERT INTO t (k, n) VALUES (?, ?)", [1, 2])
        with pytest.raises(InternalError, match="refused a statement") as refused:
            db.read("SELECT nosuchcolumn FROM t")
        assert not isinstance(refused.value, StoreUnavailable)
        with pytest.raises(InternalError, match="refused a value") as value:
            db.write("INSERT INTO t (k, n) VALUES (?, ?)", [2, 10**9])
        assert not isinstance(value.value, StoreUnavailable)
        assert db.read("SELECT k, n FROM t") == [(1, 1)]


def test_insert_hands_back_the_new_id(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        db = node()
        db.write(db.dialect.create_table("ids", "{id}, name {varchar}(20)"))
        assert db.insert("INSERT INTO ids (name) VALUES (?)", ["a"]) == 1
        with db.transaction() as tx:
            assert tx.insert("INSERT INTO ids (name) VALUES (?)", ["b"]) == 2
        ignored = db.dialect.insert_ignore("INSERT INTO ids (id, name) VALUES (?, ?)")
        assert db.write(ignored, [1, "again"]) == 0


def test_a_url_of_a_server_that_is_not_there_is_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match=r"postgresql://x@127\.0\.0\.1:1/db"):
        open_hub_database("postgres://x:y@127.0.0.1:1/db")
