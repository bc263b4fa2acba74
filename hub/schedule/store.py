"""Schedules in the hub database, shared by every node of a cluster.

``IQXNetWebJobSchedule`` holds one row per schedule; ``IQXNetWebJobScheduleClaim``
one row per occurrence some node took. Its key ``(ScheduleID, Occurrence)`` is what
makes an occurrence fire once per cluster: every node that finds it due INSERTs the
claim and only the node whose INSERT adds a row runs it. A lost claim is an INSERT
that adds nothing (the conflict is taken, not raised), never an error: no log line
on the server, no pooled connection dropped. A claim whose answer was lost is sent
again and still won by the same attempt (see ``_claim_chunk``). Claims are single
statements (no transaction held across round trips), so a node stopped mid-claim
holds no lock that others would wait on.

``NextRun`` is the watermark of the schedule: every occurrence before it is
accounted for (claimed, run or reported missed). The node that claims the
occurrence at the watermark moves it on, and whoever finds it left behind by more
than a grace moves it past the gap with a compare-and-set (``WHERE NextRun = ?``):
the row count decides which single node reports the gap. Create, switching on, and
a new cron or zone set it afresh to the first occurrence from now: the occurrences
before were not missed, the schedule did not ask for them. A row without one
(written by another tool) starts from whenever a scheduler first reads it.

The run rows (``IQXNetWebJobScheduleRun``) and the leases of ``overlap: skip``
(``IQXNetWebJobScheduleLease``) are :mod:`hub.schedule.leases`.

* Nothing is cached: every call reads or writes the tables.
* Switching a schedule off clears its pending retry.
* A change of a schedule (create, update, delete, a retry set) is announced on
  ``NOTIFY_CHANNEL`` (the schedule id) where the database can notify.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from hub.schedule.leases import (
    LEASE_TABLE,
    RETURNING,
    RUN_TABLE,
    OpenRun,
    RunsAndLeases,
    chunks,
    marks,
)
from hub.schedule.model import Schedule, ScheduleInput
from hub.schedule.timing import cached_cron, next_after
from hub.store.dialects import Dialect
from hub.store.hubdb import Conflict, HubDatabase, Row, Tx
from shared.errors import NotFound, WebJobsError

__all__ = ["CLAIM_TABLE", "LEASE_TABLE", "NOTIFY_CHANNEL", "RUN_TABLE", "SCHEDULE_TABLE",
           "OpenRun", "ScheduleStore"]

log = logging.getLogger("webhub.schedule")

SCHEDULE_TABLE = "IQXNetWebJobSchedule"
CLAIM_TABLE = "IQXNetWebJobScheduleClaim"
NOTIFY_CHANNEL = "webjobs_schedules"

_COLUMNS = ("ID, Name, Cron, JobName, Params, Enabled, Timezone, CatchUp, Overlap, "
            "MaxRetries, LastRun, NextRun, LastStatus, RetryAt, RetryAttempt, UpdatedAt, "
            "UpdatedBy")
_SELECT = f"SELECT {_COLUMNS} FROM {SCHEDULE_TABLE}"
_CLAIM = f"INSERT INTO {CLAIM_TABLE} (ScheduleID, Occurrence, Node, ClaimedAt) VALUES "


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


class ScheduleStore(RunsAndLeases):
    def __init__(self, db: HubDatabase, *, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock
        self._stamp_lock = threading.Lock()
        self._last_stamp = -math.inf

    def ensure_schema(self) -> None:
        """Create the tables on first use (each node may; ``IF NOT EXISTS``)."""
        self.db.ensure_schema_once(SCHEDULE_TABLE, _schedule_tables)

    @property
    def notifies(self) -> bool:
        """Whether changes reach other nodes as notifications (else they poll)."""
        return self.db.supports_notify

    def _announce(self, schedule_id: int) -> None:
        """Tell the other nodes a schedule changed (inside a transaction: at its commit).
        Outside one the change is saved already: a lost notification is made up by the
        listeners' resync, so it is not the caller's failure."""
        if not self.notifies:
            return
        try:
            self.db.notify(NOTIFY_CHANNEL, str(schedule_id))
        except WebJobsError as exc:
            log.info("Schedule %d changed, but the other nodes could not be told at once "
                     "(they will be when they resync): %s", schedule_id, exc)

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
        for chunk in chunks(list(ids)):
            marks = ", ".join("?" * len(chunk))
            for row in self.db.read(f"{_SELECT} WHERE ID IN ({marks})", list(chunk)):
                found[int(row[0])] = _schedule(row)
        return found

    def behind(self, cutoff: float) -> list[tuple[int, float]]:
        """``(id, NextRun)`` of the enabled schedules whose watermark is at or before
        ``cutoff``: their occurrences from there on are not all accounted for."""
        self.ensure_schema()
        rows = self.db.read(f"SELECT ID, NextRun FROM {SCHEDULE_TABLE} WHERE Enabled = 1 "
                            "AND NextRun <= ? ORDER BY ID", (cutoff,))
        return [(int(sid), float(at)) for sid, at in rows]

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
        self._announce(new_id)
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
            self._announce(schedule_id)
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
            for table in (CLAIM_TABLE, RUN_TABLE, LEASE_TABLE):
                tx.write(f"DELETE FROM {table} WHERE ScheduleID = ?", (schedule_id,))
            gone = tx.write(f"DELETE FROM {SCHEDULE_TABLE} WHERE ID = ?", (schedule_id,)) > 0
            if gone:
                self._announce(schedule_id)
        return gone

    def record_fire(self, schedule_id: int, last_run: float, last_status: str) -> None:
        self.ensure_schema()
        self.db.write(f"UPDATE {SCHEDULE_TABLE} SET LastRun = ?, LastStatus = ? WHERE ID = ?",
                      (last_run, last_status, schedule_id))

    def set_retry(self, schedule_id: int, retry_at: float | None, attempt: int) -> None:
        self.ensure_schema()
        self.db.write(f"UPDATE {SCHEDULE_TABLE} SET RetryAt = ?, RetryAttempt = ? WHERE ID = ?",
                      (retry_at, attempt if retry_at is not None else 0, schedule_id))
        if retry_at is not None:
            self._announce(schedule_id)   # any node may run it, should this one stop

    # -- the watermark ----------------------------------------------------------------

    def advance(self, moves: Sequence[tuple[int, float, float]]) -> int:
        """For each ``(id, occurrence, following)`` just claimed: where the watermark is
        at that occurrence (or unset), move it to ``following``. One statement per 200
        (a CASE), so nothing is held between round trips; how many moved."""
        self.ensure_schema()
        moved = 0
        for chunk in chunks(list(moves)):
            cases = " ".join("WHEN ? THEN ?" for _ in chunk)
            # Typed: a driver that binds text (psqlODBC) would compare a number to it.
            typed = " ".join(f"WHEN ? THEN CAST(? AS {self.db.dialect.real})" for _ in chunk)
            ids = ", ".join("?" * len(chunk))
            params: list[Any] = [v for sid, _, nxt in chunk for v in (sid, nxt)]
            params += [sid for sid, _, _ in chunk]
            params += [v for sid, t, _ in chunk for v in (sid, t)]
            # ID IN (...) first: the key finds the rows, the CASE checks each one.
            moved += self.db.write(f"UPDATE {SCHEDULE_TABLE} SET NextRun = CASE ID {cases} "
                                   f"ELSE NextRun END WHERE ID IN ({ids}) AND (NextRun IS "
                                   f"NULL OR NextRun = CASE ID {typed} END)", params)
        return moved

    def move_watermark(self, schedule_id: int, seen: float, to: float) -> bool:
        """Compare-and-set: ``NextRun`` from ``seen`` to ``to``; True for the one caller
        whose update landed (it reports what lies between)."""
        self.ensure_schema()
        return self.db.write(f"UPDATE {SCHEDULE_TABLE} SET NextRun = ? WHERE ID = ? AND "
                             "NextRun = ?", (to, schedule_id, seen)) > 0

    def set_next_run(self, schedule_id: int, next_run: float) -> None:
        """Set ``NextRun`` outright (tools and tests; the scheduler compares and sets)."""
        self.ensure_schema()
        self.db.write(f"UPDATE {SCHEDULE_TABLE} SET NextRun = ? WHERE ID = ?",
                      (next_run, schedule_id))

    # -- claims ---------------------------------------------------------------------

    def claim(self, schedule_id: int, occurrence: str, node: str) -> bool:
        """Take ``occurrence`` for ``node``; False when another node (or this one) has it."""
        return bool(self.claim_many([(schedule_id, occurrence)], node))

    def claim_many(self, items: Sequence[tuple[int, str]], node: str) -> set[tuple[int, str]]:
        """Claim several ``(schedule id, occurrence)`` at once; the ones this node got.
        One statement per 200 (its own commit): the rows it added are the claims won."""
        self.ensure_schema()
        now = self._claim_stamp()
        ordered = sorted(set(items))   # one order on every node: no lock cycles
        if self.db.dialect.name not in RETURNING:
            return {item for item in ordered if self._claim_alone(item, node, now)}
        won: set[tuple[int, str]] = set()
        for chunk in chunks(ordered):
            won |= self._claim_chunk(chunk, node, now)
        return won

    def _claim_stamp(self) -> float:
        """The ClaimedAt of one claim attempt: the clock, made later than the last
        attempt's when it has not moved on (a coarse or a test clock), so that a row
        of this attempt is told from one of an earlier attempt of the same node."""
        with self._stamp_lock:
            stamp = self.clock()
            if self._last_stamp - 1.0 < stamp <= self._last_stamp:
                stamp = math.nextafter(self._last_stamp, math.inf)
            self._last_stamp = stamp
            return stamp

    def _claim_chunk(self, chunk: Sequence[tuple[int, str]], node: str,
                     now: float) -> set[tuple[int, str]]:
        """One claim statement; the claims it won. Its answer may be lost after it
        committed, and sent again a plain insert-ignore would find its own rows and
        say another node won them: so a row of this very attempt (this node, this
        ClaimedAt) counts as won again, and the statement may be resent. A later
        attempt of the same node still finds the occurrence taken (its ClaimedAt
        differs: :meth:`_claim_stamp`); it must, for this node may have run it."""
        values = f"{_CLAIM}{marks(len(chunk), 4)}"
        params = [v for sid, occ in chunk for v in (sid, occ, node, now)]
        if self.db.dialect.name == "mariadb":
            # Its upsert returns every row it met, one already there as it is.
            rows = self.db.write_returning(
                f"{values} ON DUPLICATE KEY UPDATE Node = Node "
                "RETURNING ScheduleID, Occurrence, Node, ClaimedAt", params, resend=True)
            return {(int(sid), str(occ)) for sid, occ, by, at in rows
                    if str(by) == node and float(at) == now}
        rows = self.db.write_returning(
            f"{values} ON CONFLICT (ScheduleID, Occurrence) DO UPDATE SET Node = excluded.Node "
            f"WHERE {CLAIM_TABLE}.Node = excluded.Node AND "
            f"{CLAIM_TABLE}.ClaimedAt = excluded.ClaimedAt RETURNING ScheduleID, Occurrence",
            params, resend=True)
        return {(int(sid), str(occ)) for sid, occ in rows}

    def _claim_alone(self, item: tuple[int, str], node: str, now: float) -> bool:
        # SQL Server has no statement form of insert-ignore (see Dialect.insert_ignore).
        try:
            sql = self.db.dialect.insert_ignore(f"{_CLAIM}(?, ?, ?, ?)")
            return self.db.write(sql, (item[0], item[1], node, now)) > 0
        except Conflict:
            return False

    def claimed_by(self, schedule_id: int, occurrence: str) -> str | None:
        """The node that took ``occurrence``, if any (for tests and diagnostics)."""
        self.ensure_schema()
        row = self.db.read_one(f"SELECT Node FROM {CLAIM_TABLE} WHERE ScheduleID = ? "
                               "AND Occurrence = ?", (schedule_id, occurrence))
        return None if row is None else str(row[0])

    def claimed_between(self, schedule_id: int, first: str, last: str) -> set[str]:
        """The occurrence keys claimed from ``first`` to ``last`` (keys are UTC times
        in one fixed format, so they sort as the times do); retries left out."""
        self.ensure_schema()
        rows = self.db.read(f"SELECT Occurrence FROM {CLAIM_TABLE} WHERE ScheduleID = ? AND "
                            "Occurrence >= ? AND Occurrence <= ?", (schedule_id, first, last))
        return {str(occ) for (occ,) in rows if "#" not in str(occ)}

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
        d.create_table(RUN_TABLE, """ScheduleID {bigint} NOT NULL,
            Occurrence {varchar}(64) NOT NULL,
            Node {varchar}(100) NOT NULL,
            DueAt {real} NOT NULL,
            Attempt INTEGER NOT NULL,
            Reason {varchar}(16) NOT NULL,
            JobID {varchar}(64) NOT NULL,
            StartedAt {real} NOT NULL,
            PRIMARY KEY (ScheduleID, Occurrence)"""),
        d.create_index(f"{RUN_TABLE}_Node", RUN_TABLE, "Node"),
        d.create_table(LEASE_TABLE, """ScheduleID {bigint} NOT NULL PRIMARY KEY,
            Node {varchar}(100) NOT NULL,
            Until {real} NOT NULL,
            SkipFrom {real},
            SkipCount INTEGER NOT NULL DEFAULT 0"""),
    ]
