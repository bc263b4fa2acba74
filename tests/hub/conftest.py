"""A real hub process on a free port, talked to over HTTP with httpx.

``hub`` is one shared hub (the shipped jobs plus ``EXTRA_JOBS``); ``start_hub``
starts a private one with its own settings for tests that need them. Every hub's
log is checked at the end: no tracebacks."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
TOKEN = "test-system-token"
# Every test hub's WEBHUB_SECRET unless a test sets one: the hubs of one test are one
# cluster (a node with another secret refuses to start on a shared database).
TEST_SECRET = "test-cluster-secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

EXTRA_JOBS = {
    "echo": "/*\nName: Echo\nAccess: user\n*/\n"
            "return { params, method: request.method, headers: request.headers, "
            "query: request.query, caller: request.caller }",
    "public_echo": "return { params, method: request.method, headers: request.headers }",
    "public_slow": "/*\nRuntime: 20000\n*/\nconsole.log('started')\n"
                   "await new Promise(r => setTimeout(r, Number(params.ms || 10000)))\n"
                   "console.log('finished')\nreturn { slept: Number(params.ms || 10000) }",
    "public_fail": "throw new Error('public failure')",
    "public_page": "/*\nMode: page\n*/\nreturn response.html('<p>hi</p>')",
    "public_own_csp": "return response.raw('<p>x</p>', {'Content-Type': 'text/html', "
                      "'Content-Security-Policy': \"default-src 'none'\"})",
    "public_dates": "const { format } = require('date-fns')\n"
                    "return format(new Date(Date.UTC(2026, 10, 29)), 'd MMM yyyy')",
    "public_files": "if (params.kind === 'csv') return response.csv('a,b\\n1,2', 'staff.csv')\n"
                    "if (params.kind === 'redirect') return response.redirect('/elsewhere')\n"
                    "return response.pdf('JVBERi0=', 'r.pdf')",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class HubProcess:
    url: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    jobs_dir: Path
    home: Path

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """``webhub`` against this hub's data folder (a real subprocess)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
        env |= {"WEBHUB_HOME": str(self.home), "WEBJOB_JOBS_DIR": str(self.jobs_dir)}
        return subprocess.run([sys.executable, "-m", "hub.cli", *args], input=stdin, env=env,
                              capture_output=True, text=True, timeout=60, check=False)

    def add_user(self, name: str, user_class: str = "USER", password: str | None = None) -> str:
        """Create a user through the CLI; returns its API token."""
        made = self.cli("user", "add", name, "--class", user_class)
        assert made.returncode == 0, made.stderr
        if password is not None:
            done = self.cli("user", "passwd", name, stdin=password + "\n")
            assert done.returncode == 0, done.stderr
        return made.stdout.strip()

    def client(self, **kw: object) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kw)  # type: ignore[arg-type]

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def launch_hub(tmp: Path, env_extra: dict[str, str] | None = None,
               jobs: dict[str, str] | None = None, serve_args: tuple[str, ...] = ()) -> HubProcess:
    jobs_dir = tmp / "jobs"
    shutil.copytree(REPO / "jobs", jobs_dir, dirs_exist_ok=True)
    for name, code in (jobs if jobs is not None else EXTRA_JOBS).items():
        (jobs_dir / f"{name}.job.js").write_text(code)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
    # Public jobs are called hard in tests: no rate limit unless a test sets one.
    env.update({"WEBHUB_HOME": str(tmp / "home"), "WEBJOB_JOBS_DIR": str(jobs_dir),
                "WEBHUB_SYSTEM_TOKEN": TOKEN, "WEBHUB_NODE": "test-node",
                # Nodes of one test on one database are one cluster: one key.
                "WEBHUB_SECRET": TEST_SECRET,
                "WEBJOB_MAX_CONCURRENT": "3", "WEBJOB_PUBLIC_RATE": "0", **(env_extra or {})})
    log_path = tmp / "hub.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hub.cli", "serve", "--port", str(port), *serve_args],
            cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT)
    hub = HubProcess(f"http://127.0.0.1:{port}", proc, log_path, jobs_dir, tmp / "home")
    _wait_healthy(hub)
    return hub


def _wait_healthy(hub: HubProcess) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if hub.proc.poll() is not None:
            raise RuntimeError(f"hub exited at start:\n{hub.log_text()}")
        try:
            if httpx.get(f"{hub.url}/api/webjobs/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # polling a starting process: there is no event to await
    hub.stop()
    raise RuntimeError(f"hub did not become healthy:\n{hub.log_text()}")


def without_job_console(text: str) -> str:
    """The hub's log but its copy of jobs' own console lines (logger ``webhub.job``):
    a job may well print "ERROR" or a traceback's text."""
    return "\n".join(line for line in text.splitlines()
                     if line.split(" ", 4)[3:4] != ["webhub.job"]
                     and '"logger": "webhub.job"' not in line)


def assert_clean_log(hub: HubProcess) -> None:
    text = without_job_console(hub.log_text())
    assert "Traceback" not in text, text[-4000:]
    assert " ERROR " not in text, text[-4000:]


@contextlib.contextmanager
def running_hub(tmp: Path, env_extra: dict[str, str] | None = None,
                jobs: dict[str, str] | None = None) -> Iterator[HubProcess]:
    """A hub for a block (a module's fixture, say): always stopped afterwards, and its
    log then checked for tracebacks and errors."""
    process = launch_hub(tmp, env_extra, jobs)
    try:
        yield process
    finally:
        process.stop()
    assert_clean_log(process)


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("hub")) as process:
        yield process


@pytest.fixture
def start_hub(tmp_path: Path) -> Iterator[Callable[..., HubProcess]]:
    started: list[HubProcess] = []

    def start(env: dict[str, str] | None = None,
              jobs: dict[str, str] | None = None) -> HubProcess:
        process = launch_hub(tmp_path / f"hub{len(started)}", env, jobs)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
        assert_clean_log(process)


@pytest.fixture
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        yield c
