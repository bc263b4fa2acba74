"""``python -m console_app.screenshots`` writes real PNGs of the shell's screens."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from console_app import screenshots
from tests.console.conftest import ConsoleHub


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


def test_the_registry_names_every_screen() -> None:
    shots = screenshots.all_shots()
    for name in ("connect-dialog", "main-manage", "main-scheduler", "main-history",
                 "main-metrics", "main-secrets", "run-dialog-finished", "editor-window",
                 "debugger-paused", "versions-dialog", "history-replay",
                 "add-schedule-dialog"):
        assert name in shots


def test_a_hub_needs_a_token(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert screenshots.main([str(tmp_path), "--hub", "http://127.0.0.1:1"]) == 2
    assert "--hub needs --token" in capsys.readouterr().err
