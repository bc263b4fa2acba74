"""Request and sign-in counters in the hub database, shared by every node of a cluster.

Used when several nodes share a server database and no Redis is configured
(:mod:`hub.limiting` decides). Two tables:

* ``IQXNetWebJobLimitHit``: one row per counter and time bucket (``Bucket`` is the
  bucket's first second; its width is the caller's). A hit is one UPSERT, so
  nodes counting at once never lose an increment; a window's count is the sum of
  the buckets that reach into it, which may count up to one bucket's width more
  than the exact window: never more let through than the limit.
* ``IQXNetWebJobLimitLock``: one row per sign-in key, the end of its lock and the
  attempt that set it (so withdrawing that attempt lifts it). The row is also
  what a sign-in attempt locks (``FOR UPDATE``) so that attempts on one key are
  judged one after another on every node, as the in-memory throttle judges them.

On PostgreSQL the request rates are counted in a third table instead,
``IQXNetWebJobLimitWindow``: one row per counter holding its window's buckets as two
arrays (at most one per second of the window, whatever the limit). A hit is one
``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` sent in autocommit: the row's lock
serializes the nodes' hits on one counter, and each update is computed from the row
as the previous one left it, so the count is as exact as a lock would make it, in one
statement and no transaction round trips. Those windows are timed by the database
server's clock, so nodes whose clocks differ still count one window. A hit may carry
other writes in its statement (:meth:`LimitsStore.hit_with`): a public run's row in the
cluster's registry, written only when the hit was counted.

Counter names are fixed-length digests (:func:`hub.limiting.counter_key`), never
raw addresses or user names.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from hub.store.dialects import Dialect
from hub.store.hubdb import HubDatabase, Row, Tx

__all__ = ["ADMITTED", "DATABASE_CLOCK", "HIT_TABLE", "LOCK_TABLE", "WINDOW_TABLE", "CarryingHit",
           "LimitsStore", "SignInCounts", "Step", "carries_writes", "limit_tables",
           "pg_window_hit", "pg_window_hit_with", "window_tables"]

HIT_TABLE = "IQXNetWebJobLimitHit"
LOCK_TABLE = "IQXNetWebJobLimitLock"
WINDOW_TABLE = "IQXNetWebJobLimitWindow"


def limit_tables(dialect: Dialect) -> list[str]:
    return [
        dialect.create_table(HIT_TABLE, "Counter {varchar}(80) NOT NULL, "
                             "Bucket {bigint} NOT NULL, Hits INTEGER NOT NULL, "
                             "PRIMARY KEY (Counter, Bucket)"),
        dialect.create_index(f"{HIT_TABLE}_Bucket", HIT_TABLE, "Bucket"),
        dialect.create_table(LOCK_TABLE, "Counter {varchar}(80) NOT NULL PRIMARY KEY, "
                             "LockedUntil {real} NOT NULL, LockedBy {bigint} NOT NULL"),
    ]


def window_tables(dialect: Dialect) -> list[str]:
    """The per-counter windows of the request rates: PostgreSQL only (arrays)."""
    if dialect.name != "postgresql":
        return []
    return [
        dialect.create_table(WINDOW_TABLE, "Counter {varchar}(80) NOT NULL PRIMARY KEY, "
                             "Buckets BIGINT[] NOT NULL, Hits INTEGER[] NOT NULL, "
                             "Admitted BOOLEAN NOT NULL, Touched {bigint} NOT NULL"),
        dialect.create_index(f"{WINDOW_TABLE}_Touched", WINDOW_TABLE, "Touched"),
    ]


def _upsert(dialect: Dialect) -> str:
    """Add ``Hits`` to a bucket, making it if it is new, in one atomic statement."""
    insert = f"INSERT INTO {HIT_TABLE} (Counter, Bucket, Hits) VALUES (?, ?, ?)"
    if dialect.name == "mariadb":
        return f"{insert} ON DUPLICATE KEY UPDATE Hits = Hits + VALUES(Hits)"
    if dialect.name == "mssql":
        return (f"MERGE {HIT_TABLE} WITH (HOLDLOCK) AS t USING (SELECT ? AS Counter, "
                "? AS Bucket, ? AS Hits) AS s ON t.Counter = s.Counter AND t.Bucket = s.Bucket "
                "WHEN MATCHED THEN UPDATE SET Hits = t.Hits + s.Hits "
                "WHEN NOT MATCHED THEN INSERT (Counter, Bucket, Hits) "
                "VALUES (s.Counter, s.Bucket, s.Hits);")
    return (f"{insert} ON CONFLICT (Counter, Bucket) DO UPDATE "
            f"SET Hits = {HIT_TABLE}.Hits + excluded.Hits")


def _for_update(dialect: Dialect, sql: str) -> str:
    if dialect.name == "mssql":
        return sql.replace(f"FROM {LOCK_TABLE}", f"FROM {LOCK_TABLE} WITH (UPDLOCK, ROWLOCK)")
    if dialect.name == "sqlite":  # BEGIN IMMEDIATE already holds the write lock
        return sql
    return f"{sql} FOR UPDATE"


_SUM = f"SELECT SUM(Hits) FROM {HIT_TABLE} WHERE Counter = ? AND Bucket > ?"


# PostgreSQL counts the request rates by the server's clock, not the nodes': a node
# whose clock ran ahead would otherwise drop the others' buckets from the shared row as
# out of its window. clock_timestamp() (not now(), the statement's start) is read in
# the DO UPDATE after the row's lock is taken, so the hits on one counter are timed in
# the order they are counted.
DATABASE_CLOCK = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"


def _pg_moment(clock: str) -> str:
    """The request's bucket and the last bucket out of its window, from one reading of
    ``clock``. Parameters: width, width, window + width."""
    return ("(SELECT CAST(floor(n.s / CAST(? AS BIGINT)) AS BIGINT) * CAST(? AS BIGINT) "
            "AS bucket, CAST(floor(n.s - CAST(? AS DOUBLE PRECISION)) AS BIGINT) AS since "
            f"FROM (SELECT {clock} AS s) AS n) AS c")


def pg_window_hit(clock: str) -> str:
    """One request counted in its counter's row. The buckets still in the window are
    kept (ascending); when they hold fewer hits than the limit, the request's bucket
    gains one, else nothing is counted. Returns whether it was counted, the oldest
    bucket kept (when the window frees a place again) and the clock then.
    Parameters: counter, width, width, window + width, limit, width, width,
    window + width."""
    return (
        f"INSERT INTO {WINDOW_TABLE} AS t (Counter, Buckets, Hits, Admitted, Touched) "
        "SELECT CAST(? AS VARCHAR(80)), ARRAY[c.bucket], ARRAY[1], TRUE, c.bucket "
        f"FROM {_pg_moment(clock)} "
        "ON CONFLICT (Counter) DO UPDATE SET (Buckets, Hits, Admitted, Touched) = ("
        "SELECT COALESCE(array_agg(k.b ORDER BY k.b), ARRAY[]::BIGINT[]), "
        "COALESCE(array_agg(k.h ORDER BY k.b), ARRAY[]::INTEGER[]), s.admit, "
        "GREATEST(t.Touched, s.bucket) "
        "FROM (SELECT c.bucket, c.since, COALESCE((SELECT SUM(o.h) "
        "FROM unnest(t.Buckets, t.Hits) AS o(b, h) WHERE o.b > c.since), 0) "
        f"< CAST(? AS BIGINT) AS admit FROM {_pg_moment(clock)}) AS s "
        "LEFT JOIN LATERAL ("
        "SELECT o.b, o.h + CASE WHEN s.admit AND o.b = s.bucket THEN 1 ELSE 0 END AS h "
        "FROM unnest(t.Buckets, t.Hits) AS o(b, h) WHERE o.b > s.since "
        "UNION ALL SELECT s.bucket, 1 "
        "WHERE s.admit AND NOT (s.bucket = ANY (t.Buckets))"
        ") AS k ON TRUE GROUP BY s.admit, s.bucket) "
        f"RETURNING CASE WHEN Admitted THEN 1 ELSE 0 END, Buckets[1], {clock}")


# A write carried by a hit: its SQL (one data-modifying statement, PostgreSQL) and
# parameters. It may read ADMITTED: one row when the hit was counted, none when not.
Step = tuple[str, Sequence[object]]
ADMITTED = "admitted"


def carries_writes(db: HubDatabase) -> bool:
    """Whether one statement on ``db`` may carry several writes (PostgreSQL's
    data-modifying common table expressions): a hit's and a run's row, ended rows'
    deletes with a new row."""
    return db.dialect.name == "postgresql"


class CarryingHit(Protocol):
    """A public rate-limit hit whose statement carries other writes (hub.limiting)."""

    def start(self, steps: Sequence[Step]) -> asyncio.Future[tuple[bool, float]]:
        """The statement sent: done (whether counted, the wait) once it is over."""

    async def settle(self, writing: asyncio.Future[tuple[bool, float]]) -> bool:
        """Whether the database counted it (False: counted on this node alone); refused,
        ``TooManyRequests``."""


def pg_window_hit_with(clock: str, steps: Sequence[str]) -> str:
    """:func:`pg_window_hit` and ``steps`` in one statement (each a data-modifying
    common table expression: all of them land with the hit, or none). Returns what
    the hit alone returns. Parameters: the hit's, then each step's in order."""
    carried = "".join(f", step{i} AS ({sql})" for i, sql in enumerate(steps))
    return (f"WITH hit (counted, oldest, clock) AS ({pg_window_hit(clock)}), "
            f"{ADMITTED} AS (SELECT 1 AS one FROM hit WHERE counted = 1){carried} "
            "SELECT counted, oldest, clock FROM hit")


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float, Decimal)) else 0


@dataclass(frozen=True)
class SignInCounts:
    """What a sign-in attempt found: seconds until the longest lock on its keys ends
    (0: none locked, and then the attempt was counted), and each key's failures in
    the window before this one."""

    locked_for: float
    before: tuple[int, ...]


class LimitsStore:
    """The counters. Every method runs its own statements (blocking: call it in a
    thread); a database that cannot be reached raises ``StoreUnavailable``.
    ``clock_sql`` is the SQL expression (seconds since the epoch) that times the
    PostgreSQL rate windows: the server's clock unless a test sets its own."""

    def __init__(self, db: HubDatabase, *, clock_sql: str = DATABASE_CLOCK) -> None:
        self.db = db
        self.clock_sql = clock_sql
        self._window_hit = pg_window_hit(clock_sql)

    def _ready(self) -> Dialect:
        self.db.ensure_schema_once(HIT_TABLE, limit_tables)
        self.db.ensure_schema_once(WINDOW_TABLE, window_tables)
        return self.db.dialect

    # -- request rate -----------------------------------------------------------

    def hit(self, counter: str, now: float, window: float, width: int, limit: int) -> float:
        """Count one request, unless that makes more than ``limit`` in the window:
        then take it back and say how many seconds until the oldest counted bucket
        leaves the window. 0 means the request was counted. ``now`` is this node's
        clock; on PostgreSQL the database's clock is used instead."""
        dialect = self._ready()
        if dialect.name == "postgresql":
            return self._hit_window(counter, width, window, limit)
        bucket = _bucket(now, width)
        since = bucket_floor(now, window, width)
        self.db.write(_upsert(dialect), [counter, bucket, 1])
        row = self.db.read_one(_SUM, [counter, since])
        total = _int(row[0]) if row else 0
        if total <= limit:
            return 0.0
        self.db.write(_upsert(dialect), [counter, bucket, -1])
        return self._retry_in(self.db, counter, now, bucket, since, width, window)

    def _hit_window(self, counter: str, width: int, window: float, limit: int) -> float:
        """PostgreSQL: the request counted (or not) in its counter's row, one statement.
        Never resent: a hit that landed before its answer was lost would count twice."""
        moment = [width, width, window + width]
        rows = self.db.write_returning(self._window_hit, [counter, *moment, limit, *moment])
        return self._window_wait(rows, width, window)

    def hit_with(self, counter: str, width: int, window: float, limit: int,
                 steps: Sequence[Step]) -> tuple[bool, float]:
        """PostgreSQL: :meth:`hit` and ``steps`` in one statement (see
        :func:`pg_window_hit_with`): whether the hit was counted (and the steps reading
        ``ADMITTED`` made their writes), and :meth:`hit`'s answer. Never resent."""
        assert carries_writes(self.db), "a hit carries other writes on PostgreSQL only"
        self._ready()
        moment = [width, width, window + width]
        sql = pg_window_hit_with(self.clock_sql, [step for step, _ in steps])
        rows = self.db.write_returning(sql, [counter, *moment, limit, *moment,
                                             *(value for _, values in steps for value in values)])
        counted = bool(rows) and bool(_int(rows[0][0]))
        return counted, self._window_wait(rows, width, window)

    @staticmethod
    def _window_wait(rows: Sequence[Row], width: int, window: float) -> float:
        if not rows or _int(rows[0][0]):
            return 0.0
        oldest, now = rows[0][1], float(rows[0][2])
        first = _int(oldest) if oldest is not None else _bucket(now, width)
        return max(0.0, first + width + window - now)

    @staticmethod
    def _retry_in(db: HubDatabase | Tx, counter: str, now: float, bucket: int, since: int,
                  width: int, window: float) -> float:
        oldest = db.read_one(f"SELECT MIN(Bucket) FROM {HIT_TABLE} WHERE Counter = ? "
                             "AND Bucket > ? AND Hits > 0", [counter, since])
        first = _int(oldest[0]) if oldest and oldest[0] is not None else bucket
        return max(0.0, first + width + window - now)

    # -- sign-in failures -------------------------------------------------------

    def sign_in_attempt(self, counters: Sequence[str], lock_after: Sequence[int], now: float,
                        window: float, width: int, lock: tuple[float, int]) -> SignInCounts:
        """If none of ``counters`` is locked, count one failure on each, and lock those
        that reach their ``lock_after`` (> 0) for ``lock`` = (seconds, attempt serial).
        Attempts on the same keys wait for each other (row locks, taken in one order)."""
        dialect = self._ready()
        ordered = sorted(set(counters))
        marks = ", ".join("?" for _ in ordered)
        # The rows to lock, made before the transaction: an INSERT that finds its row
        # there takes a shared lock on it (InnoDB), and two such holders both asking
        # FOR UPDATE would deadlock. LockedBy 0 is unlocked; LockedUntil dates the row
        # for pruning.
        rows_sql = ", ".join("(?, ?, 0)" for _ in ordered)
        self.db.write(dialect.insert_ignore(f"INSERT INTO {LOCK_TABLE} (Counter, LockedUntil, "
                                            f"LockedBy) VALUES {rows_sql}"),
                      [value for counter in ordered for value in (counter, now)])
        with self.db.transaction() as tx:
            rows = tx.read(_for_update(dialect, f"SELECT LockedUntil, LockedBy FROM {LOCK_TABLE} "
                                                f"WHERE Counter IN ({marks}) ORDER BY Counter"),
                           ordered)
            locked_for = max((float(until) - now for until, by in rows if _int(by)),
                             default=0.0)
            if locked_for > 0:
                return SignInCounts(locked_for, ())
            before = self._failures(tx, counters, now, window, width)
            for counter, count, allowed in zip(counters, before, lock_after, strict=True):
                tx.write(_upsert(dialect), [counter, _bucket(now, width), 1])
                if 0 < allowed <= count + 1:
                    tx.write(f"UPDATE {LOCK_TABLE} SET LockedUntil = ?, LockedBy = ? "
                             "WHERE Counter = ?", [now + lock[0], lock[1], counter])
        return SignInCounts(0.0, before)

    def _failures(self, tx: Tx, counters: Sequence[str], now: float, window: float,
                  width: int) -> tuple[int, ...]:
        marks = ", ".join("?" for _ in counters)
        rows = tx.read(f"SELECT Counter, SUM(Hits) FROM {HIT_TABLE} WHERE Counter IN ({marks}) "
                       "AND Bucket > ? GROUP BY Counter",
                       [*counters, bucket_floor(now, window, width)])
        found = {str(counter): _int(total) for counter, total in rows}
        return tuple(found.get(counter, 0) for counter in counters)

    def withdraw(self, counters: Sequence[str], at: float, width: int, serial: int) -> None:
        """Take back one failure counted at ``at`` from each counter, and the locks
        that attempt set."""
        with self.db.transaction() as tx:
            for counter in counters:
                tx.write(f"UPDATE {HIT_TABLE} SET Hits = Hits - 1 WHERE Counter = ? "
                         "AND Bucket = ? AND Hits > 0", [counter, _bucket(at, width)])
                tx.write(f"UPDATE {LOCK_TABLE} SET LockedUntil = 0, LockedBy = 0 "
                         "WHERE Counter = ? AND LockedBy = ?", [counter, serial])

    def clear(self, counter: str) -> None:
        """Forget a counter's failures and its lock."""
        with self.db.transaction() as tx:
            tx.write(f"DELETE FROM {HIT_TABLE} WHERE Counter = ?", [counter])
            tx.write(f"UPDATE {LOCK_TABLE} SET LockedUntil = 0, LockedBy = 0 WHERE Counter = ?",
                     [counter])

    def prune(self, now: float, keep_s: float) -> int:
        """Remove buckets older than ``keep_s`` and locks that ended that long ago;
        how many rows went. The rate windows are dated by the database's clock."""
        dialect = self._ready()
        gone = self.db.write(f"DELETE FROM {HIT_TABLE} WHERE Bucket < ?", [int(now - keep_s)])
        if dialect.name == "postgresql":
            gone += self.db.write(f"DELETE FROM {WINDOW_TABLE} WHERE Touched < "
                                  f"(SELECT CAST(floor({self.clock_sql} "
                                  "- CAST(? AS DOUBLE PRECISION)) AS BIGINT))", [keep_s])
        return gone + self.db.write(f"DELETE FROM {LOCK_TABLE} WHERE LockedUntil < ?",
                                    [now - keep_s])


def _bucket(now: float, width: int) -> int:
    return int(now // width) * width


def bucket_floor(now: float, window: float, width: int) -> int:
    """Buckets after this one reach into the window ``(now - window, now]``: a bucket
    starting at ``b`` holds hits up to ``b + width``."""
    return math.floor(now - window - width)
