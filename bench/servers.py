"""Start, probe and stop the servers the benchmark compares (all on 127.0.0.1)."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0
UVICORN_FLAGS = "--loop uvloop --http httptools --no-access-log --log-level warning"

# No proxy handler: every request goes straight to 127.0.0.1, whatever the environment says.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class ServerError(Exception):
    """A server that could not be started or does not answer."""


@dataclass
class ServerSpec:
    name: str
    command: list[str]
    cwd: Path
    port: int
    ready_path: str
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    # How to get the command when it is missing, added to the problem reported.
    install_hint: str = ""

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"


@dataclass
class RunningServer:
    spec: ServerSpec
    process: subprocess.Popen[bytes]
    log_path: Path


@dataclass
class HttpAnswer:
    status: int
    content_type: str
    body: bytes


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def http_get(url: str, headers: dict[str, str], timeout_s: float) -> HttpAnswer:
    """GET url; an HTTP error status is an answer, a connection failure raises OSError."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with _OPENER.open(request, timeout=timeout_s) as resp:
            return HttpAnswer(resp.status, resp.headers.get("content-type", ""), resp.read())
    except urllib.error.HTTPError as err:
        return HttpAnswer(err.code, err.headers.get("content-type", ""), err.read())


def reference_spec(anchor_dir: Path, port: int, jobs_dir: Path | None = None) -> ServerSpec:
    """The reference server, on its own jobs/ folder or on jobs_dir (its JOBS_DIR)."""
    env = {**os.environ, "PORT": str(port), "HOST": HOST}
    if jobs_dir is not None:
        env["JOBS_DIR"] = str(jobs_dir)
    return ServerSpec(
        name="reference",
        command=["node", "server.js"],
        cwd=anchor_dir,
        port=port,
        # The reference has no health route; a tiny job answering 200 means it is up.
        ready_path="/api/webjobs/public_ping?who=ready&raw=1",
        env=env,
    )


def floor_spec(repo_root: Path, port: int) -> ServerSpec:
    command = [sys.executable, "-m", "uvicorn", "bench.floor_app:app", *server_flags(port)]
    return ServerSpec(
        name="floor",
        command=command,
        cwd=repo_root,
        port=port,
        ready_path="/api/webjobs/health",
        env=dict(os.environ),
    )


def hub_spec(
    repo_root: Path, port: int, jobs_dir: Path, home: Path, token: str, name: str = "hub"
) -> ServerSpec:
    env = {
        **os.environ,
        "WEBJOB_JOBS_DIR": str(jobs_dir),
        "WEBHUB_HOME": str(home),
        "WEBHUB_SYSTEM_TOKEN": token,
        # The bench is one client address calling public_ping flat out: no per-address limit.
        "WEBJOB_PUBLIC_RATE": "0",
    }
    return ServerSpec(
        name=name,
        command=[str(hub_command(repo_root)), "serve", "--host", HOST, "--port", str(port)],
        cwd=repo_root,
        port=port,
        ready_path="/api/webjobs/health",
        env=env,
        headers={"Authorization": f"Bearer {token}"},
    )


def server_flags(port: int) -> list[str]:
    """The uvicorn settings the hub runs with, so the floor is served the same way."""
    return ["--host", HOST, "--port", str(port), *UVICORN_FLAGS.split()]


def hub_command(repo_root: Path) -> Path:
    return repo_root / ".venv" / "bin" / "webhub"


def command_exists(command: str) -> bool:
    return Path(command).is_file() if os.sep in command else shutil.which(command) is not None


def start(spec: ServerSpec, log_dir: Path) -> RunningServer:
    """Start spec in its own process group and wait until it answers; raise ServerError."""
    if not command_exists(spec.command[0]):
        hint = f" ({spec.install_hint})" if spec.install_hint else ""
        raise ServerError(f"command not found: {spec.command[0]}{hint}")
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{spec.name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            spec.command,
            cwd=spec.cwd,
            env=spec.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = RunningServer(spec, process, log_path)
    try:
        wait_ready(server)
    except BaseException:
        stop(server)
        raise
    return server


def wait_ready(server: RunningServer, timeout_s: float = READY_TIMEOUT_S) -> None:
    spec = server.spec
    url = spec.base_url + spec.ready_path
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        code = server.process.poll()
        if code is not None:
            raise ServerError(
                f"exited with code {code} before answering ({last_log_line(server)}); "
                f"log: {server.log_path}"
            )
        try:
            answer = http_get(url, spec.headers, timeout_s=2.0)
        except OSError as err:
            last = f"no answer ({err})"
        else:
            if answer.status == 200:
                return
            last = f"HTTP {answer.status}"
        time.sleep(0.2)
    raise ServerError(
        f"GET {spec.ready_path} did not answer 200 within {timeout_s:.0f} s "
        f"(last: {last}); log: {server.log_path}"
    )


def last_log_line(server: RunningServer) -> str:
    lines = server.log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1][:200] if lines else "no output"


def stop(server: RunningServer) -> None:
    """Stop the server's whole process group: SIGTERM, then SIGKILL after STOP_TIMEOUT_S."""
    group = server.process.pid
    signal_group(group, signal.SIGTERM)
    try:
        server.process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        signal_group(group, signal.SIGKILL)
        server.process.wait(timeout=STOP_TIMEOUT_S)
    if group_alive(group):
        signal_group(group, signal.SIGKILL)


def signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
