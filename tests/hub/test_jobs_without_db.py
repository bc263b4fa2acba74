"""Runs keep answering while the hub database is down: a node (its catalog started, as
the hub starts it, and its runner with a real engine) runs the jobs it has loaded
from its copies with PostgreSQL refusing connections; a job it never loaded, and a
save, fail at once with StoreUnavailable; once the database is back, another node's
save made meanwhile is what runs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.auth import ANONYMOUS
from hub.engine.engine import EngineConfig
from hub.engine.threaded import ThreadedEngine
from hub.services.catalog import Catalog
from hub.services.runs import JobRunner
from hub.settings import load_settings
from hub.store.dbjobs import DbJobStore
from shared.errors import StoreUnavailable
from tests.store.test_job_cache import (
    FAST_S,
    eventually,
    open_node,
    pg_name,
    pinned_backend,
    refusing_connections,
)

__all__ = ["open_node", "pg_name"]  # fixtures, taken from the store's tests

PING = "/*\nAccess: public\n*/\nreturn { pong: 'before' }"


@pytest.fixture(scope="module")
def engine() -> Iterator[ThreadedEngine]:
    harness = ThreadedEngine(EngineConfig(max_concurrent=1, spare_workers=0,
                                          queue_timeout_ms=10_000))
    yield harness
    harness.close()


class Node:
    """One hub node's job path: catalog (started) and runner on its own job store."""

    def __init__(self, store: DbJobStore, engine: ThreadedEngine, home: Path) -> None:
        settings = load_settings({"WEBHUB_HOME": str(home), "WEBHUB_SECRET": "s",
                                  "WEBHUB_SYSTEM_TOKEN": "t", "WEBJOB_STORE": "db"})
        self.engine = engine
        self.store = store
        self.runner = JobRunner(settings, store, engine.engine)
        self.catalog = Catalog(store, self.runner, engine.engine)
        engine.call(self.catalog.start())

    def run(self, name: str) -> Any:
        async def load_and_run() -> Any:
            job = await self.runner.load(name)
            result = await self.runner.run(job, caller=ANONYMOUS, params={},
                                           request={"method": "GET"})
            assert result.ok, result.error and result.error.message
            return json.loads(result.body)

        return self.engine.call(load_and_run())

    def save(self, name: str, code: str) -> Any:
        return self.engine.call(self.catalog.save(name, code, "tester"))

    def close(self) -> None:
        self.engine.call(self.catalog.close())


@pytest.mark.expected_warning
def test_runs_answer_from_the_nodes_copies_while_postgresql_is_down(
        open_node: Callable[..., DbJobStore], pg_name: str, engine: ThreadedEngine,
        tmp_path: Path) -> None:
    writer = open_node(pool_size=1)  # its one connection outlives the outage
    node = Node(open_node(), engine, tmp_path)
    try:
        writer.save("public_ping", PING)
        writer.save("public_unread", PING)
        eventually(lambda: node.store.resyncs >= 1)  # started by the catalog: listening
        assert node.run("public_ping") == {"pong": "before"}

        with refusing_connections(pg_name, keep=(pinned_backend(writer),)):
            for _ in range(5):
                assert node.run("public_ping") == {"pong": "before"}
            with pytest.raises(StoreUnavailable, match="has not loaded it"):
                node.run("public_unread")
            began = time.monotonic()
            with pytest.raises(StoreUnavailable):
                node.save("public_ping", PING.replace("before", "refused"))
            assert time.monotonic() - began < FAST_S
            writer.save("public_ping", PING.replace("before", "meanwhile"))

        eventually(lambda: node.run("public_ping") == {"pong": "meanwhile"})
        assert node.run("public_unread") == {"pong": "before"}
        node.save("public_ping", PING.replace("before", "after"))
        assert node.run("public_ping") == {"pong": "after"}  # its own save, at once
    finally:
        node.close()
