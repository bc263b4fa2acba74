"""``HubDatabase.read(..., fresh_plan=True)`` on PostgreSQL: the statement is planned
for its values every time, never from a generic plan kept for its text. A history
search needs it: a generic plan reads every match of a common term, then sorts.

``pg_prepared_statements`` counts, per session, the generic and custom plans each
prepared statement was given; one pooled connection keeps the session the same."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.store.hubdb import HubDatabase, open_hub_database
from tests.store.test_migrations import database_url

# Past psycopg's prepare threshold (5) and PostgreSQL's five custom plans before a
# generic one.
TIMES = 12
STATEMENT = "SELECT n FROM generate_series(1, 20) AS n WHERE n > ? /* fresh-plan-probe */"


@contextlib.contextmanager
def one_connection(kind: str, tmp_path: Path) -> Iterator[HubDatabase]:
    with database_url(kind, tmp_path) as url:
        db = open_hub_database(url, pool_size=1)
        try:
            yield db
        finally:
            db.close()


def generic_plans(db: HubDatabase) -> int:
    row = db.read_one("SELECT COALESCE(SUM(generic_plans), 0) FROM pg_prepared_statements "
                      "WHERE statement LIKE ?", ("%fresh-plan-probe%",))
    assert row is not None
    return int(row[0])


def test_a_read_psycopg_prepares_soon_gets_a_generic_plan(tmp_path: Path) -> None:
    """The case fresh_plan is for (without it this file would prove nothing)."""
    with one_connection("postgresql", tmp_path) as db:
        for _ in range(TIMES):
            assert len(db.read(STATEMENT, (10,))) == 10
        assert generic_plans(db) > 0


def test_psqlodbc_never_keeps_a_plan(tmp_path: Path) -> None:
    """Why the ODBC driver does nothing for fresh_plan: each read is unnamed already."""
    with one_connection("postgresql-odbc", tmp_path) as db:
        for _ in range(TIMES):
            assert len(db.read(STATEMENT, (10,))) == 10
        assert generic_plans(db) == 0


@pytest.mark.parametrize("kind", ["postgresql", "postgresql-odbc"])
def test_a_fresh_plan_read_is_never_given_a_generic_plan(kind: str, tmp_path: Path) -> None:
    with one_connection(kind, tmp_path) as db:
        for bound in range(TIMES):
            assert len(db.read(STATEMENT, (bound,), fresh_plan=True)) == 20 - bound
        assert generic_plans(db) == 0
