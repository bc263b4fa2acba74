"""User + system CPU of a process and of its descendants, read from /proc/<pid>/stat (Linux).

The hub's workers are its children, each in a session of its own, so they are found by
their parent links, not by session or process group. A worker that exits between two
snapshots is still counted: once the hub has reaped it, its CPU shows up in the hub's
cutime/cstime, and the part it had used before the first snapshot is taken off again.
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")
SETTLE_STEP_S = 0.2
SETTLE_MAX_S = 5.0
_CPUCLOCK_SCHED = 2  # the kernel's clock id of a process's CPU time is (~pid << 3) | 2


@dataclass(frozen=True)
class Stat:
    """One process's counters, in clock ticks."""

    ppid: int
    own: int  # utime + stime: every thread of the process
    reaped: int  # cutime + cstime: children it has waited for


def read_stat(pid: int) -> Stat | None:
    """The counters of pid, or None if it has gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")".
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    return Stat(ppid=int(fields[1]), own=utime + stime, reaped=cutime + cstime)


def process_cpu_ns(pid: int) -> int:
    """User + system CPU of pid in ns, every thread, ended ones too: fine enough to time one
    run, where stat's 10 ms ticks are not. Read from the kernel's CPU-time clock of the
    process (what clock_getcpuclockid(3) gives; an ended thread's time stays in it, whereas
    /proc/<pid>/task/*/schedstat loses it, and a fresh-isolate worker ends V8's thread with
    each run). Raises OSError once pid has gone."""
    return time.clock_gettime_ns(((~pid) << 3) | _CPUCLOCK_SCHED)


def all_stats() -> dict[int, Stat]:
    stats = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            stat = read_stat(int(entry.name))
            if stat is not None:
                stats[int(entry.name)] = stat
    return stats


@dataclass(frozen=True)
class Snapshot:
    root: int
    root_stat: Stat
    descendants: dict[int, Stat]


def snapshot(root: int) -> Snapshot:
    """The root process and every process below it, at one moment."""
    stats = all_stats()
    if root not in stats:
        raise RuntimeError(f"process {root} is not running")
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(stat.ppid, []).append(pid)
    below, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        below[pid] = stats[pid]
        todo += children.get(pid, [])
    return Snapshot(root, stats[root], below)


@dataclass(frozen=True)
class CpuSplit:
    """CPU used between two snapshots, in ms: the root's own, and everything below it."""

    root_ms: float
    descendants_ms: float
    descendants_seen: int  # processes below the root at either snapshot


def cpu_between(before: Snapshot, after: Snapshot) -> CpuSplit:
    root_ticks = after.root_stat.own - before.root_stat.own
    below_ticks = after.root_stat.reaped - before.root_stat.reaped
    for pid, stat in after.descendants.items():
        earlier = before.descendants.get(pid)
        below_ticks += stat.own - (earlier.own if earlier else 0)
    for pid, stat in before.descendants.items():
        if pid not in after.descendants and stat.ppid == before.root:
            # Reaped by the root: its whole life is in the root's reaped ticks now.
            below_ticks -= stat.own + stat.reaped
    seen = len(before.descendants.keys() | after.descendants.keys())
    return CpuSplit(root_ticks * TICK_MS, below_ticks * TICK_MS, seen)


def settle(root: int) -> Snapshot:
    """A snapshot once the tree has stopped using CPU (no tick over SETTLE_STEP_S), so work a
    run leaves behind (building the next context, an idle collection) is counted with the
    runs before it; gives up after SETTLE_MAX_S and returns the last snapshot."""
    last = snapshot(root)
    deadline = time.monotonic() + SETTLE_MAX_S
    while time.monotonic() < deadline:
        time.sleep(SETTLE_STEP_S)
        now = snapshot(root)
        split = cpu_between(last, now)
        if split.descendants_ms == 0 and split.root_ms == 0:
            return now
        last = now
    return last


@dataclass(frozen=True)
class CpuPerRun:
    """The CPU a process tree used over a window of runs, whole and per run, in ms."""

    runs: int
    hub_ms: float  # the root process's own
    workers_ms: float  # every process below it (spare workers too), reaped ones included
    workers_seen: int

    @property
    def hub_ms_per_run(self) -> float:
        return self.hub_ms / self.runs

    @property
    def workers_ms_per_run(self) -> float:
        return self.workers_ms / self.runs

    @property
    def total_ms_per_run(self) -> float:
        return (self.hub_ms + self.workers_ms) / self.runs

    def to_json(self) -> dict[str, float | int]:
        return {
            "runs": self.runs,
            "hub_cpu_ms": self.hub_ms,
            "workers_cpu_ms": self.workers_ms,
            "workers_seen": self.workers_seen,
            "tick_ms": TICK_MS,
            "hub_ms_per_run": round(self.hub_ms_per_run, 3),
            "workers_ms_per_run": round(self.workers_ms_per_run, 3),
            "total_ms_per_run": round(self.total_ms_per_run, 3),
        }


def per_run(before: Snapshot, after: Snapshot, runs: int) -> CpuPerRun:
    """The CPU between two snapshots of one tree over `runs` runs. Take both with settle(),
    so the window holds what the runs leave behind, such as a spare worker building the
    next fresh isolate ahead of the next request."""
    split = cpu_between(before, after)
    return CpuPerRun(max(runs, 1), split.root_ms, split.descendants_ms, split.descendants_seen)
