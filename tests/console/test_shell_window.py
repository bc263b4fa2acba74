"""The main window against a real hub: pages from a registry (placeholders for the
missing), Navigator signals, shortcuts, the status bar."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.session import HubSession
from console_app.shell.connecting import read_info
from console_app.shell.main_window import MainWindow
from console_app.shell.pages import PAGE_SPECS, PlaceholderPage, default_pages, load_attr
from console_app.shell.screens import ScreenSpec
from console_app.tasks import TaskManager


class FakePage(QLabel):
    def __init__(self, session: HubSession) -> None:
        super().__init__("fake")
        self.session = session
        self.refreshed = 0
        self.filters: list[Any] = []

    def refresh(self) -> None:
        self.refreshed += 1

    def set_filters(self, filters: dict[str, Any]) -> None:
        self.filters.append(filters)

    def set_job_filter(self, job: str) -> None:
        self.filters.append(job)


class FakeWindow(QWidget):
    def __init__(self, session: HubSession, *args: Any, **kw: Any) -> None:
        super().__init__()
        self.args, self.kw = args, kw


def _broken(session: HubSession) -> QWidget:
    raise RuntimeError("page bug")


FAKE_SCREENS = {
    "run": ScreenSpec("the run dialog", __name__, "FakeWindow"),
    "editor": ScreenSpec("the editor", "console_app.no_such_editor", "EditorWindow"),
    "debugger": ScreenSpec("the debugger", __name__, "FakeWindow"),
    "replay": ScreenSpec("the debugger (replay)", __name__, "FakeWindow",
                         lambda run_id: ((), {"replay_run_id": run_id})),
}


@pytest.fixture
def session(connection: HubConnection, tasks: TaskManager) -> HubSession:
    return HubSession(connection, tasks, info=read_info(connection))


@pytest.fixture
def window(qtbot: QtBot, session: HubSession) -> Iterator[MainWindow]:
    pages = {"Manage": FakePage, "Scheduler": FakePage, "History": FakePage,
             "Metrics": _broken, "Secrets": FakePage}
    win = MainWindow(session, pages, FAKE_SCREENS, monitor_interval_ms=200)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


def test_status_bar_shows_hub_node_store_and_user(qtbot: QtBot, window: MainWindow,
                                                  session: HubSession) -> None:
    bar = window.status
    assert bar.hub.text() == f"Hub: {session.url}"
    assert bar.node.text() == "Node: test-node"
    assert bar.store.text().startswith("Store: files · ") and "jobs" in bar.store.text()
    assert bar.user.text() == "Signed in: owner" and "Connected" in bar.state.text()
    qtbot.waitUntil(lambda: "Workers:" in bar.node.toolTip())  # a health poll landed
    session.tasks.sig_busy_changed.emit(True)
    assert bar.busy.isVisible()
    session.tasks.sig_busy_changed.emit(False)
    assert not bar.busy.isVisible()


def test_pages_are_built_on_first_visit_and_a_broken_one_is_contained(
        window: MainWindow) -> None:
    assert window.page_names == ["Manage", "Scheduler", "History", "Metrics", "Secrets"]
    assert isinstance(window.current_page(), FakePage) and window.page("History") is None
    metrics = window.show_page("Metrics")
    assert isinstance(metrics, PlaceholderPage) and "page bug" in metrics.why
    assert window.notice.isVisible() and "The Metrics page failed" in window.notice.text
    assert window.show_page(2) is window.page("History")


def test_keyboard_shortcuts(qtbot: QtBot, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    for n, name in enumerate(window.page_names, start=1):
        qtbot.keyClick(window, Qt.Key(Qt.Key.Key_0 + n), Qt.KeyboardModifier.ControlModifier)
        assert window.current_name() == name
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    page = window.current_page()
    assert isinstance(page, FakePage) and page.refreshed == 0
    qtbot.keyClick(window, Qt.Key.Key_F5)  # F5 runs; nothing to run here
    assert page.refreshed == 0
    qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert page.refreshed == 1
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible() and not window.monitor.running


def test_navigator_signals_open_screens_or_say_why_not(qtbot: QtBot, window: MainWindow,
                                                      session: HubSession) -> None:
    nav = session.nav
    nav.sig_run_job.emit("report", {"n": 1})
    run = window.screens.open_windows[-1]
    assert isinstance(run, FakeWindow) and run.args == ("report", {"n": 1}) and run.isVisible()
    nav.sig_open_debugger.emit("report", {})
    nav.sig_replay_run.emit("run-7")
    assert window.screens.open_windows[-1].kw == {"replay_run_id": "run-7"}
    nav.sig_open_editor.emit("report")
    assert window.notice.isVisible()
    assert "Cannot open the editor: console_app.no_such_editor is not part" in window.notice.text
    assert len(window.screens.open_windows) == 3
    run.close()
    qtbot.waitUntil(lambda: len(window.screens.open_windows) == 2)  # closed windows go

    nav.sig_open_history.emit({"job": "report"})
    history = window.current_page()
    assert window.current_name() == "History" and history.filters == [{"job": "report"}]
    nav.sig_open_schedules.emit("report")
    assert window.current_name() == "Scheduler" and window.current_page().filters == ["report"]
    manage = window.page("Manage")
    assert isinstance(manage, FakePage)
    nav.sig_jobs_changed.emit()
    assert manage.refreshed == 1


def test_the_real_page_registry(qtbot: QtBot, session: HubSession) -> None:
    """Whatever pages exist today load; a missing one is a placeholder, not a crash."""
    pages = default_pages()
    assert list(pages) == [spec.name for spec in PAGE_SPECS]
    found, why = load_attr("console_app.pages.nowhere", "Page")
    assert found is None and "not part of this console yet" in why
    found, why = load_attr("console_app.session", "Nothing")
    assert found is None and "has no Nothing" in why
    win = MainWindow(session, pages, monitor_interval_ms=60000)
    qtbot.addWidget(win)
    for name in win.page_names:
        assert win.show_page(name) is win.current_page()
    assert not any(isinstance(win.page(n), PlaceholderPage) for n in win.page_names)
    qtbot.waitUntil(lambda: not session.tasks.busy, timeout=20000)  # let the pages load
    win.close()


def test_the_app_connects_and_switches_hubs(qtbot: QtBot, console_hub: Any,
                                            tmp_path: Any) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from console_app.app import ConsoleApp
    from console_app.client.credentials import TokenVault
    from console_app.shell.hubs import RememberedHubs

    hubs = RememberedHubs(QSettings(str(tmp_path / "c.ini"), QSettings.Format.IniFormat))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    console = ConsoleApp(app, TokenVault(use_keyring=False, folder=tmp_path), hubs)
    try:
        console.start(console_hub.url, console_hub.owner_token)  # --hub URL --token T
        qtbot.waitUntil(lambda: console.window is not None, timeout=20000)
        first = console.window
        assert first is not None and hubs.book.entries[0].user == "owner"
        first.sig_switch_hub.emit()
        dialog = console.dialog
        assert dialog is not None and dialog.isVisible()
        dialog.url_box.setEditText(console_hub.url)
        dialog.token_edit.setText(console_hub.owner_token)
        dialog.connect_button.click()
        qtbot.waitUntil(lambda: console.window is not first, timeout=20000)
        # The old window goes (closed, then deleted: its session's connection is closed).
        assert not shiboken6.isValid(first) or not first.isVisible()
        assert console.window is not None
        assert console.window.isVisible()
    finally:
        console.shutdown()
