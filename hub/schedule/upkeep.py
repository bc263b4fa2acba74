"""The scheduler's upkeep, every few seconds on every node: gaps accounted for, and
dead nodes' runs reported.

Gaps
    ``NextRun`` is a schedule's watermark (see :mod:`hub.schedule.store`). A
    watermark more than the grace behind means occurrences nobody claimed in time:
    the hub database was unreachable, no hub was running, or the only hubs were
    stalled. The claims from the watermark on show the first gap (a run of unclaimed
    occurrences); once it is closed (a claimed occurrence follows it, or nothing
    after it is due yet) and older than the grace, the node whose compare-and-set
    moves the watermark past it is the one that reports it: it claims each
    occurrence of the gap (so one that did run, late, is not counted, and none
    counted can run later) and writes ONE missed record with the count and the
    reason as this node saw it (:class:`Timeline`). An outage is one gap however
    many upkeep rounds it spans.
    With catch-up ``one`` the latest of them is run instead. A gap from before this
    node started is left a while (``settle_s``) to the nodes that were up and know
    better why it happened.

Interrupted runs
    Every run a node starts has a row until it ends. The rows of nodes that stopped
    beating (not among ``NodeLiveness.alive_nodes`` for a while), and at start this
    node's own from its last
    life (again at each round until the store could be asked), and at stop the runs
    it cancelled, are taken over one by one: the node whose DELETE lands writes the
    ``interrupted`` record (with the run's own history id, so a record the dead node
    left is completed, not doubled) and applies the schedule's retry policy, once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from hub.schedule.store import OpenRun
from hub.schedule.timing import (
    Due,
    Entry,
    Firing,
    Missed,
    MissedPlan,
    last_before,
    next_after,
    occurrence_key,
    plan_missed,
)

if TYPE_CHECKING:
    from hub.schedule.scheduler import Scheduler

__all__ = ["MAX_OPEN_S", "Gap", "NodeLiveness", "Upkeep"]

# A gap still unclaimed up to now is left open this long (it may be an outage that
# has not ended); past it, its part older than the grace is reported.
MAX_OPEN_S = 600.0


@dataclass(frozen=True)
class Gap:
    """Occurrences nobody claimed: the first ones, to claim one by one, the rest only
    counted; the watermark goes to ``resume`` (the first occurrence after them)."""

    times: list[float]
    counted: MissedPlan
    resume: float


def _none() -> MissedPlan:
    return MissedPlan((), 0, None, None, False, None, 0.0)


class NodeLiveness(Protocol):
    """The nodes of the cluster beating now (within the node timeout), this one among
    them when its own beats land. Called in a thread; may raise the store's errors.
    Asked for the living rather than the dead: a dead node's heartbeat row may be
    forgotten once its runs are swept, while its scheduled runs are still open."""

    def alive_nodes(self) -> set[str]: ...


class Upkeep:
    def __init__(self, scheduler: Scheduler, liveness: NodeLiveness | None) -> None:
        self.s = scheduler
        self.liveness = liveness
        self._under_way = False
        self._own_pending = True     # the runs its last life left: not looked for yet
        self._suspects: dict[str, float] = {}   # node -> first seen not beating

    @property
    def settle_s(self) -> float:
        return 2 * self.s.upkeep_s

    async def run(self, now: float) -> None:
        """One round (skipped while the previous one still goes on)."""
        if self._under_way:
            return
        self._under_way = True
        try:
            await self.sweep(own=self._own_pending)
            await self.account(now)
        finally:
            self._under_way = False

    # -- gaps ---------------------------------------------------------------------

    async def account(self, now: float) -> None:
        s = self.s
        behind = await s.call_store("behind", s.store.behind, now - s.grace_s)
        for sid, seen in behind or []:
            entry = s.entries.get(sid)
            if entry is None:
                continue   # not scheduled here (a bad row): nothing to say about it
            if seen < s.timeline.started and now < s.timeline.started + self.settle_s:
                continue
            await self._account(entry, seen, now)

    async def _account(self, entry: Entry, seen: float, now: float) -> None:
        s, sid = self.s, entry.schedule.id
        plan = await asyncio.to_thread(plan_missed, entry.cron, seen, now)
        if not plan.listed:
            return
        claimed = await s.call_store("claims", s.store.claimed_between, sid,
                                     occurrence_key(plan.listed[0]),
                                     occurrence_key(plan.listed[-1]))
        if claimed is None:
            return
        gap = await asyncio.to_thread(self._first_gap, entry, plan, claimed, now)
        if gap is None:
            return
        if not await s.call_store("watermark", s.store.move_watermark, sid, seen, gap.resume):
            return   # another node moved it: that node reports the gap
        if gap.times or gap.counted.more:
            await self._report_gap(entry, seen, gap)

    def _first_gap(self, entry: Entry, plan: MissedPlan, claimed: set[str],
                   now: float) -> Gap | None:
        """In a thread: the first run of unclaimed occurrences from the watermark, once
        it is closed (a claimed one follows it, or none is due after it) and older than
        the grace; None while it may still grow or be claimed late."""
        cutoff = now - self.s.grace_s
        times = plan.listed
        at = next((i for i, t in enumerate(times) if occurrence_key(t) not in claimed),
                  len(times))
        end = next((i for i in range(at, len(times)) if occurrence_key(times[i]) in claimed),
                   len(times))
        run, followed = list(times[at:end]), end < len(times) or plan.more > 0
        if not run:
            last = min(times[-1], cutoff)
            return Gap([], _none(), next_after(entry.cron, last))
        if not followed and plan.more == 0 and run[-1] > cutoff:
            # Unclaimed up to now: wait for the grace, unless nobody has claimed for long.
            if run[0] >= now - MAX_OPEN_S:
                return None
            run = [t for t in run if t <= cutoff]
            return Gap(run, _none(), next_after(entry.cron, cutoff)) if run else None
        if end == len(times) and plan.more > 0:
            # A gap longer than is claimed one by one: the rest only counted.
            rest = plan_missed(entry.cron, next_after(entry.cron, times[-1]), cutoff, 0)
            return Gap(run, rest, rest.resume)
        if run[-1] > cutoff:
            return None   # its end is within the grace: a late claim may still come
        return Gap(run, _none(), next_after(entry.cron, run[-1]))

    async def _report_gap(self, entry: Entry, seen: float, gap: Gap) -> None:
        s, sid = self.s, entry.schedule.id
        rest = gap.counted
        latest = (rest.latest if rest.more else gap.times[-1]) if (
            entry.schedule.catch_up == "one") else None
        times = {occurrence_key(t): t for t in gap.times}
        if latest is not None:
            times[occurrence_key(latest)] = latest
        won = await s.call_store("claim", s.store.claim_many,
                                 [(sid, key) for key in times], s.node)
        if won is None:
            # Nothing claimed: put the watermark back, so the gap is accounted again.
            await s.call_store("watermark", s.store.move_watermark, sid, gap.resume, seen)
            return
        mine = sorted(times[key] for _, key in won)
        run = latest if latest in mine else None
        missed = self._missed(entry, [t for t in mine if t != run], rest, latest)
        if missed is not None:
            s.report(entry.schedule, missed)
        if run is not None:
            await s.launch([Due(sid, run, 0, "catch-up")])

    def _missed(self, entry: Entry, listed: list[float], rest: MissedPlan,
                latest: float | None) -> Missed | None:
        """The one record for a gap: the occurrences this node claimed one by one,
        and those only counted (less the latest, when catch-up claimed it)."""
        counted = rest.more - (1 if latest is not None and rest.more and not rest.more_capped
                               else 0)
        count = len(listed) + max(counted, 0)
        if count == 0:
            return None
        first = listed[0] if listed else rest.more_from
        last = listed[-1] if counted <= 0 else rest.more_last
        if counted > 0 and last == latest and latest is not None:
            last = last_before(entry.cron, latest - 1) or latest
        assert first is not None and last is not None
        reason = self.s.timeline.reason(first, last)
        return Missed(first, last, count, reason, rest.more_capped)

    # -- dead nodes' runs -------------------------------------------------------------

    @property
    def confirm_s(self) -> float:
        return 2 * self.s.upkeep_s

    async def sweep(self, *, own: bool) -> None:
        """Take over the open runs of this node's last life (``own``) and of nodes not
        beating for a while: seen so at rounds ``confirm_s`` apart, while this node's
        own beats land (after an outage every node's last beat looks old until each
        has beaten again; none is taken for dead meanwhile)."""
        s = self.s
        alive: set[str] | None = None
        if self.liveness is not None:
            alive = await s.call_store("liveness", self.liveness.alive_nodes)
        if not own and (alive is None or s.node not in alive):
            return
        runs = await s.call_store("runs", s.store.open_runs, None)
        if runs is None:
            return
        if own:
            self._own_pending = False
        for run in self._to_take(runs, own, alive):
            if await s.call_store("take over", s.store.take_over, run):
                await self._interrupted(run)

    def _to_take(self, runs: list[OpenRun], own: bool, alive: set[str] | None) -> list[OpenRun]:
        s, now = self.s, self.s.clock.now()
        mine = [r for r in runs if r.node == s.node and own and r.job_id not in s.live_runs]
        if alive is None or s.node not in alive:
            return mine
        gone = {r.node for r in runs if r.node != s.node and r.node not in alive}
        self._suspects = {n: self._suspects.get(n, now) for n in gone}
        sure = {n for n, since in self._suspects.items() if now - since >= self.confirm_s}
        return mine + [r for r in runs if r.node in sure]

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
