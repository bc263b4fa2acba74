"""The scheduler's upkeep, every few seconds on every node: gaps accounted for, and
dead nodes' runs reported.

Gaps
    ``NextRun`` is a schedule's watermark (see :mod:`hub.schedule.store`). A
    watermark more than the grace behind means occurrences nobody claimed in time:
    the hub database was unreachable, no hub was running, or the only hubs were
    stalled. The node whose compare-and-set moves the watermark past the gap is the
    one that reports it; it claims each occurrence of the gap (so one that did run,
    late, is not counted, and none counted can run later) and writes ONE missed
    record with the count and the reason as this node saw it (:class:`Timeline`).
    With catch-up ``one`` the latest of them is run instead. A gap from before this
    node started is left a while (``settle_s``) to the nodes that were up and know
    better why it happened.

Interrupted runs
    Every run a node starts has a row until it ends. The rows of nodes that stopped
    beating (``NodeLiveness.dead_nodes``), and at start this node's own from its last
    life, are taken over one by one: the node whose DELETE lands writes the
    ``interrupted`` record (with the run's own history id, so a record the dead node
    left is completed, not doubled) and applies the schedule's retry policy, once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from hub.schedule.store import OpenRun
from hub.schedule.timing import (
    Due,
    Entry,
    Firing,
    Missed,
    MissedPlan,
    last_before,
    occurrence_key,
    plan_missed,
)

if TYPE_CHECKING:
    from hub.schedule.scheduler import Scheduler

__all__ = ["NodeLiveness", "Upkeep"]


class NodeLiveness(Protocol):
    """Which nodes of the cluster stopped beating (past the node timeout). Called in a
    thread; may raise the store's errors."""

    def dead_nodes(self) -> set[str]: ...


class Upkeep:
    def __init__(self, scheduler: Scheduler, liveness: NodeLiveness | None) -> None:
        self.s = scheduler
        self.liveness = liveness
        self._under_way = False

    @property
    def settle_s(self) -> float:
        return 2 * self.s.upkeep_s

    async def run(self, now: float) -> None:
        """One round (skipped while the previous one still goes on)."""
        if self._under_way:
            return
        self._under_way = True
        try:
            await self.sweep(own=False)
            await self.account(now)
        finally:
            self._under_way = False

    # -- gaps ---------------------------------------------------------------------

    async def account(self, now: float) -> None:
        s = self.s
        cutoff = now - s.grace_s
        behind = await s.call_store("behind", s.store.behind, cutoff)
        for sid, seen in behind or []:
            entry = s.entries.get(sid)
            if entry is None:
                continue   # not scheduled here (a bad row): nothing to say about it
            if seen < s.timeline.started and now < s.timeline.started + self.settle_s:
                continue
            await self._account_gap(entry, seen, cutoff)

    async def _account_gap(self, entry: Entry, seen: float, cutoff: float) -> None:
        s, sid = self.s, entry.schedule.id
        plan = await asyncio.to_thread(plan_missed, entry.cron, seen, cutoff)
        if not await s.call_store("watermark", s.store.move_watermark, sid, seen, plan.resume):
            return   # another node moved it: that node reports the gap
        latest = plan.latest if entry.schedule.catch_up == "one" else None
        times = {occurrence_key(t): t for t in plan.listed}
        if latest is not None:
            times[occurrence_key(latest)] = latest
        won = await s.call_store("claim", s.store.claim_many,
                                 [(sid, key) for key in times], s.node)
        if won is None:
            # Nothing claimed: put the watermark back, so the gap is accounted again.
            await s.call_store("watermark", s.store.move_watermark, sid, plan.resume, seen)
            return
        mine = sorted(times[key] for _, key in won)
        run = latest if latest in mine else None
        missed = self._missed(entry, plan, [t for t in mine if t != run], latest)
        if missed is not None:
            s.report(entry.schedule, missed)
        if run is not None:
            await s.launch([Due(sid, run, 0, "catch-up")])

    def _missed(self, entry: Entry, plan: MissedPlan, listed: list[float],
                latest: float | None) -> Missed | None:
        """The one record for a gap: the occurrences this node claimed one by one,
        and those only counted (less the latest, when catch-up claimed it)."""
        counted = plan.more - (1 if latest is not None and latest not in plan.listed
                               and not plan.more_capped else 0)
        count = len(listed) + max(counted, 0)
        if count == 0:
            return None
        first = listed[0] if listed else plan.more_from
        last = listed[-1] if counted <= 0 else plan.more_last
        if last == latest and latest is not None and counted > 0:
            last = last_before(entry.cron, latest - 1) or latest
        assert first is not None and last is not None
        reason = self.s.timeline.reason(first, last)
        return Missed(first, last, count, reason, plan.more_capped)

    # -- dead nodes' runs -------------------------------------------------------------

    async def sweep(self, *, own: bool) -> None:
        s = self.s
        dead: set[str] = set()
        if self.liveness is not None:
            dead = await s.call_store("liveness", self.liveness.dead_nodes) or set()
            dead.discard(s.node)   # a node alive enough to ask is not dead
        if own:
            dead.add(s.node)
        if not dead:
            return
        for run in await s.call_store("runs", s.store.open_runs, dead) or []:
            if await s.call_store("take over", s.store.take_over, run):
                await self._interrupted(run)

    async def _interrupted(self, run: OpenRun) -> None:
        s = self.s
        found = await s.call_store("get", s.store.get_many, [run.schedule_id])
        row = (found or {}).get(run.schedule_id)
        if row is None:
            return   # deleted meanwhile, or unreadable: its history is the job's
        firing = Firing(run.due, run.attempt, run.reason, run.job_id)
        if s.interrupted is not None:
            try:
                s.interrupted(row, firing, run.node)
            except Exception as exc:
                s.warn((row.id, "interrupted"), "Schedule %d: an interrupted run could not "
                       "be recorded: %r", row.id, exc)
        await s.call_store("record", s.store.record_fire, row.id, run.due, "interrupted")
        if row.enabled:
            await s.apply_retry_policy(row, run.attempt, "interrupted")
