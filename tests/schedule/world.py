"""A fake clock and a small world of scheduler nodes on one real database, for the
scheduler's tests. A node's clock may be frozen: its sleepers are not woken while
time goes on, as for a node whose process is stopped or whose loop is blocked."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hub.schedule.model import Schedule, check_schedule_input
from hub.schedule.scheduler import Firing, Missed, NodeLiveness, Scheduler
from hub.schedule.store import ScheduleStore
from hub.store.hubdb import open_hub_database
from tests.servers import fresh_database

T0 = 1_795_046_400.0        # 2026-11-19T00:00:00Z


class FakeClock:
    """Time moves only when the test says. Knows who sleeps until when, and waits for
    the sleepers it woke to actually resume, so a test can tell when all is quiet.
    :meth:`view` gives a node its own face of the clock, which :meth:`freeze` stops."""

    def __init__(self, t: float) -> None:
        self.t = t
        self._sleepers: list[tuple[float, asyncio.Future[None], int]] = []
        self._waking = 0
        self._changed = asyncio.Event()
        self._views = itertools.count(1)
        self.frozen: set[int] = set()

    def now(self) -> float:
        return self.t

    async def sleep_until(self, t: float) -> None:
        await self.sleep_in(0, t)

    async def sleep_in(self, view: int, t: float) -> None:
        if t <= self.t and view not in self.frozen:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        item = (t, fut, view)
        self._sleepers.append(item)
        try:
            await fut
        finally:
            if item in self._sleepers:      # cancelled before its time came
                self._sleepers.remove(item)
            else:
                self._waking -= 1
                self._changed.set()
                self._changed = asyncio.Event()

    def view(self) -> ClockView:
        return ClockView(self, next(self._views))

    def next_deadline(self) -> float | None:
        return min((t for t, _, v in self._sleepers if v not in self.frozen), default=None)

    def set(self, t: float) -> None:
        self.t = t
        self._wake_due()

    def _wake_due(self) -> None:
        due = [s for s in self._sleepers if s[0] <= self.t and s[2] not in self.frozen]
        for item in due:
            if item[1].done():                   # its task is being cancelled
                continue
            self._sleepers.remove(item)
            item[1].set_result(None)
            self._waking += 1

    def freeze(self, view: ClockView) -> None:
        self.frozen.add(view.id)

    def thaw(self, view: ClockView) -> None:
        self.frozen.discard(view.id)
        self._wake_due()

    async def settled(self) -> None:
        while self._waking:
            await self._changed.wait()


class ClockView:
    def __init__(self, clock: FakeClock, view: int) -> None:
        self.clock = clock
        self.id = view

    def now(self) -> float:
        return self.clock.t

    async def sleep_until(self, t: float) -> None:
        await self.clock.sleep_in(self.id, t)


class Jobs:
    """The fire, missed and interrupted callbacks, recording what they were asked."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.fired: list[tuple[int, float, int, str]] = []
        self.fired_on: list[str] = []
        self.job_ids: list[str] = []
        self.missed: list[tuple[int, Missed]] = []
        self.interrupted: list[tuple[int, Firing, str]] = []
        self.outcomes: dict[int, str] = {}
        self.durations: dict[int, float] = {}
        self.broken: set[int] = set()
        self.going: dict[int, int] = {}        # schedule id -> runs going now
        self.most_at_once: dict[int, int] = {}

    def fire_on(self, node: str, clock: Any) -> Callable[[Schedule, Firing],
                                                           Awaitable[str]]:
        async def fire(schedule: Schedule, firing: Firing) -> str:
            sid = schedule.id
            if sid in self.broken:
                raise RuntimeError("the job runner would not start")
            self.fired.append((sid, firing.occurrence, firing.attempt, firing.reason))
            self.fired_on.append(node)
            self.job_ids.append(firing.job_id)
            self.going[sid] = self.going.get(sid, 0) + 1
            self.most_at_once[sid] = max(self.most_at_once.get(sid, 0), self.going[sid])
            try:
                if sid in self.durations:
                    await clock.sleep_until(clock.now() + self.durations[sid])
            finally:
                self.going[sid] -= 1
            return self.outcomes.get(sid, "success")
        return fire

    def record_missed(self, schedule: Schedule, missed: Missed) -> None:
        self.missed.append((schedule.id, missed))

    def record_interrupted(self, schedule: Schedule, firing: Firing, node: str) -> None:
        self.interrupted.append((schedule.id, firing, node))

    def times(self, sid: int) -> list[float]:
        return [t - T0 for s, t, _, _ in self.fired if s == sid]

    def missed_of(self, sid: int) -> list[tuple[float, float, int, str]]:
        """The missed records as history keeps them: a report under a record id that
        was reported before replaces it."""
        kept: dict[object, Missed] = {}
        for n, (s, m) in enumerate(self.missed):
            if s == sid:
                kept[m.record_id or n] = m
        return [(m.first - T0, m.last - T0, m.count, m.reason) for m in kept.values()]


class Liveness:
    """Which nodes beat, as the tests say: all of the world's but the ``dead``."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.dead: set[str] = set()

    def alive_nodes(self) -> set[str]:
        return {node.node for node in self.world.nodes} - self.dead


class World:
    def __init__(self, store: ScheduleStore, clock: FakeClock) -> None:
        self.store = store
        self.clock = clock
        self.jobs = Jobs(clock)
        self.liveness = Liveness(self)
        self.nodes: list[Scheduler] = []
        self.clocks: dict[str, ClockView] = {}

    def node(self, name: str = "n1", store: ScheduleStore | None = None, *,
             own_clock: bool = False, liveness: NodeLiveness | None = None,
             **options: Any) -> Scheduler:
        clock: FakeClock | ClockView = self.clock
        if own_clock:
            clock = self.clocks[name] = self.clock.view()
        options = {"refresh_s": 5.0, "drain_s": 0.0, **options}
        node = Scheduler(store or self.store, self.jobs.fire_on(name, clock),
                         self.jobs.record_missed, name, clock, liveness=liveness,
                         interrupted=self.jobs.record_interrupted, **options)
        self.nodes.append(node)
        return node

    def add(self, cron: str, **fields: Any) -> int:
        body = {"name": "s", "cron": cron, "jobName": "job", "enabled": True, **fields}
        return self.store.create(check_schedule_input(body, "UTC")).id

    def edit(self, sid: int, **fields: Any) -> None:
        old = self.store.get(sid)
        assert old is not None
        self.store.update(sid, check_schedule_input(fields, "UTC", existing=old))

    def stall(self, name: str) -> None:
        """Node ``name`` stops as a stopped process would: its clock frozen, and deaf to
        notifications (one event loop runs every node here)."""
        self.clock.freeze(self.clocks[name])
        for node in self.nodes:
            if node.node == name and node._listener is not None:
                node._listener.close()

    def frozen(self, node: Scheduler) -> bool:
        view = self.clocks.get(node.node)
        return view is not None and view.id in self.clock.frozen

    async def settle(self) -> None:
        await self.clock.settled()
        for node in self.nodes:
            if not self.frozen(node):
                await node.wait_idle()

    async def run_until(self, offset: float) -> None:
        """Advance the clock to T0 + offset, stopping at every instant someone waits for."""
        target = T0 + offset
        while True:
            await self.settle()
            deadline = self.clock.next_deadline()
            if deadline is None or deadline > target:
                self.clock.set(target)
                await self.settle()
                return
            self.clock.set(deadline)


def run(tmp_path: Path, body: Callable[[World], Awaitable[None]], start: float = T0,
        kind: str = "sqlite") -> None:
    async def main(url: str) -> None:
        clock = FakeClock(start)
        world = World(ScheduleStore(open_hub_database(url), clock=clock.now), clock)
        try:
            await body(world)
        finally:
            for node in world.nodes:
                await node.stop()
            world.store.db.close()

    with fresh_database(kind, tmp_path) as url:
        asyncio.run(main(url))
