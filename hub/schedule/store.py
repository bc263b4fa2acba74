"""Schedules in the hub database, shared by every node of a cluster.

``IQXNetWebJobSchedule`` holds one row per schedule; ``IQXNetWebJobScheduleClaim``
one row per occurrence some node took. Its key ``(ScheduleID, Occurrence)`` is what
makes an occurrence fire once per cluster: every node that finds it due INSERTs the
claim and only the node whose INSERT lands runs it.

* Nothing is cached: every call reads or writes the tables.
* ``NextRun`` only ever moves forward when runs record it, so a slow run finishing
  late cannot pull it back behind a newer one. Create, switching on, and a new cron
  or zone set it afresh to the first occurrence from now: the occurrences before
  were not "missed by the hub", the schedule did not ask for them. A row without
  one (written by another tool) starts from whenever a scheduler first reads it.
* Switching a schedule off clears its pending retry.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from decimal import Decimal

from hub.schedule.model import Schedule, ScheduleInput
from hub.schedule.timing import cached_cron, next_after
from hub.store.dialects import Dialect
from hub.store.hubdb import Conflict, HubDatabase, Row, Tx
from shared.errors import NotFound

__all__ = ["CLAIM_TABLE", "SCHEDULE_TABLE", "ScheduleStore"]

SCHEDULE_TABLE = "IQXNetWebJobSchedule"
CLAIM_TABLE = "IQXNetWebJobScheduleClaim"

_COLUMNS = ("ID, Name, Cron, JobName, Params, Enabled, Timezone, CatchUp, Overlap, "
            "MaxRetries, LastRun, NextRun, LastStatus, RetryAt, RetryAttempt, UpdatedAt, "
            "UpdatedBy")
_SELECT = f"SELECT {_COLUMNS} FROM {SCHEDULE_TABLE}"
# NextRun moves forward only (see the module doc); NULL counts as "long ago".
_FORWARD = "NextRun = CASE WHEN NextRun IS NULL OR NextRun < ? THEN ? ELSE NextRun END"


def _float(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    return None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _schedule(row: Row) -> Schedule:
    (sid, name, cron, job, params, enabled, zone, catch_up, overlap, retries, last_run,
     next_run, status, retry_at, attempt, updated, by) = row
    return Schedule(
        id=int(sid), name=str(name), cron=str(cron), job_name=str(job),
        params="" if params is None else str(params), enabled=bool(int(enabled or 0)),
        timezone=str(zone), catch_up=str(catch_up), overlap=str(overlap),
        max_retries=int(retries or 0), last_run=_float(last_run), next_run=_float(next_run),
        last_status=_text(status), retry_at=_float(retry_at), retry_attempt=int(attempt or 0),
        updated=_float(updated) or 0.0, updated_by=_text(by))


class ScheduleStore:
    def __init__(self, db: HubDatabase, *, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock

    def ensure_schema(self) -> None:
        """Create the tables on first use (each node may; ``IF NOT EXISTS``)."""
        self.db.ensure_schema_once(SCHEDULE_TABLE, _schedule_tables)

    # -- reading ------------------------------------------------------------------

    def list_schedules(self, enabled_only: bool = False) -> list[Schedule]:
        self.ensure_schema()
        where = " WHERE Enabled = 1" if enabled_only else ""
        return [_schedule(r) for r in self.db.read(f"{_SELECT}{where} ORDER BY ID")]

    def get(self, schedule_id: int) -> Schedule | None:
        self.ensure_schema()
        row = self.db.read_one(f"{_SELECT} WHERE ID = ?", (schedule_id,))
        return _schedule(row) if row else None

    def get_many(self, ids: Sequence[int]) -> dict[int, Schedule]:
        """The schedules among ``ids`` that exist, by id (one query per 200)."""
        self.ensure_schema()
        found: dict[int, Schedule] = {}
        for at in range(0, len(ids), 200):
            chunk = list(ids[at:at + 200])
            marks = ", ".join("?" * len(chunk))
            for row in self.db.read(f"{_SELECT} WHERE ID IN ({marks})", chunk):
                found[int(row[0])] = _schedule(row)
        return found

    # -- writing ------------------------------------------------------------------

    def create(self, inp: ScheduleInput, by: str | None = None) -> Schedule:
        self.ensure_schema()
        new_id = self.db.insert(
            f"INSERT INTO {SCHEDULE_TABLE} (Name, Cron, JobName, Params, Enabled, Timezone, "
            "CatchUp, Overlap, MaxRetries, NextRun, RetryAttempt, UpdatedAt, UpdatedBy) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
            (inp.name, inp.cron, inp.job_name, inp.params, int(inp.enabled), inp.timezone,
             inp.catch_up, inp.overlap, inp.max_retries, self._first_run(inp), self.clock(),
             by))
        made = self.get(new_id)
        if made is None:  # deleted by another node in between: say so as for any id
            raise NotFound(f"Schedule {new_id} was deleted meanwhile")
        return made

    def update(self, schedule_id: int, inp: ScheduleInput, by: str | None = None) -> Schedule:
        self.ensure_schema()
        with self.db.transaction() as tx:
            row = tx.read_one(f"{_SELECT} WHERE ID = ?", (schedule_id,))
            if row is None:
                raise NotFound(f"No schedule {schedule_id}")
            self._rewrite(tx, _schedule(row), inp, by)
        updated = self.get(schedule_id)
        if updated is None:
            raise NotFound(f"No schedule {schedule_id}")
        return updated

    def _first_run(self, inp: ScheduleInput) -> float:
        return next_after(cached_cron(inp.cron, inp.timezone), self.clock())

    def _rewrite(self, tx: Tx, old: Schedule, inp: ScheduleInput, by: str | None) -> None:
        retimed = (inp.cron != old.cron or inp.timezone != old.timezone
                   or (inp.enabled and not old.enabled))
        next_run = self._first_run(inp) if retimed else old.next_run
        keep_retry = inp.enabled and inp.cron == old.cron
        tx.write(f"UPDATE {SCHEDULE_TABLE} SET Name = ?, Cron = ?, JobName = ?, Params = ?, "
                 "Enabled = ?, Timezone = ?, CatchUp = ?, Overlap = ?, MaxRetries = ?, "
                 "NextRun = ?, RetryAt = ?, RetryAttempt = ?, UpdatedAt = ?, UpdatedBy = ? "
                 "WHERE ID = ?",
                 (inp.name, inp.cron, inp.job_name, inp.params, int(inp.enabled), inp.timezone,
                  inp.catch_up, inp.overlap, inp.max_retries, next_run,
                  old.retry_at if keep_retry else None,
                  old.retry_attempt if keep_retry else 0, self.clock(), by, old.id))

    def delete(self, schedule_id: int) -> bool:
        self.ensure_schema()
        with self.db.transaction() as tx:
            tx.write(f"DELETE FROM {CLAIM_TABLE} WHERE ScheduleID = ?", (schedule_id,))
            return tx.write(f"DELETE FROM {SCHEDULE_TABLE} WHERE ID = ?", (schedule_id,)) > 0

    def record_fire(self, schedule_id: int, last_run: float, next_run: float | None,
                    last_status: str) -> None:
        self.ensure_schema()
        if next_run is None:
            self.db.write(f"UPDATE {SCHEDULE_TABLE} SET LastRun = ?, LastStatus = ? "
                          "WHERE ID = ?", (last_run, last_status, schedule_id))
            return
        self.db.write(f"UPDATE {SCHEDULE_TABLE} SET LastRun = ?, LastStatus = ?, {_FORWARD} "
                      "WHERE ID = ?", (last_run, last_status, next_run, next_run, schedule_id))

    def set_next_run(self, schedule_id: int, next_run: float) -> None:
        """Move ``NextRun`` forward to ``next_run`` (never back)."""
        self.ensure_schema()
        self.db.write(f"UPDATE {SCHEDULE_TABLE} SET {_FORWARD} WHERE ID = ?",
                      (next_run, next_run, schedule_id))

    def set_retry(self, schedule_id: int, retry_at: float | None, attempt: int) -> None:
        self.ensure_schema()
        self.db.write(f"UPDATE {SCHEDULE_TABLE} SET RetryAt = ?, RetryAttempt = ? WHERE ID = ?",
                      (retry_at, attempt if retry_at is not None else 0, schedule_id))

    # -- claims ---------------------------------------------------------------------

    def claim(self, schedule_id: int, occurrence: str, node: str) -> bool:
        """Take ``occurrence`` for ``node``; False when another node (or this one) has it."""
        self.ensure_schema()
        try:
            self.db.write(f"INSERT INTO {CLAIM_TABLE} (ScheduleID, Occurrence, Node, ClaimedAt) "
                          "VALUES (?, ?, ?, ?)", (schedule_id, occurrence, node, self.clock()))
        except Conflict:
            return False
        return True

    def claim_many(self, items: Sequence[tuple[int, str]], node: str) -> set[tuple[int, str]]:
        """Claim several ``(schedule id, occurrence)`` at once; the ones this node got.
        One transaction when none is taken yet (one commit for all); if any is, it is
        rolled back and each is claimed on its own, so the unique key still decides."""
        if len(items) == 1:
            return set(items) if self.claim(items[0][0], items[0][1], node) else set()
        self.ensure_schema()
        try:
            with self.db.transaction() as tx:
                now = self.clock()
                # One order on every node: two nodes inserting the same keys in
                # different orders would deadlock on PostgreSQL and MariaDB.
                for schedule_id, occurrence in sorted(items):
                    tx.write(f"INSERT INTO {CLAIM_TABLE} (ScheduleID, Occurrence, Node, "
                             "ClaimedAt) VALUES (?, ?, ?, ?)",
                             (schedule_id, occurrence, node, now))
            return set(items)
        except Conflict:
            return {(sid, occ) for sid, occ in items if self.claim(sid, occ, node)}

    def claimed_by(self, schedule_id: int, occurrence: str) -> str | None:
        """The node that took ``occurrence``, if any (for tests and diagnostics)."""
        self.ensure_schema()
        row = self.db.read_one(f"SELECT Node FROM {CLAIM_TABLE} WHERE ScheduleID = ? "
                               "AND Occurrence = ?", (schedule_id, occurrence))
        return None if row is None else str(row[0])

    def prune_claims(self, older_than: float) -> int:
        """Forget claims taken before ``older_than``; how many went."""
        self.ensure_schema()
        return self.db.write(f"DELETE FROM {CLAIM_TABLE} WHERE ClaimedAt < ?", (older_than,))


def _schedule_tables(d: Dialect) -> list[str]:
    return [
        d.create_table(SCHEDULE_TABLE, """{id},
            Name {varchar}(100) NOT NULL,
            Cron {varchar}(200) NOT NULL,
            JobName {varchar}(100) NOT NULL,
            Params {text} NOT NULL,
            Enabled INTEGER NOT NULL,
            Timezone {varchar}(64) NOT NULL,
            CatchUp {varchar}(8) NOT NULL,
            Overlap {varchar}(8) NOT NULL,
            MaxRetries INTEGER NOT NULL,
            LastRun {real},
            NextRun {real},
            LastStatus {varchar}(32),
            RetryAt {real},
            RetryAttempt INTEGER NOT NULL,
            UpdatedAt {real} NOT NULL,
            UpdatedBy {varchar}(100)"""),
        d.create_table(CLAIM_TABLE, """ScheduleID {bigint} NOT NULL,
            Occurrence {varchar}(64) NOT NULL,
            Node {varchar}(100) NOT NULL,
            ClaimedAt {real} NOT NULL,
            PRIMARY KEY (ScheduleID, Occurrence)"""),
        d.create_index(f"{CLAIM_TABLE}_At", CLAIM_TABLE, "ClaimedAt"),
    ]
