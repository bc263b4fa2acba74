"""The demo hub the screenshots tool draws from when no ``--hub`` is given.

A hub subprocess (``python -m hub.cli serve``) on a free port, with a temporary
``WEBHUB_HOME``, a copy of the shipped jobs and an owner made by ``hub.cli user add``;
:func:`seed` gives a hub (this one or ``--hub`` with ``--seed``) the demo job, its
versions, some runs and schedules to look at."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the tool imports the console's modules as it needs them
    from console_app.client.connection import HubConnection

REPO = Path(__file__).resolve().parents[1]
DEMO_JOB = "demo_report"
DELETED_JOB = "old_report"   # saved twice and deleted: the Deleted jobs screen lists it
DEMO_CODE = ("/*\nName: Demo report\nDescription: Counts and lists, for the screenshots\n*/\n"
             "console.log('counting')\nconst items = ['alpha', 'beta', 'gamma']\n"
             "console.warn('half way')\nconst total = items.length\n"
             "return { total, items, nested: { ok: true } }\n")


@contextmanager
def demo_hub(work: Path) -> Iterator[tuple[str, str]]:
    """(url, owner token) of a fresh hub process with the shipped jobs."""
    import socket

    jobs = work / "jobs"
    if (REPO / "jobs").is_dir():
        shutil.copytree(REPO / "jobs", jobs)  # a copy: the demo's saves stay out of the repo
    jobs.mkdir(exist_ok=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
    env.update({"WEBHUB_HOME": str(work / "home"), "WEBJOB_JOBS_DIR": str(jobs),
                "WEBHUB_NODE": "demo-node"})
    with open(work / "hub.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "hub.cli", "serve", "--port", str(port)],
                                cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc)
        made = subprocess.run([sys.executable, "-m", "hub.cli", "user", "add", "owner",
                               "--class", "OWNER"], env=env, capture_output=True, text=True,
                              timeout=60, check=True)
        yield url, made.stdout.strip()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the demo hub exited at start")
        try:
            if httpx.get(f"{url}/api/webjobs/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)  # a starting process: nothing to await
    raise RuntimeError("the demo hub did not become healthy")


def seed(conn: HubConnection) -> None:
    """Versions, history (a success and a failure) and schedules to look at."""
    from console_app.client import jobs
    from console_app.client.errors import HubUnreachable
    from console_app.client.schedules import ScheduleDraft, create_schedule
    from shared.errors import WebJobsError

    jobs.save(conn, DEMO_JOB, DEMO_CODE.replace("'gamma'", "'gamma', 'delta'"))
    jobs.save(conn, DEMO_JOB, DEMO_CODE)
    jobs.save(conn, "demo_fails",
              "/*\nName: Fails on purpose\n*/\nconsole.log('trying')\nthrow new Error('no')")
    for version in (1, 2):
        jobs.save(conn, DELETED_JOB, DEMO_CODE.replace("Demo report", f"Old report {version}"))
    jobs.delete(conn, DELETED_JOB)
    for name, params in ((DEMO_JOB, {}), ("public_ping", {"who": "ann"}), ("demo_fails", {}),
                         (DEMO_JOB, {"apiToken": "s3cret-token", "days": 7})):
        try:
            conn.fetch("POST", f"/api/webjobs/{name}", json=params)
        except WebJobsError as err:
            if isinstance(err, HubUnreachable):
                raise
    for name, cron, enabled in (("Nightly report", "30 2 * * 1-5", True),
                                ("Ping each hour", "0 * * * *", False)):
        try:
            create_schedule(conn, ScheduleDraft(name, DEMO_JOB if enabled else "public_ping",
                                                cron, "Europe/London", enabled=enabled))
        except WebJobsError as err:  # seeded before: the schedule is there already
            if isinstance(err, HubUnreachable):
                raise
