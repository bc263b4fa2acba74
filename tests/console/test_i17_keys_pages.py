"""Issue 17, keyboard: Ctrl+N adds a schedule on the Scheduler page and a secret on the
Secrets page — only on the page shown — inside the real main window against the real
hub."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.pages.scheduler import SchedulerPage
from console_app.pages.secrets import SecretsPage
from console_app.session import HubSession
from console_app.shell.connecting import read_info
from console_app.shell.main_window import MainWindow
from console_app.tasks import TaskManager

pytestmark = pytest.mark.usefixtures("private_settings")


class Blank(QLabel):
    def __init__(self, session: HubSession) -> None:
        super().__init__("nothing here")


@pytest.fixture
def window(qtbot: QtBot, connection: HubConnection, tasks: TaskManager) -> Iterator[MainWindow]:
    session = HubSession(connection, tasks, info=read_info(connection))
    pages = {"Manage": Blank, "Scheduler": SchedulerPage, "Secrets": SecretsPage}
    win = MainWindow(session, pages, monitor_interval_ms=60000)
    qtbot.addWidget(win)
    win.show()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    yield win
    win.close()


@pytest.mark.parametrize(("name", "dialog_title"), [("Scheduler", "schedule"),
                                                   ("Secrets", "New secret")])
def test_ctrl_n_adds_on_the_page_shown(qtbot: QtBot, window: MainWindow, name: str,
                                       dialog_title: str) -> None:
    other = window.show_page("Secrets" if name == "Scheduler" else "Scheduler")
    page = window.show_page(name)
    assert isinstance(page, SchedulerPage | SecretsPage) and other is not None
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: getattr(page, "dialog", None) is not None)
    assert dialog_title.lower() in page.dialog.windowTitle().lower()
    assert getattr(other, "dialog", None) is None  # a hidden page's key does not fire
    page.dialog.reject()


def test_the_main_window_opens_within_1024_by_700(window: MainWindow) -> None:
    assert window.width() <= 1024 and window.height() <= 700
