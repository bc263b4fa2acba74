"""Run wrk against one URL and read its report."""

import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field

INSTALL_HINT = (
    "wrk is not installed: apt-get update && apt-get install -y wrk  (Debian package wrk)"
)

# Seconds wrk waits for one answer before it counts a timeout (its default is 2 s).
REQUEST_TIMEOUT_S = 10
# At 128 connections a run of slow_api (a 500 ms timer) queues on a server that runs 8 at
# once for about 128 / 8 x 0.5 s = 8 s: the wait must stay under wrk's timeout, and the
# servers' own queue limits (15 s, then 429) must come first.
LEVEL_TIMEOUT_S: dict[str, int] = {"c128": 30}
# Slack on top of the run's own duration before the harness gives up on wrk itself.
RUN_SLACK_S = 30

# Concurrency level -> (threads, connections).
LEVELS: dict[str, tuple[int, int]] = {
    "c1": (1, 1), "c8": (2, 8), "c32": (2, 32), "c128": (2, 128),
}

_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_PERCENTILE = re.compile(r"^\s*(50|75|90|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$", re.MULTILINE)
_RPS = re.compile(r"^Requests/sec:\s+([\d.]+)", re.MULTILINE)
_TOTAL = re.compile(r"^\s*(\d+) requests in ", re.MULTILINE)
_SOCKET = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
_NON_2XX = re.compile(r"Non-2xx or 3xx responses: (\d+)")


class WrkError(Exception):
    """wrk failed to run or printed a report we cannot read."""


@dataclass
class WrkResult:
    threads: int
    connections: int
    duration_s: int
    requests: int
    rps: float
    latency_ms: dict[str, float]
    non_2xx: int = 0
    socket_errors: dict[str, int] = field(default_factory=dict)

    @property
    def errors(self) -> int:
        return self.non_2xx + sum(self.socket_errors.values())

    def error_text(self) -> str:
        parts = [f"{self.non_2xx} non-2xx"] if self.non_2xx else []
        parts += [f"{n} {kind}" for kind, n in self.socket_errors.items() if n]
        return ", ".join(parts)

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "errors": self.errors}


def wrk_path() -> str | None:
    return shutil.which("wrk")


def wrk_command(url: str, headers: dict[str, str], level: str, duration_s: int) -> list[str]:
    threads, connections = LEVELS[level]
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration_s}s", "--latency"]
    command += ["--timeout", f"{LEVEL_TIMEOUT_S.get(level, REQUEST_TIMEOUT_S)}s"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    return [*command, url]


def run_wrk(url: str, headers: dict[str, str], level: str, duration_s: int) -> WrkResult:
    command = wrk_command(url, headers, level, duration_s)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=duration_s + RUN_SLACK_S
        )
    except subprocess.TimeoutExpired as err:
        raise WrkError(f"wrk did not finish within {duration_s + RUN_SLACK_S:.0f} s") from err
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip())[:300]
        raise WrkError(f"wrk exited with {done.returncode}: {output}")
    threads, connections = LEVELS[level]
    return parse_wrk(done.stdout, threads, connections, duration_s)


def parse_wrk(text: str, threads: int, connections: int, duration_s: int) -> WrkResult:
    rps = _RPS.search(text)
    total = _TOTAL.search(text)
    latency = {f"p{p}": float(v) * _UNIT_MS[u] for p, v, u in _PERCENTILE.findall(text)}
    if rps is None or total is None or "p50" not in latency or "p99" not in latency:
        raise WrkError(f"cannot read wrk's report:\n{text}")
    return WrkResult(
        threads=threads,
        connections=connections,
        duration_s=duration_s,
        requests=int(total.group(1)),
        rps=float(rps.group(1)),
        latency_ms=latency,
        non_2xx=parse_non_2xx(text),
        socket_errors=parse_socket_errors(text),
    )


def parse_non_2xx(text: str) -> int:
    match = _NON_2XX.search(text)
    return int(match.group(1)) if match else 0


def parse_socket_errors(text: str) -> dict[str, int]:
    match = _SOCKET.search(text)
    kinds = ("connect", "read", "write", "timeout")
    return {kind: int(match.group(i + 1)) if match else 0 for i, kind in enumerate(kinds)}
