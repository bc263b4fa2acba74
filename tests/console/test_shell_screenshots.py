"""``python -m console_app.screenshots`` writes real PNGs of the shell's screens."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from console_app import screenshots
from tests.console.conftest import ConsoleHub
from tests.hub.conftest import REPO


def test_screens_are_written_as_pngs(console_hub: ConsoleHub, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("WEBJOBS_CONSOLE_THEME", "QT_LOGGING_RULES"):  # main() sets them
        monkeypatch.setenv(name, "")
    monkeypatch.setitem(screenshots.SHOTS, "missing-window",
                        lambda ctx: screenshots._need("console_app.nowhere", "Window"))
    out = tmp_path / "shots"
    code = screenshots.main([str(out), "--hub", console_hub.url, "--token",
                             console_hub.owner_token, "--only",
                             "connect-dialog,main-manage,main-secrets,missing-window"])
    assert code == 0
    for name in ("connect-dialog", "main-manage", "main-secrets"):
        image = QImage(str(out / f"{name}.png"))
        assert not image.isNull() and image.width() > 300 and image.height() > 150, name
    index = (out / "index.txt").read_text()
    assert "connect-dialog.png — Connect to a WebJobs hub" in index
    assert "missing-window: skipped — console_app.nowhere is not part" in index
    assert "main-manage.png" in capsys.readouterr().out


def test_a_screen_that_fails_or_shows_an_error_fails_the_tool(
        console_hub: ConsoleHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A hub not seeded lacks the demo job: that screen fails, saying --seed would add it,
    and a picture of a window showing an error counts as failed too."""
    from console_app.widgets import MessageBar

    for name in ("WEBJOBS_CONSOLE_THEME", "QT_LOGGING_RULES"):  # main() sets them
        monkeypatch.setenv(name, "")

    def erring(_ctx: object) -> MessageBar:
        bar = MessageBar()
        bar.show_error_text("the hub refused it")
        return bar

    monkeypatch.setitem(screenshots.SHOTS, "erring-window", erring)
    out = tmp_path / "shots"
    code = screenshots.main([str(out), "--hub", console_hub.url, "--token",
                             console_hub.owner_token, "--only", "versions-dialog,erring-window"])
    index = (out / "index.txt").read_text()
    assert code == 1, index
    assert "versions-dialog: failed — " in index and "--seed adds the demo job" in index, index
    assert "erring-window.png: failed — the window shows an error: the hub refused it" in index
    assert "2 of 2 screens failed" in capsys.readouterr().err


def test_the_registry_names_every_screen() -> None:
    shots = screenshots.all_shots()
    for name in ("connect-dialog", "main-manage", "main-scheduler", "main-history",
                 "main-metrics", "main-secrets", "run-dialog-finished", "editor-window",
                 "debugger-paused", "versions-dialog", "history-replay",
                 "add-schedule-dialog", "deleted-jobs", "run-again-masked"):
        assert name in shots


def test_a_hub_needs_a_token(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert screenshots.main([str(tmp_path), "--hub", "http://127.0.0.1:1"]) == 2
    assert "--hub needs --token" in capsys.readouterr().err


def test_a_hub_that_never_answers_ends_the_tool_with_a_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hub that takes the connection and says nothing: every call is bounded, so the
    tool stops with a message instead of hanging."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        code = screenshots.main([str(tmp_path / "shots"), "--hub", url, "--token", "t",
                                 "--timeout", "1", "--only", "main-manage"])
    assert code == 1 and time.monotonic() - started < 30
    said = capsys.readouterr().err
    assert "screenshots: no pictures" in said and "No answer from" in said


def test_the_program_gives_up_at_its_deadline(tmp_path: Path) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        done = subprocess.run(
            [sys.executable, "-m", "console_app.screenshots", str(tmp_path), "--hub", url,
             "--token", "t", "--timeout", "60", "--deadline", "2"],
            cwd=REPO, capture_output=True, text=True, timeout=60,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 3 and "gave up after 2 s" in done.stderr
