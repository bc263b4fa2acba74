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

from hub.cluster.nodes import NodeEntry, NodeNameTaken, NodeRegistry, NodeStore, host_id
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
    on_sqlite = two_pools[0].kind == "sqlite"

    async def life() -> None:
        await registry.start()
        assert [n.node for n in NodeStore(two_pools[1]).nodes()] == ["gamma"]
        if on_sqlite:  # one node: its row is written once, and it never beats
            assert registry._task is not None
            await asyncio.wait_for(registry._task, 5)
        deadline = time.monotonic() + 5
        while not on_sqlite and len(beats) < 2:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await registry.stop()

    asyncio.run(life())
    assert beats == [] if on_sqlite else len(beats) >= 2
    assert NodeStore(two_pools[1]).nodes() == []


def _put_row(db: HubDatabase, entry: NodeEntry) -> None:
    NodeStore(db).nodes()  # the table made, if not yet
    db.write("INSERT INTO webhub_nodes (node, instance, host, pid, started, beat, url) "
             "VALUES (?, ?, ?, ?, ?, ?, ?)", (entry.node, entry.instance, entry.host, entry.pid,
                                              entry.started, entry.beat, entry.url))


def test_a_beating_node_of_another_pid_namespace_is_alive(
        two_pools: tuple[HubDatabase, HubDatabase]) -> None:
    """Containers sharing a host name (host network, an explicit hostname) each have their
    own process ids: a node is alive by its beats, whatever this host's process table."""
    me = NodeRegistry(NodeStore(two_pools[0]), "here", 30)
    me.claim()
    now, gone = time.time(), _gone_pid()
    _put_row(two_pools[1], NodeEntry("there", "t:1:aa", socket.gethostname(), gone, now - 60,
                                     now))
    _put_row(two_pools[1], NodeEntry("beside", "b:1:bb", host_id(), gone, now - 60, now))
    assert [n.node for n in me.store.alive(time.time(), 30)] == ["beside", "here", "there"]
    assert me.dead_nodes() == []
    # Its own name held from another PID namespace: it cannot tell, the beat decides.
    other = NodeRegistry(NodeStore(two_pools[1]), "there", 30)
    with pytest.raises(NodeNameTaken, match=f"host {socket.gethostname()},"):
        other.check_name_free()


def test_a_restarted_container_takes_its_name_back_at_once(
        two_pools: tuple[HubDatabase, HubDatabase]) -> None:
    """The row a killed hub left with this process's own id (a container's PID 1 again)
    is another start's: gone, whatever its beat says."""
    now = time.time()
    _put_row(two_pools[0], NodeEntry("delta", "old:1:cc", host_id(), os.getpid(), now - 2,
                                     now - 1))
    again = NodeRegistry(NodeStore(two_pools[1]), "delta", 30)
    again.check_name_free()
    earlier = again.claim()
    assert earlier is not None and earlier.instance == "old:1:cc"


def test_a_process_id_taken_since_by_another_process_holds_no_name(
        two_pools: tuple[HubDatabase, HubDatabase]) -> None:
    """A running process that started after the row was written is not the row's."""
    _put_row(two_pools[0], NodeEntry("eps", "old:2:dd", host_id(), os.getppid(), 1.0,
                                     time.time()))
    NodeRegistry(NodeStore(two_pools[1]), "eps", 30).claim()


def test_a_sqlite_node_is_alone_and_its_name_held_while_its_process_runs(
        tmp_path: Path) -> None:
    with database_nodes("sqlite", tmp_path) as node:
        one, two = node(), node()
        solo = NodeRegistry(NodeStore(one), "solo", 0.3)
        solo.claim()
        now = time.time()
        _put_row(one, NodeEntry("other", "o:1:ee", host_id(), os.getppid(), now, now))
        assert solo.alive_names() == ["solo"]  # not read: a SQLite hub is one node
        # No beats, long past the timeout: the holder's process runs, the name is held.
        one.write("UPDATE webhub_nodes SET pid = ?, beat = ? WHERE node = ?",
                  (os.getppid(), now - 60, "solo"))
        with pytest.raises(NodeNameTaken):
            NodeRegistry(NodeStore(two), "solo", 0.3).check_name_free()
        one.write("UPDATE webhub_nodes SET pid = ? WHERE node = ?", (_gone_pid(), "solo"))
        NodeRegistry(NodeStore(two), "solo", 0.3).claim()
