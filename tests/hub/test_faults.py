"""Faults through a real hub: each run ends with the right code, the hub keeps answering."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable

import httpx
import psutil

from tests.hub.conftest import AUTH, HubProcess
from tests.hub.fuzz_support import whole_pool

HTML = {"Accept": "application/json"}
SLOW = "/*\nRuntime: 30000\n*/\nconsole.log('running')\n" \
       "await new Promise(r => setTimeout(r, Number(params.ms || 20000)))\nreturn 'done'"


def wait_until(check: Callable[[], bool], timeout: float = 10) -> None:
    """Bounded polling of another process's state (there is no event to await)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def running(client: httpx.Client) -> list[dict[str, object]]:
    return list(client.get("/api/webjobs/running", headers=AUTH).json()["running"])


def assert_answers(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/public_ping", params={"who": "after"}, headers=HTML)
    assert resp.status_code == 200 and resp.json() == {"pong": "after"}


def test_kill_minus_nine_of_the_workers_mid_run(start_hub) -> None:  # type: ignore[no-untyped-def]
    hub: HubProcess = start_hub({"WEBJOB_MAX_CONCURRENT": "1"}, {"public_slow": SLOW})
    outcome: dict[str, httpx.Response] = {}

    def call() -> None:
        with hub.client() as c:
            outcome["resp"] = c.get("/api/webjobs/public_slow", headers=HTML)

    thread = threading.Thread(target=call)
    thread.start()
    with hub.client() as c:
        wait_until(lambda: len(running(c)) == 1)
        for child in psutil.Process(hub.proc.pid).children():
            os.kill(child.pid, signal.SIGKILL)
        thread.join(15)
        resp = outcome["resp"]
        assert resp.status_code == 500 and resp.json()["code"] == "JOB-001"
        assert "ended unexpectedly" in resp.json()["error"]
        assert_answers(c)


def test_a_job_that_allocates_four_gigabytes(client: httpx.Client) -> None:
    code = ("const hoard = []\nfor (let i = 0; i < 64; i++) { const b = new Uint8Array(64 << 20);"
            " b.fill(1); hoard.push(b) }\nreturn hoard.length")
    resp = client.post("/api/webjobs/execute", headers=AUTH,
                       files={"file": ("hog.job.js", b"/*\nMemory: 64\n*/\n" + code.encode())})
    failure = json.loads(resp.text.splitlines()[-1])
    assert (failure["code"], failure["limit"]) == ("JOB-003", "memory")
    assert_answers(client)


def test_a_job_that_spins_after_an_await(client: httpx.Client) -> None:
    code = b"/*\nCPU: 500\n*/\nawait null\nfor (;;) {}"
    resp = client.post("/api/webjobs/execute", headers=AUTH, files={"file": ("spin.job.js", code)})
    failure = json.loads(resp.text.splitlines()[-1])
    assert (failure["code"], failure["limit"]) == ("JOB-003", "cpu")
    assert failure["runtime"] < 10_000
    assert_answers(client)


def test_fifty_requests_for_four_places(start_hub) -> None:  # type: ignore[no-untyped-def]
    # two workers that hold two runs each: four places, and a short queue
    hub: HubProcess = start_hub({"WEBJOB_MAX_CONCURRENT": "2", "WEBJOB_RUNS_PER_WORKER": "2",
                                 "WEBJOB_QUEUE_TIMEOUT_MS": "300"},
                                {"public_nap": "await new Promise(r => setTimeout(r, 200))\n"
                                              "return 'rested'"})

    async def crowd() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=60)
        async with httpx.AsyncClient(base_url=hub.url, timeout=30, limits=limits) as c:
            return await asyncio.gather(*(c.get("/api/webjobs/public_nap", headers=HTML)
                                          for _ in range(50)))

    answers = asyncio.run(crowd())
    ok = [r for r in answers if r.status_code == 200]
    refused = [r for r in answers if r.status_code == 429]
    assert len(ok) + len(refused) == 50
    assert 4 <= len(ok) < 50 and refused
    assert all(r.json() == "rested" for r in ok)
    for r in refused:
        assert r.json()["code"] == "SYS-429" and int(r.headers["retry-after"]) >= 1
    with hub.client() as c:
        assert_answers(c)
        assert c.get("/api/webjobs/health").json()["workersQueued"] == 0


def test_disconnect_mid_run_stops_the_run(start_hub) -> None:  # type: ignore[no-untyped-def]
    hub: HubProcess = start_hub(jobs={"public_slow": SLOW})
    with hub.client() as c:
        with c.stream("GET", "/api/webjobs/public_slow", params={"enableLogger": "1"}) as resp:
            lines = resp.iter_lines()  # kept: dropping the iterator closes the connection
            assert json.loads(next(lines))["message"] == "running"
            assert len(running(c)) == 1
        wait_until(lambda: running(c) == [])
        assert_answers(c)


def test_disconnect_while_queued_leaves_the_queue(start_hub) -> None:  # type: ignore[no-untyped-def]
    hub: HubProcess = start_hub({"WEBJOB_MAX_CONCURRENT": "1"}, {"public_slow": SLOW})

    def health(c: httpx.Client) -> dict[str, int]:
        return dict(c.get("/api/webjobs/health").json())

    with hub.client() as c:
        def block() -> None:
            with hub.client() as bc:
                bc.get("/api/webjobs/public_slow", params={"ms": "1500"})

        blocker = threading.Thread(target=block)
        blocker.start()
        wait_until(lambda: len(running(c)) == 1)
        with hub.client() as queued, contextlib.suppress(httpx.ReadTimeout):
            queued.get("/api/webjobs/public_ping", timeout=0.3)  # gives up while queued
        wait_until(lambda: health(c)["workersQueued"] == 0)
        assert health(c)["workersRunning"] == 1
        blocker.join(10)
        assert_answers(c)


def outcomes(client: httpx.Client, job: str) -> list[str]:
    answer = client.get("/api/webjobs/history", params={"job": job}, headers=AUTH)
    return [run["outcome"] for run in answer.json()["runs"]]


def worker_pids(hub: HubProcess) -> set[int]:
    return {child.pid for child in psutil.Process(hub.proc.pid).children()}


def test_a_plain_caller_that_hangs_up_stops_a_long_run_alone(start_hub) -> None:  # type: ignore[no-untyped-def]
    hub: HubProcess = start_hub(jobs={"public_slow": SLOW})
    with hub.client() as c:
        whole_pool(c)  # every worker up: the pids below are the pool's, not a part of it
        before = worker_pids(hub)
        port = int(hub.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as caller:
            caller.sendall(b"GET /api/webjobs/public_slow HTTP/1.1\r\nHost: hub\r\n"
                           b"Accept: application/json\r\n\r\n")
            # Hung up only once the run is in flight (on a busy machine it may take a
            # while to start: hanging up before would stop no run at all).
            wait_until(lambda: running(c) != [], timeout=30)
        wait_until(lambda: running(c) == [])  # after its grace, the run is ended
        # ... in its worker's isolate alone (it was waiting): every worker is kept.
        assert worker_pids(hub) == before
        assert_answers(c)


def test_a_run_that_ends_within_its_grace_keeps_its_worker(start_hub) -> None:  # type: ignore[no-untyped-def]
    hub: HubProcess = start_hub(jobs={"public_slow": SLOW})
    with hub.client() as c:
        before = worker_pids(hub)
        with hub.client() as caller, contextlib.suppress(httpx.ReadTimeout):
            caller.get("/api/webjobs/public_slow", params={"ms": "400"}, headers=HTML,
                       timeout=0.3)  # hangs up ~0.1 s before the run ends
        wait_until(lambda: outcomes(c, "public_slow") == ["success"])
        assert worker_pids(hub) == before


def test_health_says_when_no_worker_can_be_had(start_hub) -> None:  # type: ignore[no-untyped-def]
    # one place: one worker, one run at a time on it
    hub: HubProcess = start_hub({"WEBJOB_MAX_CONCURRENT": "1", "WEBJOB_RUNS_PER_WORKER": "1"},
                                {"public_slow": SLOW})
    with hub.client() as c:
        assert c.get("/api/webjobs/health").json()["ok"] is True
        def call() -> None:
            with hub.client() as caller:
                caller.get("/api/webjobs/public_slow", params={"ms": "3000"}, headers=HTML)

        callers = [threading.Thread(target=call) for _ in range(2)]
        for caller in callers:
            caller.start()
        wait_until(lambda: c.get("/api/webjobs/health").json()["workersQueued"] == 1)
        busy = c.get("/api/webjobs/health")
        assert busy.status_code == 200 and busy.json()["ok"] is False
        assert "no worker" in busy.json()["problem"]
        for caller in callers:
            caller.join(15)
        assert c.get("/api/webjobs/health").json()["ok"] is True
