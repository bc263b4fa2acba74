"""Which hub nodes are alive: a heartbeat row per node in the hub database.

Each node (``WEBHUB_NODE``) keeps one row in ``webhub_nodes``: the start that holds
the name (a random instance id, the host and process id), when it started and its
last beat. :class:`NodeRegistry` beats every few seconds from an asyncio task the
hub's lifespan starts and stops; a clean shutdown deletes the row. A node whose
beat is older than ``WEBHUB_NODE_TIMEOUT_S`` is dead, and one other node takes on
its leftovers (:meth:`NodeStore.take_over`: a compare-and-set on the row, so one
node does it; a node that takes over and dies half-way leaves the row dead, and
another node takes over again).

Beats are wall-clock seconds of the beating node, compared with the reader's own
clock: nodes must keep their clocks in step (NTP) well within the timeout.

Two processes with one ``WEBHUB_NODE`` would write each other's runs and claims: a
start finding the name held by another live start refuses with a clear message.
A row left by a process of this host that no longer exists (a kill -9, then a
restart at once) does not hold the name, whatever its beat says. "This host" is the
host name, the boot (``/proc/sys/kernel/random/boot_id``) and the PID namespace
(``/proc/self/ns/pid``), kept in the ``host`` column as ``name/boot/pidns``: two
containers sharing a host name have their own process ids, and a container's
restarted hub is PID 1 again. Only a start claiming its own name looks at processes;
other nodes are alive by their beats alone.

On a SQLite hub database a hub is one node: it writes its row once at start (so a
second start of the name on the same file is refused) and does not beat; its
liveness answers itself without reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hub.store.dialects import Dialect
from hub.store.hubdb import HubDatabase, Row, Tx
from shared.errors import Conflict, StoreUnavailable

__all__ = ["JOIN_CHANNEL", "NODE_SCHEMA", "SWEPT", "NodeEntry", "NodeNameTaken", "NodeRegistry",
           "NodeStore", "beat_interval", "host_id", "node_schema"]

log = logging.getLogger("webhub.cluster")
NODE_SCHEMA = "webhub_nodes/1"
JOIN_CHANNEL = "webhub_node_joined"  # NOTIFY payload: the node that just claimed its name
SWEPT = "taken-over-by:"  # an instance id marking a dead node's row while it is swept


def node_schema(dialect: Dialect) -> list[str]:
    return [dialect.create_table("webhub_nodes", """
        node {varchar}(200) PRIMARY KEY,
        instance {varchar}(240) NOT NULL,
        host {varchar}(255) NOT NULL,
        pid {bigint} NOT NULL,
        started {real} NOT NULL,
        beat {real} NOT NULL,
        url {varchar}(500)""")]


class NodeNameTaken(Conflict):
    """Another live process holds this ``WEBHUB_NODE``."""


def _taken(me: NodeEntry, held: NodeEntry) -> NodeNameTaken:
    return NodeNameTaken(
        f"WEBHUB_NODE={me.node} is already in use by a running hub (host "
        f"{held.host.split('/')[0]}, "
        f"process {held.pid}, last heartbeat {max(0.0, me.beat - held.beat):.0f} s ago): "
        "give each node its own name")


@dataclass(frozen=True)
class NodeEntry:
    node: str
    instance: str
    host: str
    pid: int
    started: float
    beat: float
    url: str | None = None  # how the other nodes reach it (WEBHUB_NODE_URL)

    @property
    def swept(self) -> bool:
        """A dead node's row while another node takes over its leftovers."""
        return self.instance.startswith(SWEPT)

    def alive(self, now: float, timeout_s: float) -> bool:
        """Beating within the timeout (a node of another host, container or PID namespace
        is known by its beats alone)."""
        return self.beat >= now - timeout_s

    def holds_name(self, me: NodeEntry, timeout_s: float, *, beats: bool = True) -> bool:
        """Whether this row, found by ``me`` claiming its own name, stops ``me``: a live
        start other than ``me``. A row of this host whose process is gone (or is ``me``'s
        own process id: a restarted container's PID 1) does not; on a database without
        beats (``beats`` False) a row of this host whose process runs does."""
        if self.instance == me.instance or self.swept:
            return False
        running = self._process_runs(me) if self.host == me.host else None
        if running is False:
            return False
        if running and not beats:
            return True
        return self.alive(me.beat, timeout_s)

    def _process_runs(self, me: NodeEntry) -> bool:
        """Whether this row's process (of ``me``'s host and PID namespace) still runs: not
        ``me``'s own pid, not a pid since taken by a process started after the row."""
        if self.pid == me.pid:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # there, another user's
            pass
        started = _process_start(self.pid)
        return started is None or started <= self.started + _START_SLACK_S


_START_SLACK_S = 2.0  # a process's start time, read from /proc, is known to a tick or so


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (wall clock), where /proc says; None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(float(line.split()[1]) for line in
                    Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


@functools.cache
def host_id() -> str:
    """This host as the ``host`` column keeps it: ``name/boot-id/pid-namespace`` (Linux;
    the name alone where /proc does not say)."""
    parts = [socket.gethostname()]
    with contextlib.suppress(OSError):
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    return "/".join(parts)[:255]


def beat_interval(timeout_s: float) -> float:
    """A third of the timeout (two beats may be missed), between 0.2 and 5 seconds."""
    return max(0.2, min(5.0, timeout_s / 3))


_COLUMNS = "node, instance, host, pid, started, beat, url"


def _entry(row: Row) -> NodeEntry:
    return NodeEntry(str(row[0]), str(row[1]), str(row[2]), int(row[3]), float(row[4]),
                     float(row[5]), None if row[6] is None else str(row[6]))


class NodeStore:
    """The ``webhub_nodes`` table."""

    def __init__(self, db: HubDatabase) -> None:
        self.db = db

    @property
    def beats(self) -> bool:
        """Whether nodes beat here: not on SQLite, where a hub is one node."""
        return self.db.kind != "sqlite"

    def _ready(self) -> None:
        self.db.ensure_schema_once(NODE_SCHEMA, node_schema)

    def claim(self, me: NodeEntry, timeout_s: float) -> NodeEntry | None:
        """Hold ``me.node`` for ``me``; the row of an earlier start it replaces, if any.
        Refuses (:class:`NodeNameTaken`) while another live start holds the name."""
        self._ready()
        try:
            with self.db.transaction() as tx:
                held = self._held(tx, me.node)
                if held is not None:
                    if held.holds_name(me, timeout_s, beats=self.beats):
                        raise _taken(me, held)
                    tx.write("DELETE FROM webhub_nodes WHERE node = ?", (me.node,))
                tx.write(f"INSERT INTO webhub_nodes ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (me.node, me.instance, me.host, me.pid, me.started, me.beat, me.url))
            self.db.notify(JOIN_CHANNEL, me.node)
        except NodeNameTaken:
            raise
        except Conflict:  # another start inserted the name between our read and insert
            raise NodeNameTaken(f"WEBHUB_NODE={me.node} was claimed by another hub starting "
                                "at the same moment: give each node its own name") from None
        return held if held is not None and held.instance != me.instance else None

    @staticmethod
    def _held(tx: Tx, node: str) -> NodeEntry | None:
        row = tx.read_one(f"SELECT {_COLUMNS} FROM webhub_nodes WHERE node = ?", (node,))
        return None if row is None else _entry(row)

    def beat(self, node: str, instance: str, now: float) -> bool:
        """This start's beat; False when its row is gone or taken over (it was taken for
        dead while it stalled)."""
        self._ready()
        return self.db.write("UPDATE webhub_nodes SET beat = ? WHERE node = ? AND instance = ?",
                             (now, node, instance)) == 1

    def nodes(self) -> list[NodeEntry]:
        self._ready()
        return [_entry(r) for r in self.db.read(
            f"SELECT {_COLUMNS} FROM webhub_nodes ORDER BY node")]

    def alive(self, now: float, timeout_s: float) -> list[NodeEntry]:
        """Nodes beating (a dead node's row being swept is neither alive nor dead)."""
        return [n for n in self.nodes() if n.alive(now, timeout_s) and not n.swept]

    def dead(self, now: float, timeout_s: float) -> list[NodeEntry]:
        return [n for n in self.nodes() if not n.alive(now, timeout_s)]

    def take_over(self, dead: NodeEntry, by: str) -> bool:
        """Mark ``dead``'s row as being swept by node ``by``; True for the one node that
        wins (the row unchanged since it was read: not beaten, not taken already)."""
        self._ready()
        # The row looks alive (the sweeper's host, process and time) while it is swept,
        # so no other node sweeps it too; dead again if the sweeper dies before the end.
        return self.db.write(
            "UPDATE webhub_nodes SET instance = ?, host = ?, pid = ?, beat = ? "
            "WHERE node = ? AND instance = ? AND beat = ?",
            (f"{SWEPT}{by}", host_id(), os.getpid(), time.time(), dead.node,
             dead.instance, dead.beat)) == 1

    def forget(self, node: str, instance: str) -> None:
        """Delete the row of ``node`` while ``instance`` holds it."""
        self._ready()
        self.db.write("DELETE FROM webhub_nodes WHERE node = ? AND instance = ?",
                      (node, instance))


class NodeRegistry:
    """This node's heartbeat, and what it knows of the others.

    ``every_beat`` callbacks run after each beat in a worker thread (the runs registry
    sweeps dead nodes there); a failing one is logged and the beats go on."""

    def __init__(self, store: NodeStore, node: str, timeout_s: float,
                 url: str | None = None) -> None:
        self.store = store
        self.node = node
        self.url = url
        self.timeout_s = float(timeout_s)
        self.interval_s = beat_interval(self.timeout_s)
        self.instance = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(6).hex()}"
        self.reachable = True  # the last beat reached the database
        self._claimed = False  # this start holds its row (claim has run)
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[], None]] = []
        self._rejoin_listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def every_beat(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def on_rejoin(self, listener: Callable[[], None]) -> None:
        """``listener`` runs (in the beat's thread) when this node, taken for dead while
        it stalled, has joined again: what the others swept of it is to be put back."""
        self._rejoin_listeners.append(listener)

    def _me(self) -> NodeEntry:
        now = time.time()
        return NodeEntry(self.node, self.instance, host_id(), os.getpid(), now, now, self.url)

    def check_name_free(self) -> None:
        """Refuse early (before the hub opens anything else) when a live start holds the
        name; :meth:`start` claims it."""
        me = self._me()
        with contextlib.suppress(StoreUnavailable):
            for held in self.store.nodes():
                if held.node == me.node and held.holds_name(me, self.timeout_s,
                                                            beats=self.store.beats):
                    raise _taken(me, held)

    def claim(self) -> NodeEntry | None:
        """Hold the name (see :meth:`NodeStore.claim`); the earlier start's row, if any."""
        earlier = self.store.claim(self._me(), self.timeout_s)
        self._claimed = True
        return earlier

    async def start(self) -> NodeEntry | None:
        """Claim the name and start beating; the row an earlier start of this node left
        (it did not stop cleanly), if any."""
        earlier = None
        try:
            earlier = await asyncio.to_thread(self.claim)
        except StoreUnavailable as exc:  # the node serves; its first beat that lands claims
            log.warning("node %s: not yet in the cluster's node table: %s", self.node,
                        exc.message)
            self.reachable = False
        self._task = asyncio.create_task(self._beat_loop(), name=f"heartbeat {self.node}")
        return earlier

    async def stop(self) -> None:
        """Stop beating and leave the cluster cleanly (the row goes)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            await asyncio.to_thread(self.store.forget, self.node, self.instance)
        except StoreUnavailable as exc:  # the others take it for dead after the timeout
            log.info("node %s left without deregistering: %s", self.node, exc.message)

    async def _beat_loop(self) -> None:
        """Beats; where nodes do not beat (SQLite), only until the name is claimed."""
        while self.store.beats or not self._claimed:
            await asyncio.sleep(self.interval_s)
            await asyncio.to_thread(self.beat)

    def beat(self) -> None:
        """One beat and its listeners (in a worker thread)."""
        with self._lock:
            try:
                if not self._claimed:
                    self.claim()
                elif not self.store.beat(self.node, self.instance, time.time()):
                    log.warning("node %s was taken for dead by the others (no heartbeat "
                                "within %g s); it joins again", self.node, self.timeout_s)
                    self.claim()
                    for rejoined in self._rejoin_listeners:
                        rejoined()
                if not self.reachable:
                    log.info("node %s: the hub database answers heartbeats again", self.node)
                self.reachable = True
            except NodeNameTaken as exc:
                log.error("node %s cannot join again: %s", self.node, exc.message)
                return
            except StoreUnavailable as exc:
                if self.reachable:
                    log.warning("node %s: heartbeat not written: %s", self.node, exc.message)
                self.reachable = False
                return
            except Exception:
                log.exception("node %s: heartbeat failed", self.node)
                return
            for listener in self._listeners:
                try:
                    listener()
                except StoreUnavailable:
                    self.reachable = False
                except Exception:
                    log.exception("node %s: a heartbeat task failed", self.node)

    # -- what the others are ----------------------------------------------------------

    def alive_nodes(self) -> list[NodeEntry]:
        return self.store.alive(time.time(), self.timeout_s)

    def dead_nodes(self) -> list[NodeEntry]:
        return self.store.dead(time.time(), self.timeout_s)

    def alive_names(self) -> Sequence[str]:
        """The nodes beating now; on SQLite (one node, no beats) this node, unread."""
        if not self.store.beats:
            return [self.node]
        return [n.node for n in self.alive_nodes()]
