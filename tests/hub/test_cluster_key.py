"""One cluster, one key: a node whose WEBHUB_SECRET differs from the cluster's refuses
to start (hub.store.keycheck), on a fresh PostgreSQL database with two secrets."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.settings import load_settings
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.keycheck import KEY_CHECK_TABLE, check_cluster_key, key_check_value
from hub.store.migrations import prepare_at_start, upgrade
from shared.errors import InternalError
from tests.store.test_migrations import database_url

REPO = Path(__file__).resolve().parents[2]
FIRST = "the-cluster-secret"
OTHER = "another-secret"


@contextlib.contextmanager
def postgresql(tmp_path: Path) -> Iterator[tuple[str, Callable[[], HubDatabase]]]:
    """A fresh, upgraded PostgreSQL database (psycopg) and a way to open one more
    node's pool on it; all closed afterwards."""
    opened: list[HubDatabase] = []

    def node() -> HubDatabase:
        opened.append(open_hub_database(url))
        return opened[-1]

    with database_url("postgresql", tmp_path) as url:
        try:
            upgrade(node())
            yield url, node
        finally:
            for db in opened:
                db.close()


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_the_check_value_tells_nothing_of_the_secret(one: str, two: str) -> None:
    value = key_check_value(one)
    assert value == key_check_value(one) and len(value) == 64
    assert (value == key_check_value(two)) == (one == two)
    assert one not in value or len(one) < 8  # a short secret may be hex by chance
    assert value != hashlib.sha256(one.encode()).hexdigest()
    assert value != hmac.new(one.encode(), b"", hashlib.sha256).hexdigest()


def test_a_node_with_another_secret_refuses_to_start(tmp_path: Path) -> None:
    with postgresql(tmp_path) as (url, node):
        check_cluster_key(node(), FIRST)  # the first node writes the check
        check_cluster_key(node(), FIRST)  # a second node with the same key starts
        with pytest.raises(InternalError, match="WEBHUB_SECRET differs"):
            check_cluster_key(node(), OTHER)
        stored = node().read(f"SELECT label, check_value FROM {KEY_CHECK_TABLE}")
        assert stored == [("cluster-key", key_check_value(FIRST))]
        assert FIRST not in stored[0][1]
        # What the hub does at start: the same refusal before any store is opened.
        env = {"WEBHUB_HOME": str(tmp_path / "home"), "WEBHUB_DB": url}
        prepare_at_start(load_settings({**env, "WEBHUB_SECRET": FIRST}))
        with pytest.raises(InternalError, match="WEBHUB_SECRET"):
            prepare_at_start(load_settings({**env, "WEBHUB_SECRET": OTHER}))


def test_nodes_starting_at_once_agree_on_one_key(tmp_path: Path) -> None:
    with postgresql(tmp_path) as (_, node):
        secrets = [FIRST, FIRST, OTHER, OTHER]
        databases = [node() for _ in secrets]
        refused: list[str] = []
        started: list[str] = []
        start = threading.Barrier(len(secrets))

        def begin(db: HubDatabase, secret: str) -> None:
            start.wait(timeout=30)
            try:
                check_cluster_key(db, secret)
                started.append(secret)
            except InternalError:
                refused.append(secret)

        threads = [threading.Thread(target=begin, args=pair)
                   for pair in zip(databases, secrets, strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        # Whichever wrote first, the nodes with its key start and the others do not.
        assert len(set(started)) == 1 and sorted(started + refused) == sorted(secrets)
        assert len(started) == 2


def test_webhub_serve_with_another_secret_exits_naming_it(tmp_path: Path) -> None:
    with postgresql(tmp_path) as (url, node):
        check_cluster_key(node(), FIRST)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
        env.update({"WEBHUB_HOME": str(tmp_path / "home"), "WEBHUB_DB": url,
                    "WEBHUB_SECRET": OTHER, "WEBJOB_JOBS_DIR": str(tmp_path / "jobs")})
        done = subprocess.run([sys.executable, "-m", "hub.cli", "serve", "--port", "1"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "WEBHUB_SECRET differs" in done.stderr and "refuses to start" in done.stderr
    assert OTHER not in done.stderr and FIRST not in done.stderr
