"""Heartbeats on the hub database: one live start per node name, dead nodes found
after the timeout, and one node taking over a dead one's leftovers."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.cluster.nodes import NodeEntry, NodeNameTaken, NodeRegistry, NodeStore
from hub.store.hubdb import HubDatabase
from tests.servers import database_nodes


@pytest.fixture(params=["sqlite", "postgresql", "postgresql-odbc", "mariadb"])
def two_pools(request: pytest.FixtureRequest,
              tmp_path: Path) -> Iterator[tuple[HubDatabase, HubDatabase]]:
    with database_nodes(request.param, tmp_path) as node:
        yield node(), node()


def _gone_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_second_live_start_of_a_name_is_refused(
        two_pools: tuple[HubDatabase, HubDatabase]) -> None:
    one = NodeRegistry(NodeStore(two_pools[0]), "alpha", 30)
    two = NodeRegistry(NodeStore(two_pools[1]), "alpha", 30)
    assert one.claim() is None
    # Another live process of this host holds it (the parent of this test: alive).
    holder = NodeEntry("alpha", one.instance, socket.gethostname(), os.getppid(), time.time(),
                       time.time())
    two_pools[0].write("UPDATE webhub_nodes SET pid = ? WHERE node = ?", (holder.pid, "alpha"))
    with pytest.raises(NodeNameTaken, match="WEBHUB_NODE=alpha is already in use"):
        two.claim()
    with pytest.raises(NodeNameTaken):
        two.check_name_free()
    assert [n.node for n in two.alive_nodes()] == ["alpha"]


def test_a_name_left_by_a_killed_process_is_taken_at_once(
        two_pools: tuple[HubDatabase, HubDatabase]) -> None:
    one = NodeRegistry(NodeStore(two_pools[0]), "beta", 30)
    one.claim()
    two_pools[0].write("UPDATE webhub_nodes SET pid = ? WHERE node = ?", (_gone_pid(), "beta"))
    two = NodeRegistry(NodeStore(two_pools[1]), "beta", 30)
    two.check_name_free()
    earlier = two.claim()
    assert earlier is not None and earlier.instance == one.instance
    assert [n.instance for n in two.alive_nodes()] == [two.instance]


@pytest.mark.expected_warning  # the stalled node says it was taken for dead
def test_a_node_without_beats_is_dead_and_taken_over_once(
        two_pools: tuple[HubDatabase, HubDatabase]) -> None:
    quiet = NodeRegistry(NodeStore(two_pools[0]), "quiet", 0.3)
    live = NodeRegistry(NodeStore(two_pools[1]), "live", 0.3)
    quiet.claim()
    live.claim()
    deadline = time.monotonic() + 5
    while not live.dead_nodes():
        live.beat()
        assert time.monotonic() < deadline, "the quiet node never became dead"
        time.sleep(0.05)
    live.beat()
    [dead] = live.dead_nodes()
    assert dead.node == "quiet" and [n.node for n in live.alive_nodes()] == ["live"]
    assert live.store.take_over(dead, "live")
    assert not NodeStore(two_pools[0]).take_over(dead, "other")  # the row changed
    # The stalled node comes back: its beat finds its row taken and it joins again.
    assert not quiet.store.beat("quiet", quiet.instance, time.time())
    quiet.beat()
    assert {n.node for n in live.alive_nodes()} == {"quiet", "live"}


def test_the_lifespan_beats_and_leaves_cleanly(
        two_pools: tuple[HubDatabase, HubDatabase]) -> None:
    registry = NodeRegistry(NodeStore(two_pools[0]), "gamma", 0.6)
    beats: list[float] = []
    registry.every_beat(lambda: beats.append(time.time()))

    async def life() -> None:
        await registry.start()
        deadline = time.monotonic() + 5
        while len(beats) < 2:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await registry.stop()

    asyncio.run(life())
    assert NodeStore(two_pools[1]).nodes() == []
