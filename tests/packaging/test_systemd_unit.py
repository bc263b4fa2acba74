"""The shipped systemd unit runs the hub as its own user, with the data folder as the
only path it may write."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parents[2] / "packaging" / "webhub.service"


def _service_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in UNIT.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


def test_the_hub_never_runs_as_root() -> None:
    service = _service_settings()
    assert service.get("DynamicUser") == ["yes"] or service.get("User", ["root"])[-1] not in (
        "root", "0", "")
    assert "User" not in service or service["User"][-1] not in ("root", "0")
    assert service["NoNewPrivileges"] == ["yes"]
    assert service["CapabilityBoundingSet"] == [""]


def test_the_data_folder_is_the_only_writable_path() -> None:
    service = _service_settings()
    assert service["ProtectSystem"] == ["strict"]
    assert service["ProtectHome"] == ["yes"]
    assert service["PrivateTmp"] == ["yes"]
    home = next(v.split("=", 1)[1] for v in service["Environment"]
                if v.startswith("WEBHUB_HOME="))
    assert service["ReadWritePaths"] == [home]
    assert f"/var/lib/{service['StateDirectory'][0]}" == home
    jobs = next(v.split("=", 1)[1] for v in service["Environment"]
                if v.startswith("WEBJOB_JOBS_DIR="))
    assert jobs.startswith(home + "/")


def test_v8_may_still_compile() -> None:
    # MemoryDenyWriteExecute would stop V8's JIT: every run would crash.
    assert "MemoryDenyWriteExecute" not in _service_settings()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
def test_systemd_rates_the_unit_exposure_at_most_3_5() -> None:
    # systemd-analyze counts exposure in tenths: 35 is "3.5", the old unit rated 8.7.
    done = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--threshold=35",
                           str(UNIT)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def _exec_argv(value: str) -> list[str]:
    return value.lstrip("-@:+!").split()


def test_start_returns_once_the_hub_answers_its_probe() -> None:
    service = _service_settings()
    start = _exec_argv(service["ExecStart"][-1])
    (post,) = (_exec_argv(v) for v in service["ExecStartPost"])
    venv_bin = Path(start[0]).parent
    assert post[:4] == [str(venv_bin / "python"), "-m", "hub.probe", "healthz"]
    port = start[start.index("--port") + 1]
    assert post[post.index("--port") + 1] == port
    wait_s = float(post[post.index("--wait") + 1])
    # Bounded, and within the start timeout (else systemd kills the probe first).
    assert 0 < wait_s < float(service["TimeoutStartSec"][-1])


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    # verify checks that the commands exist: it reads a copy pointing at this checkout's
    # venv (the unit's /opt/webjobs/.venv is where an install puts the same files).
    venv = Path(sys.executable).parent.parent
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace("/opt/webjobs/.venv", str(venv)))
    done = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and not done.stderr.strip(), done.stdout + done.stderr
