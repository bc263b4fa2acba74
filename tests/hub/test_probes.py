"""The orchestrator's probes on a real hub: /healthz answers while the process does,
/readyz says 503 and why while no worker can be had, a store cannot be reached or
the hub database's schema is behind; neither asks for a sign-in."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.hub.conftest import HubProcess
from tests.hub.test_faults import wait_until
from tests.servers import database_name, fresh_database, pg_admin

SLOW = "/*\nRuntime: 30000\n*/\nawait new Promise(r => setTimeout(r, Number(params.ms)))\n" \
       "return 'done'"


def reason_codes(answer: httpx.Response) -> set[str]:
    body: dict[str, Any] = answer.json()
    assert answer.status_code == 503 and body["ok"] is False, (answer.status_code, body)
    for reason in body["reasons"]:
        assert set(reason) == {"code", "text"} and reason["text"], reason
    return {reason["code"] for reason in body["reasons"]}


def readyz(hub: HubProcess) -> httpx.Response:
    return httpx.get(f"{hub.url}/api/webjobs/readyz", timeout=10)


def not_ready_with(hub: HubProcess, code: str) -> Callable[[], bool]:
    """The store checks are kept for a second: the change shows within that."""
    def check() -> bool:
        answer = readyz(hub)
        return answer.status_code == 503 and code in reason_codes(answer)
    return check


def test_both_probes_answer_200_without_a_sign_in(hub: HubProcess) -> None:
    health = httpx.get(f"{hub.url}/api/webjobs/healthz", timeout=10)
    assert health.status_code == 200 and health.json() == {"ok": True}
    ready = readyz(hub)
    assert ready.status_code == 200 and ready.json() == {"ok": True}
    assert ready.headers["cache-control"] == "no-store"
    assert httpx.head(f"{hub.url}/api/webjobs/readyz", timeout=10).status_code == 200
    assert httpx.get(f"{hub.url}/api/webjobs/health", timeout=10).json()["ok"] is True


def test_the_probe_command_ignores_a_proxy_in_the_environment(hub: HubProcess) -> None:
    """The healthcheck asks its own hub on loopback; a proxy (here one that answers
    nothing) set for the container's outward traffic must not stand in between."""
    address = urllib.parse.urlsplit(hub.url)
    env = {k: v for k, v in os.environ.items() if k.lower() not in _PROXY_VARIABLES}
    dead_proxy = "http://127.0.0.1:9"
    env |= {"HTTP_PROXY": dead_proxy, "http_proxy": dead_proxy, "ALL_PROXY": dead_proxy}
    done = subprocess.run([sys.executable, "-m", "hub.probe", "readyz", "--host",
                           str(address.hostname), "--port", str(address.port)],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


_PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}


def test_not_ready_while_every_slot_is_busy_and_runs_wait(start_hub) -> None:  # type: ignore[no-untyped-def]
    # One place on the node: one worker, one run at a time on it.
    hub: HubProcess = start_hub({"WEBJOB_MAX_CONCURRENT": "1", "WEBJOB_SPARE_WORKERS": "0",
                                 "WEBJOB_RUNS_PER_WORKER": "1",
                                 "WEBJOB_QUEUE_TIMEOUT_MS": "20000"}, {"public_slow": SLOW})
    answers: list[int] = []

    def call(ms: int) -> None:
        with hub.client() as c:
            answers.append(c.get("/api/webjobs/public_slow", params={"ms": ms}).status_code)

    runs = [threading.Thread(target=call, args=(4000,))]
    runs[0].start()

    def metrics() -> dict[str, Any]:
        answer: dict[str, Any] = httpx.get(f"{hub.url}/api/webjobs/health", timeout=10).json()
        return answer

    wait_until(lambda: metrics()["workersRunning"] == 1)
    runs.append(threading.Thread(target=call, args=(1,)))
    runs[1].start()
    wait_until(lambda: metrics()["workersQueued"] == 1)
    busy = readyz(hub)
    assert reason_codes(busy) == {"no-worker"}
    assert httpx.get(f"{hub.url}/api/webjobs/healthz", timeout=10).status_code == 200
    for run in runs:
        run.join(30)
    assert answers == [200, 200]
    assert readyz(hub).status_code == 200


def test_not_ready_while_the_sql_history_database_refuses_connections(  # type: ignore[no-untyped-def]
        start_hub, tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        name = database_name(url)
        hub: HubProcess = start_hub({"WEBHUB_DB": url, "WEBJOB_HISTORY_STORE": "sql"})
        assert readyz(hub).status_code == 200
        pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
        try:
            pg_admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = %s", [name])
            wait_until(not_ready_with(hub, "history-store"))
            answer = readyz(hub)
            assert "hub-database" in reason_codes(answer)
            assert name not in answer.text and "127.0.0.1" not in answer.text
            assert httpx.get(f"{hub.url}/api/webjobs/healthz", timeout=10).status_code == 200
        finally:
            pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true")
        wait_until(lambda: readyz(hub).status_code == 200)
        hub.stop()


def test_not_ready_while_a_migration_is_pending(start_hub) -> None:  # type: ignore[no-untyped-def]
    hub: HubProcess = start_hub()
    assert readyz(hub).status_code == 200
    db = hub.home / "hub.db"
    with sqlite3.connect(db) as conn:
        (newest,) = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        older = f"{int(newest) - 1:04d}"
        conn.execute("UPDATE alembic_version SET version_num = ?", (older,))
    wait_until(not_ready_with(hub, "schema-pending"))
    assert newest in readyz(hub).json()["reasons"][0]["text"]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = ?", (newest,))
    wait_until(lambda: readyz(hub).status_code == 200)
