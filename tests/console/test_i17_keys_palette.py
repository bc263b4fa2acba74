"""Issue 17, the command palette (Ctrl+Shift+P): every action of the window, narrowed
as you type, Enter runs the one picked. The matching is a pure function (checked with
hypothesis); the widget is driven by keys in the real main window against a real hub."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.pages.manage import ManagePage
from console_app.session import HubSession
from console_app.shell.connecting import read_info
from console_app.shell.main_window import MainWindow
from console_app.shell.palette import Command, filter_commands, matches, plain_text
from console_app.tasks import TaskManager

pytestmark = pytest.mark.usefixtures("private_settings")

Ctrl = Qt.KeyboardModifier.ControlModifier
CtrlShift = Ctrl | Qt.KeyboardModifier.ShiftModifier


def _command(label: str) -> Command:
    return Command(label, "", lambda: None)


labels = st.lists(st.text(min_size=1, max_size=30), max_size=12)


@given(labels, st.text(max_size=12))
def test_filtering_keeps_exactly_the_labels_holding_every_word(found: list[str],
                                                               query: str) -> None:
    commands = [_command(label) for label in found]
    shown = filter_commands(commands, query)
    assert sorted(map(id, shown)) == sorted(id(c) for c in commands if matches(c.label, query))
    for command in shown:
        assert all(word in command.label.casefold() for word in query.casefold().split())


@given(labels)
def test_an_empty_query_shows_everything_in_menu_order(found: list[str]) -> None:
    commands = [_command(label) for label in found]
    assert filter_commands(commands, "") == commands
    assert filter_commands(commands, "   ") == commands


def test_the_command_named_by_the_query_comes_first() -> None:
    commands = [_command(t) for t in ("Hub › Refresh page", "Go › Scheduler",
                                      "Job › Run with parameters…", "Job › Run")]
    assert [c.label for c in filter_commands(commands, "run")] == [
        "Job › Run with parameters…", "Job › Run"]
    assert filter_commands(commands, "re")[0].label == "Hub › Refresh page"
    assert [c.label for c in filter_commands(commands, "JOB   run WITH")] == [
        "Job › Run with parameters…"]
    assert plain_text("&Save && close") == "Save & close"


class ButtonsPage(QWidget):
    """A page with buttons and no menu of its own: its buttons are commands."""

    def __init__(self, session: HubSession) -> None:
        super().__init__()
        self.clicked: list[str] = []
        layout = QVBoxLayout(self)
        for text in ("Add schedule…", "Run now"):
            button = QPushButton(text)
            button.clicked.connect(lambda _c=False, t=text: self.clicked.append(t))
            layout.addWidget(button)
        hidden = QPushButton("Not shown")
        layout.addWidget(hidden)
        hidden.hide()


class Blank(QLabel):
    def __init__(self, session: HubSession) -> None:
        super().__init__("blank")


@pytest.fixture
def window(qtbot: QtBot, connection: HubConnection,
           tasks: TaskManager) -> Iterator[MainWindow]:
    session = HubSession(connection, tasks, info=read_info(connection))
    pages = {"Manage": ManagePage, "Scheduler": ButtonsPage, "History": Blank}
    win = MainWindow(session, pages, monitor_interval_ms=60000)
    qtbot.addWidget(win)
    page = win.page("Manage")
    assert isinstance(page, ManagePage)
    with qtbot.waitSignal(page.sig_loaded, timeout=15000):
        win.show()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    yield win
    win.close()


def _open(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_P, CtrlShift)
    qtbot.waitUntil(window.command_palette.query.hasFocus)


def _shown(window: MainWindow) -> list[str]:
    return [c.label for c in window.command_palette.shown]


def test_ctrl_shift_p_lists_every_action_and_enter_runs_the_one_typed(
        qtbot: QtBot, window: MainWindow) -> None:
    _open(qtbot, window)
    palette = window.command_palette
    listed = _shown(window)
    for label in ("Hub › Switch hub…", "Hub › Refresh page", "Hub › Quit", "Go › Scheduler",
                  "Go › Find on this page", "Job › Run", "Job › Edit code",
                  "Job › New job…", "Job › Delete"):
        assert label in listed, label
    assert "Go › Command palette…" not in listed  # it is open already
    assert palette.row_text(listed.index("Job › New job…")) == ("Job › New job…", "Ctrl+N")
    qtbot.keyClicks(palette.query, "sched")
    assert _shown(window) == ["Go › Scheduler"]
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    assert window.current_name() == "Scheduler" and not palette.isVisible()


def test_a_page_without_a_menu_offers_its_shown_buttons(qtbot: QtBot,
                                                       window: MainWindow) -> None:
    window.show_page("Scheduler")
    _open(qtbot, window)
    listed = _shown(window)
    assert "Scheduler › Add schedule…" in listed and "Scheduler › Run now" in listed
    assert not any(label.startswith("Job ›") for label in listed)  # Manage's menu is away
    assert "Scheduler › Not shown" not in listed
    qtbot.keyClicks(window.command_palette.query, "run now")
    qtbot.keyClick(window.command_palette.query, Qt.Key.Key_Enter)
    page = window.current_page()
    assert isinstance(page, ButtonsPage) and page.clicked == ["Run now"]


def test_arrows_pick_escape_closes_and_nothing_found_runs_nothing(
        qtbot: QtBot, window: MainWindow) -> None:
    _open(qtbot, window)
    palette = window.command_palette
    qtbot.keyClicks(palette.query, "go ")
    first = _shown(window)
    assert first[:3] == ["Go › Manage", "Go › Scheduler", "Go › History"]
    qtbot.keyClick(palette.query, Qt.Key.Key_Down)
    qtbot.keyClick(palette.query, Qt.Key.Key_Down)
    qtbot.keyClick(palette.query, Qt.Key.Key_Up)
    assert palette.current_row() == 1
    qtbot.keyClick(palette.query, Qt.Key.Key_Escape)
    assert not palette.isVisible() and window.current_name() == "Manage"
    _open(qtbot, window)
    assert palette.query.text() == ""  # a fresh start each time
    qtbot.keyClicks(palette.query, "no such command")
    assert _shown(window) == []
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    assert palette.isVisible() and window.current_name() == "Manage"
    window.nav_list.setFocus()  # a click elsewhere closes it, as a popup would
    qtbot.waitUntil(lambda: not palette.isVisible())


def test_the_palette_fits_inside_the_window(qtbot: QtBot, window: MainWindow) -> None:
    window.resize(1024, 700)
    _open(qtbot, window)
    palette = window.command_palette
    assert window.rect().contains(palette.geometry())
    assert palette.parentWidget() is window  # not a window of its own: never off-screen
