"""Hub-down behaviour: a private hub is stopped, the window says so without a modal
box and keeps polling; the hub comes back on the same port and the window recovers
by itself."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

import tests.hub.conftest as hub_fixtures
from console_app.client.connection import HubConnection
from console_app.session import HubSession
from console_app.shell.connecting import read_info
from console_app.shell.main_window import MainWindow
from console_app.shell.monitor import ConnectionMonitor
from console_app.tasks import TaskManager
from shared.wire.health import Health
from tests.hub.conftest import assert_clean_log, launch_hub


class CountingPage(QLabel):
    def __init__(self, session: HubSession) -> None:
        super().__init__("page")
        self.refreshed = 0

    def refresh(self) -> None:
        self.refreshed += 1


def test_hub_goes_away_and_comes_back(qtbot: QtBot, tmp_path: Path, tasks: TaskManager,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    hub = launch_hub(tmp_path, jobs={})
    token = hub.add_user("boss", "OWNER")
    conn = HubConnection(hub.url, token)
    session = HubSession(conn, tasks, info=read_info(conn))
    window = MainWindow(session, {"Manage": CountingPage}, {}, monitor_interval_ms=150)
    qtbot.addWidget(window)
    window.show()
    try:
        with qtbot.waitSignal(window.monitor.sig_connection_changed, timeout=15000) as down:
            hub.stop()
        assert down.args == [False]
        assert_clean_log(hub)  # before the restart below writes a new log in its place
        banner = window.connection_banner
        assert banner.isVisible() and banner.text.startswith("Hub unreachable — retrying")
        assert "CONSOLE-001" in banner.text and "unreachable" in window.status.state.text()
        assert window.isEnabled() and window.monitor.running  # nothing modal, still polling

        port = int(hub.url.rsplit(":", 1)[1])
        monkeypatch.setattr(hub_fixtures, "free_port", lambda: port)  # the same address
        with qtbot.waitSignal(window.monitor.sig_connection_changed, timeout=30000) as up:
            hub = launch_hub(tmp_path, jobs={})
        assert up.args == [True] and hub.url == session.url
        assert not banner.isVisible() and "Connected" in window.status.state.text()
        page = window.current_page()
        assert isinstance(page, CountingPage) and page.refreshed == 1  # reloaded on return
    finally:
        window.close()
        conn.close()
        hub.stop()
    assert_clean_log(hub)


def test_polls_never_overlap(qtbot: QtBot, tasks: TaskManager) -> None:
    """A hub that hangs must not pile up health requests."""
    release, calls = threading.Event(), []

    def hanging_probe() -> Health:
        calls.append(1)
        release.wait(10)
        return Health(True, "n1", 0, 0, 2, 2, 2, 0)

    monitor = ConnectionMonitor(hanging_probe, tasks, interval_ms=20)
    monitor.start()
    qtbot.waitUntil(lambda: monitor.in_flight)
    qtbot.waitUntil(lambda: monitor.skipped >= 5)  # ticks pass while the first poll hangs
    assert len(calls) == 1
    with qtbot.waitSignal(monitor.sig_health, timeout=5000):
        release.set()
    monitor.stop()
    # A tick may have begun one more poll between the answer and stop(): it ends too.
    qtbot.waitUntil(lambda: not monitor.in_flight)
    assert monitor.connected
