"""The run rows and leases of the schedule store (see :mod:`hub.schedule.store`).

``IQXNetWebJobScheduleRun`` holds a row per claimed run while it goes on (with the
history id it will have), so the run of a node that stopped beating is found and
reported ``interrupted`` by one node (whose DELETE removes the row).
``IQXNetWebJobScheduleLease`` holds, per ``overlap: skip`` schedule, which node runs
it until when: taken by insert-or-expired-update, renewed while the run goes on; and
how many occurrences were skipped since when, so skips are one record per window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hub.store.hubdb import HubDatabase

__all__ = ["CHUNK", "LEASE_TABLE", "RETURNING", "RUN_TABLE", "OpenRun", "RunsAndLeases",
           "chunks", "marks"]

RUN_TABLE = "IQXNetWebJobScheduleRun"
LEASE_TABLE = "IQXNetWebJobScheduleLease"
CHUNK = 200                   # rows per multi-row statement (well under every bind limit)
RETURNING = ("sqlite", "postgresql", "mariadb")   # INSERT ... RETURNING


@dataclass(frozen=True)
class OpenRun:
    """A claimed run some node started and has not ended."""

    schedule_id: int
    occurrence: str               # the claim key
    node: str
    due: float
    attempt: int
    reason: str
    job_id: str


def marks(count: int, width: int) -> str:
    one = f"({', '.join('?' * width)})"
    return ", ".join([one] * count)


def chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for at in range(0, len(items), CHUNK):
        yield items[at:at + CHUNK]


class RunsAndLeases:
    """The run and lease half of :class:`~hub.schedule.store.ScheduleStore`."""

    db: HubDatabase
    clock: Callable[[], float]

    def ensure_schema(self) -> None:
        """The store's own: it makes every schedule table at once."""
        raise NotImplementedError

    # -- runs going on ------------------------------------------------------------------

    def begin_runs(self, runs: Sequence[OpenRun]) -> None:
        """Note claimed runs as going on (before they start)."""
        self.ensure_schema()
        now = self.clock()
        for chunk in chunks(list(runs)):
            params = [v for r in chunk for v in (r.schedule_id, r.occurrence, r.node, r.due,
                                                 r.attempt, r.reason, r.job_id, now)]
            self.db.write(self.db.dialect.insert_ignore(
                f"INSERT INTO {RUN_TABLE} (ScheduleID, Occurrence, Node, DueAt, Attempt, "
                f"Reason, JobID, StartedAt) VALUES {marks(len(chunk), 8)}"), params)

    def end_run(self, schedule_id: int, occurrence: str, node: str) -> bool:
        """The run ended on ``node``: False when another node took it over meanwhile (it
        found ``node`` dead and reported the run interrupted). Frees its lease too."""
        self.release_lease(schedule_id, node)
        return self.take_over(OpenRun(schedule_id, occurrence, node, 0.0, 0, "", ""))

    def open_runs(self, nodes: Iterable[str] | None = None) -> list[OpenRun]:
        """The runs ``nodes`` (None: any node) started and did not end; the table holds
        only the runs going on, so it is read whole."""
        self.ensure_schema()
        wanted = None if nodes is None else set(nodes)
        found = [OpenRun(int(sid), str(occ), str(node), float(due), int(attempt), str(reason),
                         str(job_id))
                 for sid, occ, node, due, attempt, reason, job_id in self.db.read(
                     "SELECT ScheduleID, Occurrence, Node, DueAt, Attempt, Reason, JobID FROM "
                     f"{RUN_TABLE} ORDER BY ScheduleID, Occurrence")]
        return [r for r in found if wanted is None or r.node in wanted]

    def take_over(self, run: OpenRun) -> bool:
        """Take a dead node's run to report it: True for the one node whose DELETE landed.
        Its lease is left to expire: a node only stalled past its heartbeat may still be
        running the job, and nothing should start beside it meanwhile."""
        self.ensure_schema()
        return self.db.write(f"DELETE FROM {RUN_TABLE} WHERE ScheduleID = ? AND Occurrence = ? "
                             "AND Node = ?", (run.schedule_id, run.occurrence, run.node)) > 0

    # -- leases ---------------------------------------------------------------------

    def take_lease(self, schedule_id: int, node: str, until: float) -> bool:
        """Hold ``schedule_id`` for ``node`` until ``until``: True unless another node
        holds an unexpired lease on it."""
        self.ensure_schema()
        now = self.clock()
        if self.db.write(self.db.dialect.insert_ignore(
                f"INSERT INTO {LEASE_TABLE} (ScheduleID, Node, Until) VALUES (?, ?, ?)"),
                (schedule_id, node, until)) > 0:
            return True
        return self.db.write(f"UPDATE {LEASE_TABLE} SET Node = ?, Until = ? WHERE "
                             "ScheduleID = ? AND (Until < ? OR Node = ?)",
                             (node, until, schedule_id, now, node)) > 0

    def take_leases(self, ids: Sequence[int], node: str, until: float) -> set[int]:
        """:meth:`take_lease` for several schedules in a few statements (a hundred due
        at once must not wait on a hundred commits); the ids this node now holds."""
        if not ids or self.db.dialect.name not in RETURNING:
            return {sid for sid in ids if self.take_lease(sid, node, until)}
        self.ensure_schema()
        now, got = self.clock(), set()
        for chunk in chunks(sorted(set(ids))):
            sql = self.db.dialect.insert_ignore(
                f"INSERT INTO {LEASE_TABLE} (ScheduleID, Node, Until) VALUES "
                f"{marks(len(chunk), 3)}")
            # Resent when its answer is lost: a lease the first sending took is this
            # node's, and the UPDATE below takes it again (``OR Node = ?``).
            rows = self.db.write_returning(f"{sql} RETURNING ScheduleID",
                                           [v for sid in chunk for v in (sid, node, until)],
                                           resend=True)
            got |= {int(sid) for (sid,) in rows}
            rest = [sid for sid in chunk if sid not in got]
            if rest and self.db.dialect.name == "mariadb":   # no UPDATE ... RETURNING
                got |= {sid for sid in rest if self.take_lease(sid, node, until)}
            elif rest:
                got |= {int(sid) for (sid,) in self.db.write_returning(
                    f"UPDATE {LEASE_TABLE} SET Node = ?, Until = ? WHERE ScheduleID IN "
                    f"({', '.join('?' * len(rest))}) AND (Until < ? OR Node = ?) "
                    "RETURNING ScheduleID", [node, until, *rest, now, node], resend=True)}
        return got

    def renew_lease(self, schedule_id: int, node: str, until: float) -> bool:
        """False when the lease is no longer ``node``'s (it expired and was taken)."""
        self.ensure_schema()
        return self.db.write(f"UPDATE {LEASE_TABLE} SET Until = ? WHERE ScheduleID = ? AND "
                             "Node = ?", (until, schedule_id, node)) > 0

    def release_lease(self, schedule_id: int, node: str) -> None:
        """Free the lease (the row stays: it counts the occurrences skipped)."""
        self.ensure_schema()
        self.db.write(f"UPDATE {LEASE_TABLE} SET Until = 0 WHERE ScheduleID = ? AND Node = ?",
                      (schedule_id, node))

    def lease_holder(self, schedule_id: int) -> str | None:
        """The node holding ``schedule_id``'s lease now (for tests and diagnostics)."""
        self.ensure_schema()
        row = self.db.read_one(f"SELECT Node FROM {LEASE_TABLE} WHERE ScheduleID = ? AND "
                               "Until >= ?", (schedule_id, self.clock()))
        return None if row is None else str(row[0])

    def count_skip(self, schedule_id: int, at: float,
                   window_s: float) -> tuple[float, int] | None:
        """One more occurrence (at ``at``) skipped for overlap: the first skipped in the
        current window (``window_s`` long) and how many so far; None without a lease row.
        Assignments read only their own column (MariaDB assigns left to right)."""
        self.ensure_schema()
        opened = "SkipFrom IS NOT NULL AND SkipFrom > ?"
        if not self.db.write(f"UPDATE {LEASE_TABLE} SET SkipCount = CASE WHEN {opened} THEN "
                             f"SkipCount + 1 ELSE 1 END, SkipFrom = CASE WHEN {opened} THEN "
                             "SkipFrom ELSE ? END WHERE ScheduleID = ?",
                             (at - window_s, at - window_s, at, schedule_id)):
            return None
        row = self.db.read_one(f"SELECT SkipFrom, SkipCount FROM {LEASE_TABLE} WHERE "
                               "ScheduleID = ?", (schedule_id,))
        return None if row is None else (float(row[0]), int(row[1]))
