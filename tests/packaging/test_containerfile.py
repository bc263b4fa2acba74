"""The Containerfile and its entrypoint. No container engine runs here: hadolint reads
the file, the entrypoint runs as a plain process (it must start a hub that answers
its readiness probe), and the image is built only where ``docker info`` answers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.hub.conftest import TEST_SECRET, TOKEN, free_port

REPO = Path(__file__).resolve().parents[2]
CONTAINERFILE = REPO / "Containerfile"
ENTRYPOINT = REPO / "packaging" / "entrypoint.sh"
BIN = Path(sys.executable).parent


def _final_stage() -> str:
    return CONTAINERFILE.read_text().rsplit("\nFROM ", 1)[1]


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run([str(BIN / "hadolint"), "--no-color", str(CONTAINERFILE)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_ignored_finding_says_why() -> None:
    lines = CONTAINERFILE.read_text().splitlines()
    for number, line in enumerate(lines):
        if line.startswith("# hadolint ignore="):
            reason = lines[number - 1] if number else ""
            assert reason.startswith("# ") and "hadolint" not in reason, (number + 1, line)


def test_the_image_starts_through_the_entrypoint_and_checks_readiness() -> None:
    stage = _final_stage()
    assert "COPY packaging/entrypoint.sh /usr/local/bin/webhub-entrypoint" in stage
    assert 'ENTRYPOINT ["/usr/local/bin/webhub-entrypoint"]' in stage
    assert re.search(r'^CMD \["serve"\]$', stage, re.M)
    check = re.search(r"^HEALTHCHECK .*\n\s+CMD (.+)$", stage, re.M)
    assert check is not None and '"hub.probe", "readyz"' in check.group(1)
    port = re.search(r"^EXPOSE (\d+)$", stage, re.M)
    assert port is not None and re.search(rf"^\s+PORT={port.group(1)}$", stage, re.M)
    assert os.access(ENTRYPOINT, os.X_OK)  # COPY keeps the mode git gave it


def _entrypoint_env(tmp_path: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBHUB_", "WEBJOB_"))}
    shutil.copytree(REPO / "jobs", tmp_path / "jobs")
    return env | {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
                  "WEBHUB_HOME": str(tmp_path / "home"),
                  "WEBJOB_JOBS_DIR": str(tmp_path / "jobs"), "WEBHUB_SYSTEM_TOKEN": TOKEN,
                  "WEBHUB_SECRET": TEST_SECRET, "WEBHUB_NODE": "entrypoint-test",
                  "PORT": str(port), "LISTEN_HOST": "127.0.0.1"}


@pytest.fixture
def entrypoint_hub(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    port = free_port()
    log = tmp_path / "hub.log"
    with open(log, "wb") as out:
        # dash: the image's /bin/sh, and a shell with nothing beyond POSIX.
        proc = subprocess.Popen(["dash", str(ENTRYPOINT)], cwd=tmp_path, stdout=out,
                                stderr=subprocess.STDOUT, env=_entrypoint_env(tmp_path, port))
    try:
        yield proc, port, log
    finally:
        proc.terminate()  # the script exec'd the hub: this is its SIGTERM
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def test_the_entrypoint_starts_a_hub_that_becomes_ready(
        entrypoint_hub: tuple[subprocess.Popen[bytes], int, Path]) -> None:
    proc, port, log = entrypoint_hub
    probe = subprocess.run([sys.executable, "-m", "hub.probe", "readyz", "--port", str(port),
                            "--wait", "60"], capture_output=True, text=True, timeout=90,
                           check=False)
    assert probe.returncode == 0, probe.stderr + log.read_text(errors="replace")[-3000:]
    assert proc.poll() is None
    text = log.read_text(errors="replace")
    assert f"WebJobs hub on http://127.0.0.1:{port}" in text
    # exec: the script's process is the hub now, so the engine's SIGTERM reaches it.
    command = psutil.Process(proc.pid).cmdline()
    assert "dash" not in command[0] and command[-5:] == [
        "serve", "--host", "127.0.0.1", "--port", str(port)], command
    proc.terminate()
    proc.wait(15)
    text = log.read_text(errors="replace")
    assert "Finished server process" in text and "Traceback" not in text, text[-3000:]


def test_the_entrypoint_runs_any_other_command_as_given(tmp_path: Path) -> None:
    env = _entrypoint_env(tmp_path, free_port())
    done = subprocess.run(["dash", str(ENTRYPOINT), "webhub", "db", "current"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "hub database: at" in done.stdout


def test_the_probe_fails_when_nothing_answers() -> None:
    done = subprocess.run([sys.executable, "-m", "hub.probe", "healthz", "--port",
                           str(free_port()), "--timeout", "0.5"], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 1 and "did not answer 200" in done.stderr


def _docker_answers() -> str | None:
    """None when a container engine answers ``docker info``; else why not."""
    if shutil.which("docker") is None:
        return "no docker client"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30,
                              check=False)
    except subprocess.TimeoutExpired:
        return "docker info did not answer"
    if info.returncode != 0:
        return f"no container engine answers docker info: {info.stderr.strip()[:200]}"
    return None


NO_ENGINE = _docker_answers()


@pytest.mark.skipif(NO_ENGINE is not None, reason=str(NO_ENGINE))
def test_the_image_builds() -> None:
    done = subprocess.run(["docker", "build", "-t", "webjobs-hub:test", "-f",
                           str(CONTAINERFILE), str(REPO)], capture_output=True, text=True,
                          timeout=1800, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
