"""The readiness checks' economy: one round of store checks a second however many
probes come, and an answer in bounded time while a check hangs."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.services.readiness import CHECKS_SLOW, NO_WORKER, Readiness, Reason
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.migrations import upgrade
from shared.errors import StoreUnavailable


class Engine:
    def __init__(self) -> None:
        self.free = True

    async def ready(self, wait_s: float = 1.0) -> bool:
        return self.free


class Store:
    def __init__(self) -> None:
        self.calls = 0
        self.down = False
        self.release = threading.Event()
        self.release.set()

    def reachable(self) -> None:
        self.calls += 1
        self.release.wait(10)
        if self.down:
            raise StoreUnavailable("The store at postgresql://u:secret@db/x is down")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def hub_db(tmp_path: Path) -> Iterator[HubDatabase]:
    db = open_hub_database(f"sqlite:///{tmp_path / 'hub.db'}")
    upgrade(db)
    yield db
    db.close()


def test_a_storm_of_probes_makes_one_round_of_checks_a_second(hub_db: HubDatabase) -> None:
    jobs, history, clock = Store(), Store(), Clock()
    readiness = Readiness(Engine(), jobs, history, hub_db, clock=clock)

    async def storm() -> list[list[Reason]]:
        return list(await asyncio.gather(*(readiness.reasons() for _ in range(50))))

    assert asyncio.run(storm()) == [[]] * 50
    assert (jobs.calls, history.calls, readiness.rounds) == (1, 1, 1)
    clock.now += 0.5
    history.down = True
    assert asyncio.run(readiness.reasons()) == []  # still the kept round
    clock.now += 0.6
    reasons = asyncio.run(readiness.reasons())
    assert [r.code for r in reasons] == ["history-store"] and readiness.rounds == 2
    assert "secret" not in reasons[0].text and "postgresql" not in reasons[0].text


def test_a_hanging_check_is_reported_and_not_started_twice(hub_db: HubDatabase) -> None:
    jobs, engine = Store(), Engine()
    jobs.release.clear()
    engine.free = False
    readiness = Readiness(engine, jobs, Store(), hub_db, timeout_s=0.05)

    async def twice() -> tuple[list[Reason], list[Reason]]:
        first = await readiness.reasons()
        second = await readiness.reasons()
        jobs.release.set()
        assert readiness._checking is not None
        await readiness._checking
        return first, second

    first, second = asyncio.run(twice())
    assert first == second == [NO_WORKER, CHECKS_SLOW]
    assert jobs.calls == 1 and readiness.rounds == 1


def test_a_database_behind_this_code_is_not_ready(tmp_path: Path) -> None:
    db = open_hub_database(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        reasons = asyncio.run(Readiness(Engine(), Store(), Store(), db).reasons())
    finally:
        db.close()
    assert [r.code for r in reasons] == ["schema-pending"]
    assert "webhub db upgrade" in reasons[0].text


def test_an_up_to_date_schema_is_read_on_the_pool(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Probed every second, the schema check opens no connection of its own: the
    revision is read on one the database's pool already holds."""
    from hub.store.migrations import runner

    db = open_hub_database(f"sqlite:///{tmp_path / 'hub.db'}")
    try:
        upgrade(db)

        def opens_a_connection(_db: HubDatabase) -> None:
            raise AssertionError("the schema check opened a connection of its own")
        monkeypatch.setattr(runner, "_connected", opens_a_connection)
        reasons = asyncio.run(Readiness(Engine(), Store(), Store(), db).reasons())
    finally:
        db.close()
    assert reasons == []
