"""A statement that changes rows is never sent again blindly when its answer is lost.

The fault: the statement runs and commits on the real connection, then the server ends
that session (``pg_terminate_backend``, MariaDB's ``KILL``) and the driver raises what
it raises for a session that died before its answer was read. A claim sent again must
still be won by the node whose first sending landed (and only by it); a lease likewise;
a rate-limit bump must not count twice (it surfaces as StoreUnavailable instead); and a
read that would change rows is refused outright.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pyodbc
import pytest

from hub.schedule.store import CLAIM_TABLE, ScheduleStore
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.limits_store import HIT_TABLE, WINDOW_TABLE, LimitsStore
from shared.errors import InternalError, StoreUnavailable
from tests.servers import MARIA_ADMIN, fresh_database, pg_admin

OCCURRENCE = "2026-12-02T07:00:00Z"
SERVERS = ("postgresql", "postgresql-odbc", "mariadb")


def _session(kind: str, conn: Any) -> int:
    if kind == "postgresql":
        return int(conn.info.backend_pid)
    query = "SELECT CONNECTION_ID()" if kind == "mariadb" else "SELECT pg_backend_pid()"
    return int(conn.cursor().execute(query).fetchone()[0])


def _end_session(kind: str, session: int) -> Exception:
    """End the session on the server; the error its driver raises for a session that
    died under a statement."""
    if kind == "mariadb":
        admin = pyodbc.connect(MARIA_ADMIN, autocommit=True, timeout=10)
        try:
            admin.cursor().execute(f"KILL {session}")
        finally:
            admin.close()
    else:
        pg_admin("SELECT pg_terminate_backend(%s)", [session])
    lost: Exception = (
        psycopg.OperationalError("consuming input failed: server closed the connection "
                                 "unexpectedly") if kind == "postgresql"
        else pyodbc.OperationalError("08S01", "[08S01] Communication link failure"))
    return lost


class AnswerLost:
    """Wraps the driver's ``execute``: the first ``times`` statements ``chosen`` picks
    run on the real connection, then the server ends that session before the answer
    is read."""

    def __init__(self, db: HubDatabase, kind: str, chosen: Callable[[str], bool],
                 times: int) -> None:
        self.real = db.driver.execute
        self.kind = kind
        self.chosen = chosen
        self.times = times
        self.sent: list[str] = []

    def __call__(self, conn: Any, sql: str, params: Sequence[Any], *,
                 fresh_plan: bool = False) -> Any:
        if not self.chosen(sql):
            return self.real(conn, sql, params, fresh_plan=fresh_plan)
        session = _session(self.kind, conn)
        cursor = self.real(conn, sql, params, fresh_plan=fresh_plan)
        self.sent.append(sql)
        if len(self.sent) > self.times:
            return cursor
        raise _end_session(self.kind, session)


@pytest.fixture(params=SERVERS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture()
def db(kind: str, tmp_path: Path) -> Iterator[HubDatabase]:
    with fresh_database(kind, tmp_path) as url:
        hub_db = open_hub_database(url)
        try:
            yield hub_db
        finally:
            hub_db.close()


def _lose_answer(db: HubDatabase, kind: str, monkeypatch: pytest.MonkeyPatch,
                 chosen: Callable[[str], bool], times: int = 1) -> AnswerLost:
    db.read("SELECT 1")   # the statement goes out on a reused connection (else no retry)
    fault = AnswerLost(db, kind, chosen, times)
    monkeypatch.setattr(db.driver, "execute", fault)
    return fault


def _is_claim(sql: str) -> bool:
    return sql.startswith(f"INSERT INTO {CLAIM_TABLE}")


def test_a_claim_whose_answer_was_lost_is_still_won(
        db: HubDatabase, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ScheduleStore(db)
    store.ensure_schema()
    fault = _lose_answer(db, kind, monkeypatch, _is_claim)
    items = [(1, OCCURRENCE), (2, OCCURRENCE)]
    assert store.claim_many(items, "node-a") == set(items)
    assert len(fault.sent) == 2                          # it landed, and was sent again
    assert store.claimed_by(1, OCCURRENCE) == "node-a"
    # Still one winner: another node, and a later attempt of this one, find it taken.
    assert not store.claim(1, OCCURRENCE, "node-b")
    assert not store.claim(2, OCCURRENCE, "node-a")
    assert store.claim_many([(2, OCCURRENCE), (3, OCCURRENCE)], "node-b") == {(3, OCCURRENCE)}


def test_a_claim_another_node_holds_stays_lost_when_resent(
        db: HubDatabase, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ScheduleStore(db)
    assert store.claim(1, OCCURRENCE, "node-b")
    fault = _lose_answer(db, kind, monkeypatch, _is_claim)
    assert store.claim_many([(1, OCCURRENCE), (2, OCCURRENCE)], "node-a") == {(2, OCCURRENCE)}
    assert len(fault.sent) == 2
    assert store.claimed_by(1, OCCURRENCE) == "node-b"


def test_a_claim_lost_twice_is_store_unavailable(
        db: HubDatabase, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ScheduleStore(db)
    store.ensure_schema()
    fault = _lose_answer(db, kind, monkeypatch, _is_claim, times=5)
    with pytest.raises(StoreUnavailable):
        store.claim_many([(1, OCCURRENCE)], "node-a")
    assert len(fault.sent) == 2                          # sent again once, not more
    monkeypatch.undo()
    assert store.claimed_by(1, OCCURRENCE) == "node-a"


def test_a_lease_whose_answer_was_lost_is_still_taken(
        db: HubDatabase, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ScheduleStore(db)
    store.ensure_schema()
    fault = _lose_answer(db, kind, monkeypatch,
                         lambda sql: sql.startswith(("INSERT", "UPDATE")) and "Lease" in sql)
    until = store.clock() + 60
    assert store.take_leases([1, 2], "node-a", until) == {1, 2}
    assert fault.sent
    monkeypatch.undo()
    assert store.lease_holder(1) == "node-a" and store.lease_holder(2) == "node-a"
    assert store.take_leases([1, 2], "node-b", until) == set()


def test_a_rate_limit_hit_whose_answer_was_lost_counts_once(
        db: HubDatabase, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    limits = LimitsStore(db)
    limits.hit("warm-up", 1000.0, 60.0, 5, 10)           # the table made, outside the fault
    fault = _lose_answer(db, kind, monkeypatch,
                         lambda sql: sql.startswith((f"INSERT INTO {WINDOW_TABLE}",
                                                     f"INSERT INTO {HIT_TABLE}")))
    with pytest.raises(StoreUnavailable):
        limits.hit("address", 1000.0, 60.0, 5, 10)
    assert len(fault.sent) == 1                          # not sent again
    monkeypatch.undo()
    # It landed (one statement in autocommit), and counted once.
    if db.dialect.name == "postgresql":
        counted = db.read(f"SELECT Hits[1], array_length(Hits, 1) FROM {WINDOW_TABLE} "
                          "WHERE Counter = ?", ["address"])
        assert counted == [(1, 1)]
    else:
        counted = db.read(f"SELECT SUM(Hits) FROM {HIT_TABLE} WHERE Counter = ?", ["address"])
        assert counted[0][0] == 1
    assert limits.hit("address", 1001.0, 60.0, 5, 10) == 0.0


def test_write_returning_is_not_sent_again(
        db: HubDatabase, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    db.write("CREATE TABLE notes (id INTEGER PRIMARY KEY, body VARCHAR(40))")
    fault = _lose_answer(db, kind, monkeypatch, lambda sql: sql.startswith("INSERT"))
    with pytest.raises(StoreUnavailable):
        db.write_returning("INSERT INTO notes (id, body) VALUES (?, ?) RETURNING id", [1, "x"])
    assert len(fault.sent) == 1
    monkeypatch.undo()
    assert db.read("SELECT id, body FROM notes") == [(1, "x")]


@pytest.mark.parametrize("sql", [
    "INSERT INTO notes (id) VALUES (1) RETURNING id",
    "  update notes SET body = 'y' RETURNING id",
    "DELETE FROM notes RETURNING id",
    "WITH bump AS (INSERT INTO notes (id) VALUES (2) RETURNING id) SELECT id FROM bump",
])
def test_a_read_refuses_a_statement_that_changes_rows(tmp_path: Path, sql: str) -> None:
    db = open_hub_database(f"sqlite:///{tmp_path / 'hub.db'}")
    try:
        db.write("CREATE TABLE notes (id INTEGER PRIMARY KEY, body VARCHAR(40))")
        with pytest.raises(InternalError):
            db.read(sql)
        assert db.read("SELECT COUNT(*) FROM notes") == [(0,)]
        assert db.write_returning("INSERT INTO notes (id) VALUES (3) RETURNING id") == [(3,)]
    finally:
        db.close()
