"""Three real hub processes on one fresh PostgreSQL database: a cluster as an
operator runs it (``WEBJOB_STORE=db``, SQL history, one secret, limits in Redis).

PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) run on this machine; ``make
test`` starts them when they are down. Each cluster gets its own database (dropped
after) and its own secret, so its limits' Redis keys (under ``webjobs:<cluster>:``,
derived from the secret) are its own. The tests that stop PostgreSQL itself start it
again before they end, whatever happens."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, assert_clean_log, launch_hub
from tests.servers import fresh_database

REDIS_DB = 11  # the cluster tests' Redis database
PG_VERSION = next(iter(sorted(os.listdir("/etc/postgresql"))), "15") if os.path.isdir(
    "/etc/postgresql") else "15"


@dataclass
class Cluster:
    db_url: str
    root: Path
    env: dict[str, str]
    jobs: dict[str, str]
    nodes: list[HubProcess] = field(default_factory=list)
    down: set[int] = field(default_factory=set)

    def start_node(self, index: int, **extra: str) -> HubProcess:
        env = {**self.env, "WEBHUB_NODE": f"node-{index}", **extra}
        node = launch_hub(self.root / f"n{index}-{len(self.nodes)}", env, self.jobs)
        if index < len(self.nodes):
            self.nodes[index] = node
        else:
            self.nodes.append(node)
        self.down.discard(index)
        return node

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """``webhub`` with the cluster's settings (its database, its secret)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
        env |= {**self.env, "WEBHUB_HOME": str(self.root / "cli-home")}
        return subprocess.run([sys.executable, "-m", "hub.cli", *args], input=stdin, env=env,
                              capture_output=True, text=True, timeout=60, check=False)

    def add_user(self, name: str, password: str, user_class: str = "USER") -> str:
        """A user in the cluster's database, with a password; its API token."""
        made = self.cli("user", "add", name, "--class", user_class)
        assert made.returncode == 0, made.stderr
        done = self.cli("user", "passwd", name, stdin=password + "\n")
        assert done.returncode == 0, done.stderr
        return made.stdout.strip()

    def client(self, index: int, *, owner: bool = True) -> httpx.Client:
        return self.nodes[index].client(headers=AUTH if owner else {})

    def kill(self, index: int) -> None:
        """kill -9: nothing of the node's own shutdown runs."""
        self.nodes[index].proc.send_signal(signal.SIGKILL)
        self.nodes[index].proc.wait(10)
        self.down.add(index)

    def pause(self, index: int) -> None:
        self.nodes[index].proc.send_signal(signal.SIGSTOP)

    def resume(self, index: int) -> None:
        self.nodes[index].proc.send_signal(signal.SIGCONT)


@pytest.fixture
def cluster_of(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """``cluster_of(3, jobs, **env)``: that many nodes on one fresh database."""
    made: list[Cluster] = []
    with contextlib.ExitStack() as stack:
        def make(count: int, jobs: dict[str, str], **env: str) -> Cluster:
            url = stack.enter_context(fresh_database("postgresql", tmp_path))
            base = {"WEBHUB_DB": url, "WEBJOB_STORE": "db", "WEBJOB_HISTORY_STORE": "sql",
                    "WEBHUB_SECRET": secrets.token_urlsafe(32),
                    "WEBHUB_REDIS_URL": f"redis://127.0.0.1:6379/{REDIS_DB}",
                    "WEBHUB_NODE_TIMEOUT_S": "3", **env}
            cluster = Cluster(url, tmp_path, base, jobs)
            made.append(cluster)
            for index in range(count):
                cluster.start_node(index)
            with cluster.client(0) as client:  # the shipped jobs and the test's, in the database
                imported = client.post("/api/webjobs/store/import-files", json={})
                assert imported.status_code == 200, imported.text
            return cluster

        try:
            yield make
        finally:
            for cluster in made:
                for index, node in enumerate(cluster.nodes):
                    node.proc.send_signal(signal.SIGCONT)
                    node.stop()
                    if index not in cluster.down:
                        assert_clean_log(node)


@contextlib.contextmanager
def postgresql_stopped() -> Iterator[None]:
    """The whole PostgreSQL server down for the block, started again after it."""
    ctl = ["pg_ctlcluster", "--skip-systemctl-redirect", PG_VERSION, "main"]
    subprocess.run([*ctl, "stop", "-m", "fast"], check=True, timeout=60)
    try:
        yield
    finally:
        subprocess.run([*ctl, "start"], check=True, timeout=60)
        subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-t", "30"], check=True,
                       timeout=40)
