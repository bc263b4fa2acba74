"""The cluster's heartbeats as the scheduler asks them (RegistryLiveness over a real
NodeRegistry), and a dead node's run taken over through them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hub.cluster.nodes import NodeRegistry, NodeStore
from hub.schedule.store import OpenRun, ScheduleStore
from hub.services.scheduling import RegistryLiveness
from hub.store.hubdb import open_hub_database
from tests.schedule.world import T0, FakeClock, World
from tests.servers import database_nodes


def test_the_nodes_beating_are_alive(tmp_path: Path) -> None:
    with database_nodes("postgresql", tmp_path) as node:
        db = node()
        store = NodeStore(db)
        a, b = NodeRegistry(store, "a", 30), NodeRegistry(store, "b", 30)
        a.claim()
        liveness = RegistryLiveness(a)
        assert liveness.alive_nodes() == {"a"}
        b.claim()
        assert liveness.alive_nodes() == {"a", "b"}
        db.write("UPDATE webhub_nodes SET beat = beat - 100 WHERE node = 'b'")
        assert liveness.alive_nodes() == {"a"}                     # stopped beating
        db.write("DELETE FROM webhub_nodes WHERE node = 'b'")      # swept and forgotten
        assert liveness.alive_nodes() == {"a"}


def test_a_node_on_sqlite_is_alone_and_alive(tmp_path: Path) -> None:
    db = open_hub_database(f"sqlite:///{tmp_path / 'hub.db'}")
    try:
        a, b = NodeRegistry(NodeStore(db), "a", 30), NodeRegistry(NodeStore(db), "b", 30)
        a.claim()
        b.claim()
        assert RegistryLiveness(a).alive_nodes() == {"a"}  # no beats there, none read
    finally:
        db.close()


def test_a_forgotten_node_s_run_is_taken_over(tmp_path: Path) -> None:
    async def main() -> None:
        clock = FakeClock(T0)
        db = open_hub_database(f"sqlite:///{tmp_path / 'hub.db'}")
        world = World(ScheduleStore(db, clock=clock.now), clock)
        sid = world.add("0 0 * * *")
        # A run of node "gone", which left no heartbeat row at all.
        world.store.begin_runs([OpenRun(sid, "2026-11-19T00:00:00Z", "gone", T0, 0,
                                        "scheduled", "job_gone")])
        registry = NodeRegistry(NodeStore(db), "a", 30)
        registry.claim()
        node = world.node("a", liveness=RegistryLiveness(registry))
        try:
            await node.start()
            await world.run_until(4)
            assert world.jobs.interrupted == []                    # suspected only
            registry.beat()
            await world.run_until(16)
            ((gone, firing, name),) = world.jobs.interrupted
            assert (gone, firing.job_id, name) == (sid, "job_gone", "gone")
        finally:
            await node.stop()
            db.close()

    asyncio.run(main())
