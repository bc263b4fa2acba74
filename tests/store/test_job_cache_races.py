"""hub.store.jobcache without a database: whatever the order of reads, changes,
their notifications, whole-cache checks and the listener's losses and reconnects,
once every notification is in no trusted copy is older than the job (the guarantee
a listening node runs on)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.store.base import StoredJob
from hub.store.jobcache import JobCache, Outage, Stamp

NAMES = ("a", "b")


def stamp(version: int) -> Stamp:
    return version, None, None, None


def job(name: str, version: int) -> StoredJob:
    return StoredJob(name, f"return {version}", 0.0, version)


@dataclass
class World:
    """The database (a version per job) and one node's cache, with what is in flight."""

    cache: JobCache = field(default_factory=JobCache)
    db: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NAMES, 1))
    notifications: list[str] = field(default_factory=list)
    # name, ticket, seen, whether the node listened when the read began
    reads: list[tuple[str, int, int, bool]] = field(default_factory=list)
    checks: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    listening: bool = True   # as DbJobStore._listening: the listener is connected

    def step(self, op: str, name: str, pick: int) -> None:
        if op == "change":  # a save somewhere; its notification comes later
            self.db[name] += 1
            if self.listening:  # else nobody hears it
                self.notifications.append(name)
        elif op == "deliver" and self.notifications:
            self.cache.distrust(self.notifications.pop(pick % len(self.notifications)))
        elif op == "start_read":  # the oldest thing the read can see: the job at its ticket
            self.reads.append((name, self.cache.ticket(), self.db[name], self.listening))
        elif op == "finish_read" and self.reads:
            read, ticket, seen, trusted = self.reads.pop(pick % len(self.reads))
            self.cache.put(read, job(read, seen), stamp(seen), ticket, trusted=trusted)
        elif op == "start_check":
            self.checks.append((self.cache.ticket(), dict(self.db)))
        elif op == "finish_check" and self.checks:
            ticket, seen_all = self.checks.pop(pick % len(self.checks))
            self.cache.revalidate({n: stamp(v) for n, v in seen_all.items()}, ticket,
                                  trust=self.listening)
        elif op == "lose":  # as DbJobStore._lost: nothing is heard until the resync
            self.listening = False
            self.notifications.clear()
            self.cache.distrust_all()
        elif op == "resync":  # the listener reconnected: what it missed is lost
            self.listening = True
            self.notifications.clear()
            self.cache.distrust_all()
            self.checks.append((self.cache.ticket(), dict(self.db)))


    def check_trusted(self) -> None:
        """A trusted copy is current, unless a notification for it is still on its way."""
        for name in NAMES:
            entry = self.cache.entry(name)
            if entry is not None and entry.trusted and name not in self.notifications:
                assert entry.stamp == stamp(self.db[name]), (name, entry, self.db)


OPS = st.sampled_from(["change", "deliver", "start_read", "finish_read", "start_check",
                       "finish_check", "lose", "resync"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(OPS, st.sampled_from(NAMES), st.integers(0, 5)), max_size=40))
def test_no_trusted_copy_is_older_than_its_job(steps: list[tuple[str, str, int]]) -> None:
    world = World()
    for op, name, pick in steps:
        world.step(op, name, pick)
        world.check_trusted()
    while world.notifications:
        world.step("deliver", "a", 0)
        world.check_trusted()


def test_while_the_listener_is_away_nothing_is_trusted() -> None:
    """A copy trusted before the loss, and a whole-cache check made meanwhile, would
    each hand out code older than a save nobody heard of."""
    world = World()
    for op in ("start_read", "finish_read", "lose", "start_check", "finish_check",
               "change", "start_read", "finish_read", "start_check", "change",
               "finish_check"):
        world.step(op, "a", 0)
        world.check_trusted()
    entry = world.cache.entry("a")
    assert entry is not None and not entry.trusted
    world.step("resync", "a", 0)
    world.step("finish_check", "a", -1)   # the resync's check: the copy is out of date
    for op in ("start_read", "finish_read"):
        world.step(op, "a", 0)
    entry = world.cache.entry("a")
    assert entry is not None and entry.trusted and entry.stamp == stamp(world.db["a"])


def test_an_unchanged_copy_keeps_its_code_object() -> None:
    cache = JobCache()
    first = cache.put("a", job("a", 1), stamp(1), cache.ticket(), trusted=False)
    again = cache.put("a", job("a", 1), stamp(1), cache.ticket(), trusted=False)
    assert again is first
    newer = cache.put("a", job("a", 2), stamp(2), cache.ticket(), trusted=False)
    assert newer.version == 2 and cache.entry("a") is not None


def test_a_check_forgets_a_deleted_job_and_distrusts_a_changed_one() -> None:
    cache = JobCache()
    for name in ("gone", "changed", "same"):
        cache.put(name, job(name, 1), stamp(1), cache.ticket(), trusted=True)
    stale = cache.revalidate({"changed": stamp(2), "same": stamp(1)}, cache.ticket(),
                             trust=True)
    assert stale == 2 and cache.entry("gone") is None
    changed, same = cache.entry("changed"), cache.entry("same")
    assert changed is not None and not changed.trusted
    assert same is not None and same.trusted


@pytest.mark.expected_warning
def test_an_outage_holds_for_a_moment_then_lets_one_probe(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    outage = Outage("The hub database", hold_s=1.0, clock=lambda: now[0])
    assert not outage.holding() and not outage.down
    outage.began("The hub database is unavailable")
    assert outage.holding() and outage.down
    outage.began("The hub database is unavailable")  # said once an outage
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    now[0] += 1.5
    assert not outage.holding() and outage.down  # time to ask again
    outage.ended()
    assert not outage.down
