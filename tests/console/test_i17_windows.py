"""Issue 17: windows open on the screen that has the main window and fit 1024×700.

Two screens need a platform of their own (Qt's offscreen platform with a screen
layout), so the check runs in a child Python with that layout: the main window on
the big right-hand screen, then on the small left-hand one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hub.conftest import REPO

LAYOUT = {"synchronousWindowSystemEvents": False, "windowFrameMargins": False, "screens": [
    {"name": "left", "x": 0, "y": 0, "width": 1024, "height": 700, "logicalDpi": 96,
     "logicalBaseDpi": 96, "dpr": 1},
    {"name": "right", "x": 1024, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96,
     "logicalBaseDpi": 96, "dpr": 1}]}

CHILD = r"""
import json, sys
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication, QDialog, QMainWindow
from console_app.client.connection import HubConnection
from console_app.run.dialog import RunDialog
from console_app.session import HubSession
from console_app.tasks import TaskManager
from console_app.widgets import FIT_SIZE, fit_on_screen

app = QApplication([])
seen = {}
main = QMainWindow()
tasks = TaskManager()
session = HubSession(HubConnection("http://127.0.0.1:9", timeout=1), tasks)

def place(where, geometry):
    main.setGeometry(*geometry)
    main.show()
    app.processEvents()
    big = QDialog()
    fit_on_screen(big, QSize(1400, 900))
    run = RunDialog(session, "report", {})
    for name, window in (("big", big), ("run", run)):
        window.show()
        app.processEvents()
        seen[f"{where}-{name}"] = {
            "screen": window.screen().name(),
            "inside": window.screen().availableGeometry().contains(window.frameGeometry()),
            "fits": window.width() <= FIT_SIZE.width() and window.height() <= FIT_SIZE.height()}
        window.close()

place("right", (1300, 200, 900, 600))
place("left", (10, 10, 900, 600))
tasks.shutdown()
print(json.dumps(seen))
"""


def test_windows_open_on_the_main_windows_screen_and_fit(tmp_path: Path) -> None:
    layout = tmp_path / "screens.json"
    layout.write_text(json.dumps(LAYOUT))
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={layout}",
           "QT_LOGGING_RULES": "qt.qpa.*=false"}
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    for where in ("right", "left"):
        for name in ("big", "run"):
            placed = seen[f"{where}-{name}"]
            assert placed == {"screen": where, "inside": True, "fits": True}, (where, name)
