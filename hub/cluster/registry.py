"""The cluster's runs in flight: one ``webhub_running`` row per run, in the hub database.

A node writes a run's row before the run's code can start (see
:class:`hub.cluster.runs.ClusterRuns`), so a node killed at any moment leaves the
run findable by the others; the row goes once the run has ended. A stop asked on
another node is a mark on the row (``stop_requested``) its own node picks up, told at
once by a ``NOTIFY`` where the database pushes them (PostgreSQL through psycopg).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hub.cluster.nodes import NODE_SCHEMA, node_schema
from hub.history.record import Caller, RunRecord
from hub.store.dialects import DIALECTS, Dialect
from hub.store.hubdb import HubDatabase, Row
from hub.store.limits_store import ADMITTED, Step, carries_writes
from shared.errors import Conflict

__all__ = ["RUNNING_SCHEMA", "STOP_CHANNEL", "LiveRun", "RunsStore", "running_schema"]

RUNNING_SCHEMA = "webhub_running/1"
STOP_CHANNEL = "webhub_run_stop"  # NOTIFY payload: the job id of a run to stop
_COLUMNS = ("job_id, node, job_name, source, started, caller, ref, job_version, method, "
            "schedule_id, schedule_name")
_TABLE = """
        job_id {varchar}(200) PRIMARY KEY,
        node {varchar}(200) NOT NULL,
        job_name {varchar}(200) NOT NULL,
        source {varchar}(16) NOT NULL,
        started {real} NOT NULL,
        caller {text} NOT NULL,
        ref {varchar}(64) NOT NULL,
        job_version {bigint},
        method {varchar}(16) NOT NULL,
        schedule_id {varchar}(200),
        schedule_name {varchar}(200),
        stop_requested {real}"""
# The columns' PostgreSQL types, for values selected rather than inserted (a NULL's type
# is not taken from its column there).
_TYPE_OF = dict(re.findall(r"(\w+) \{(\w+)\}", _TABLE))
_CASTS = tuple(getattr(DIALECTS["postgresql"], _TYPE_OF[column.strip()])
               for column in _COLUMNS.split(","))
_IN_ONE = 200  # ids per DELETE


def running_schema(dialect: Dialect) -> list[str]:
    return [dialect.create_table("webhub_running", _TABLE),
            dialect.create_index("webhub_running_node", "webhub_running", "node")]


@dataclass(frozen=True)
class LiveRun:
    """What the cluster knows of a run in flight (enough for its interrupted record)."""

    job_id: str
    node: str
    job_name: str
    source: str
    started: float
    caller: Caller
    ref: str
    job_version: int | None = None
    method: str = ""
    schedule_id: str | None = None
    schedule_name: str | None = None

    def as_record(self) -> RunRecord:
        """The run as history's ``running`` record (its parameters are not kept here)."""
        return RunRecord(job_id=self.job_id, job_name=self.job_name, source=self.source,
                         caller=self.caller, started=self.started, node=self.node, ref=self.ref,
                         job_version=self.job_version, method=self.method,
                         schedule_id=self.schedule_id, schedule_name=self.schedule_name)

    def _values(self) -> tuple[object, ...]:
        who = self.caller
        caller = json.dumps([who.kind, who.id, who.name, who.user_class])
        return (self.job_id, self.node, self.job_name, self.source, self.started, caller,
                self.ref, self.job_version, self.method, self.schedule_id, self.schedule_name)


def _live(row: Row) -> LiveRun:
    kind, who, name, user_class = json.loads(str(row[5]))
    return LiveRun(str(row[0]), str(row[1]), str(row[2]), str(row[3]), float(row[4]),
                   Caller(kind, who, name, user_class), str(row[6]),
                   None if row[7] is None else int(row[7]), str(row[8] or ""),
                   None if row[9] is None else str(row[9]),
                   None if row[10] is None else str(row[10]))


def _deletes(job_ids: Sequence[str]) -> list[Step]:
    """DELETEs of the rows of ``job_ids``, ``_IN_ONE`` a statement."""
    ids = list(job_ids)
    parts = [ids[start:start + _IN_ONE] for start in range(0, len(ids), _IN_ONE)]
    return [(f"DELETE FROM webhub_running WHERE job_id IN ({', '.join('?' for _ in part)})",
             part) for part in parts]


class RunsStore:
    """The ``webhub_running`` table (beside ``webhub_nodes``, which it joins)."""

    def __init__(self, db: HubDatabase) -> None:
        self.db = db

    def ready(self) -> None:
        self.db.ensure_schema_once(NODE_SCHEMA, node_schema)
        self.db.ensure_schema_once(RUNNING_SCHEMA, running_schema)

    @property
    def carries(self) -> bool:
        """Whether one statement may carry several writes (PostgreSQL's data-modifying
        common table expressions)."""
        return carries_writes(self.db)

    def enter(self, runs: Sequence[LiveRun], ended: Sequence[str] = ()) -> None:
        """Rows for ``runs``; one already there (written again after a rejoin) stays.
        The rows of ``ended`` runs go too: on PostgreSQL in the first row's statement."""
        self.ready()
        sql = self.db.dialect.insert_ignore(
            f"INSERT INTO webhub_running ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        if ended and runs and self.carries:
            deletes = _deletes(ended)
            gone = [f"gone{i} AS ({step})" for i, (step, _) in enumerate(deletes)]
            values = [v for _, part in deletes for v in part]
            self.db.write(f"WITH {', '.join(gone)} {sql}", [*values, *runs[0]._values()])
            runs = runs[1:]
        elif ended:
            self.leave(ended)
        for run in runs:
            with contextlib.suppress(Conflict):  # SQL Server: no ignoring form
                self.db.write(sql, run._values())

    def entry_steps(self, run: LiveRun, ended: Sequence[str] = ()) -> list[Step]:
        """PostgreSQL: the writes of :meth:`enter` (``run``'s row, the ``ended`` rows
        gone) as steps a public rate-limit hit carries: the row is written only when
        the hit was counted (:data:`hub.store.limits_store.ADMITTED`); the ended rows
        go either way."""
        picked = ", ".join(f"CAST(? AS {cast})" for cast in _CASTS)
        row = (f"INSERT INTO webhub_running ({_COLUMNS}) SELECT {picked} FROM {ADMITTED} "
               "ON CONFLICT DO NOTHING")
        return [*_deletes(ended), (row, run._values())]

    def leave(self, job_ids: Sequence[str]) -> None:
        """The rows of runs that have ended go (any number at once)."""
        self.ready()
        for sql, part in _deletes(job_ids):
            self.db.write(sql, part)

    def of_node(self, node: str) -> list[LiveRun]:
        self.ready()
        return [_live(r) for r in self.db.read(
            f"SELECT {_COLUMNS} FROM webhub_running WHERE node = ? ORDER BY started", (node,))]

    def of_swept_node(self, node: str, swept_by: str) -> list[LiveRun]:
        """``node``'s rows while its node row is still marked swept by ``swept_by`` (none
        once the node has joined again: its rows are its live runs then)."""
        self.ready()
        columns = ", ".join(f"r.{c.strip()}" for c in _COLUMNS.split(","))
        return [_live(r) for r in self.db.read(
            f"SELECT {columns} FROM webhub_running r JOIN webhub_nodes n ON n.node = r.node "
            "WHERE r.node = ? AND n.instance = ? ORDER BY r.started", (node, swept_by))]

    def leave_swept(self, node: str, swept_by: str, job_ids: Sequence[str]) -> None:
        """Delete ``job_ids`` of ``node`` while its node row is marked swept by
        ``swept_by``: a node that joined again meanwhile keeps its rows."""
        self.ready()
        ids = list(job_ids)
        for start in range(0, len(ids), 200):
            part = ids[start:start + 200]
            marks = ", ".join("?" for _ in part)
            self.db.write(
                f"DELETE FROM webhub_running WHERE job_id IN ({marks}) AND node = ? AND "
                "EXISTS (SELECT 1 FROM webhub_nodes n WHERE n.node = ? AND n.instance = ?)",
                [*part, node, node, swept_by])

    def in_flight(self, alive_since: float) -> list[LiveRun]:
        """The runs of every node that beat at ``alive_since`` or later, oldest first."""
        self.ready()
        columns = ", ".join(f"r.{c.strip()}" for c in _COLUMNS.split(","))
        return [_live(r) for r in self.db.read(
            f"SELECT {columns} FROM webhub_running r JOIN webhub_nodes n ON n.node = r.node "
            "WHERE n.beat >= ? ORDER BY r.started", (alive_since,))]

    def request_stop(self, job_id: str, now: float, alive_since: float) -> str | None:
        """Mark the run for stopping by its node; that node's name, or None when the run
        is in flight on no live node."""
        self.ready()
        marked = self.db.write(
            "UPDATE webhub_running SET stop_requested = ? WHERE job_id = ? AND node IN "
            "(SELECT node FROM webhub_nodes WHERE beat >= ?)", (now, job_id, alive_since))
        if not marked:
            return None
        row = self.db.read_one("SELECT node FROM webhub_running WHERE job_id = ?", (job_id,))
        if row is None:  # it ended meanwhile
            return None
        self.db.notify(STOP_CHANNEL, job_id)
        return str(row[0])

    def stops_for(self, node: str) -> list[str]:
        """The runs of ``node`` another node asked to stop."""
        self.ready()
        return [str(r[0]) for r in self.db.read(
            "SELECT job_id FROM webhub_running WHERE node = ? AND stop_requested IS NOT NULL",
            (node,))]
