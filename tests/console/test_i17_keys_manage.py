"""Issue 17, keyboard: the real Manage page inside the real main window against the
real hub, driven by key presses and clicks — Enter or double-click edits, Del deletes
after asking, Ctrl+N creates, Ctrl+F searches the page, the Run menu and the *Job*
menu by keyboard with their shortcuts shown, icons in the sidebar and toolbar."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QMenu, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.pages.create_dialog import TEMPLATES, NewJob
from console_app.pages.manage import ManagePage
from console_app.pages.manage_parts import Asker
from console_app.session import HubSession
from console_app.shell.connecting import read_info
from console_app.shell.main_window import MainWindow
from console_app.shell.screens import ScreenSpec
from console_app.tasks import TaskManager

pytestmark = pytest.mark.usefixtures("private_settings")

Ctrl = Qt.KeyboardModifier.ControlModifier


def new_job(name: str | None) -> NewJob | None:
    """What the Create dialog answers when the owner types ``name`` (None: cancelled)."""
    return NewJob(name, TEMPLATES[0].body(name)) if name else None


class Answers:
    """Stands in for the page's dialogs, and counts the questions asked."""

    def __init__(self) -> None:
        self.confirmations: list[str] = []
        self.confirm = False
        self.name: str | None = None

    def _confirm(self, _title: str, text: str, _parent: Any) -> bool:
        self.confirmations.append(text)
        return self.confirm

    def asker(self) -> Asker:
        return Asker(params=lambda _n, _last, _p: None, confirm=self._confirm,
                     pick_file=lambda _t, _p: None, new_job=lambda _names, _p: new_job(self.name),
                     open_url=lambda _url: True)


class NoSearchPage(QLabel):
    def __init__(self, session: HubSession) -> None:
        super().__init__("a page with nothing to search")


class OpenedWindow(QWidget):
    def __init__(self, session: HubSession, *args: Any, **kw: Any) -> None:
        super().__init__()
        self.args = args


SCREENS = {key: ScreenSpec(key, __name__, "OpenedWindow")
           for key in ("run", "editor", "debugger", "replay")}


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def window(qtbot: QtBot, connection: HubConnection, tasks: TaskManager,
           answers: Answers) -> Iterator[MainWindow]:
    session = HubSession(connection, tasks, info=read_info(connection))
    pages = {"Manage": lambda s: ManagePage(s, asker=answers.asker()),
             "Scheduler": NoSearchPage, "History": NoSearchPage}
    win = MainWindow(session, pages, SCREENS, monitor_interval_ms=60000)
    qtbot.addWidget(win)
    page = win.page("Manage")
    assert isinstance(page, ManagePage)
    with qtbot.waitSignal(page.sig_loaded, timeout=15000):
        win.show()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    yield win
    win.close()


def _manage(window: MainWindow) -> ManagePage:
    page = window.page("Manage")
    assert isinstance(page, ManagePage)
    return page


def _focus_row(qtbot: QtBot, page: ManagePage, name: str) -> None:
    assert page.select(name)
    page.view.setFocus()
    qtbot.waitUntil(page.view.hasFocus)


def test_enter_or_double_click_opens_the_editor(qtbot: QtBot, window: MainWindow) -> None:
    page = _manage(window)
    nav = page.session.nav
    _focus_row(qtbot, page, "report")
    with qtbot.waitSignal(nav.sig_open_editor, timeout=3000) as edit:
        qtbot.keyClick(page.view, Qt.Key.Key_Return)
    assert edit.args == ["report"]
    assert page.select("public_ping")
    index = page.view.currentIndex()
    middle = page.view.visualRect(index).center()
    with qtbot.waitSignal(nav.sig_open_editor, timeout=3000) as edit:
        # A person's double-click: the first click, then the second that doubles it.
        qtbot.mouseClick(page.view.viewport(), Qt.MouseButton.LeftButton, pos=middle)
        qtbot.mouseDClick(page.view.viewport(), Qt.MouseButton.LeftButton, pos=middle)
    assert edit.args == ["public_ping"]
    assert not page.view.isExpanded(index.siblingAtColumn(0))  # it edits, not expands


def test_del_on_the_list_asks_first_and_del_in_search_edits_text(
        qtbot: QtBot, window: MainWindow, answers: Answers,
        connection: HubConnection) -> None:
    page = _manage(window)
    name = f"del_{uuid.uuid4().hex[:8]}"
    api.save(connection, name, "return 1")
    with qtbot.waitSignal(page.sig_loaded, timeout=15000):
        page.refresh()
    _focus_row(qtbot, page, name)
    qtbot.keyClick(page.view, Qt.Key.Key_Delete)
    assert answers.confirmations == [f"Delete the job '{name}'? Its saved versions are kept."]
    assert page.job(name) is not None  # answered no: nothing deleted
    answers.confirm = True
    with qtbot.waitSignal(page.sig_loaded, timeout=15000):
        qtbot.keyClick(page.view, Qt.Key.Key_Delete)
    assert page.job(name) is None
    page.search.setFocus()
    qtbot.waitUntil(page.search.hasFocus)
    page.search.setText("abc")
    page.search.setCursorPosition(0)
    qtbot.keyClick(page.search, Qt.Key.Key_Delete)
    assert page.search.text() == "bc" and len(answers.confirmations) == 2


def test_ctrl_n_creates_a_job_from_anywhere_on_the_page(
        qtbot: QtBot, window: MainWindow, answers: Answers) -> None:
    page = _manage(window)
    answers.name = f"new_{uuid.uuid4().hex[:8]}"
    window.nav_list.setFocus()  # focus outside the page: the window's key still reaches it
    with qtbot.waitSignal(page.session.nav.sig_open_editor, timeout=15000) as edit:
        qtbot.keyClick(window.nav_list, Qt.Key.Key_N, Ctrl)
    assert edit.args == [answers.name]
    window.show_page("Scheduler")
    answers.name = f"never_{uuid.uuid4().hex[:8]}"
    asked: list[str] = []
    page.session.nav.sig_open_editor.connect(asked.append)
    qtbot.keyClick(window, Qt.Key.Key_N, Ctrl)  # Manage is not shown: its key sleeps
    assert asked == [] and "&Job" not in [a.text() for a in window.menuBar().actions()]


def test_ctrl_f_focuses_the_current_pages_search(qtbot: QtBot, window: MainWindow) -> None:
    page = _manage(window)
    page.search.setText("ping")
    window.nav_list.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F, Ctrl)
    qtbot.waitUntil(page.search.hasFocus)
    assert page.search.selectedText() == "ping"  # typing replaces the old search
    window.show_page("History")
    qtbot.keyClick(window, Qt.Key.Key_F, Ctrl)
    assert window.statusBar().currentMessage() == "The History page has no search"


def _open_popup(qtbot: QtBot) -> QMenu:
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    popup = QApplication.activePopupWidget()
    assert isinstance(popup, QMenu)
    return popup


def _choose(qtbot: QtBot, menu: QMenu, text: str) -> None:
    """Down-arrow to ``text`` in an open menu, then Enter, as a person would."""
    for _ in range(len(menu.actions()) * 2):
        if menu.activeAction() is not None and menu.activeAction().text() == text:
            break
        qtbot.keyClick(menu, Qt.Key.Key_Down)
    assert menu.activeAction() is not None and menu.activeAction().text() == text
    qtbot.keyClick(menu, Qt.Key.Key_Return)


# Offscreen, a popup menu cannot grab the keyboard (Qt says so); keys reach it all the same.
@pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")
def test_the_job_menu_and_the_run_menu_by_keyboard(qtbot: QtBot, window: MainWindow) -> None:
    page = _manage(window)
    nav = page.session.nav
    _focus_row(qtbot, page, "report")
    qtbot.keyClick(window, Qt.Key.Key_J, Qt.KeyboardModifier.AltModifier)
    menu = _open_popup(qtbot)
    assert menu is page.page_menu
    with qtbot.waitSignal(nav.sig_open_history, timeout=3000) as history:
        _choose(qtbot, menu, "History")
    assert history.args == [{"job": "report"}]
    assert window.current_name() == "History"
    qtbot.keyClick(window, Qt.Key.Key_1, Ctrl)
    # The keyboard's menu key on a row opens the Run menu there.
    _focus_row(qtbot, page, "report")
    where = page.view.visualRect(page.view.currentIndex()).center()
    QApplication.sendEvent(page.view.viewport(), QContextMenuEvent(
        QContextMenuEvent.Reason.Keyboard, where, page.view.viewport().mapToGlobal(where)))
    run_menu = _open_popup(qtbot)
    assert run_menu is page.run_menu
    with qtbot.waitSignal(nav.sig_open_debugger, timeout=3000) as debug:
        _choose(qtbot, run_menu, "Debug…")
    assert debug.args[0] == "report"
    window.activateWindow()  # the debugger window took the focus
    qtbot.waitUntil(window.isActiveWindow)
    _focus_row(qtbot, page, "report")
    with qtbot.waitSignal(nav.sig_run_job, timeout=3000) as run:
        qtbot.keyClick(page.view, Qt.Key.Key_Return, Ctrl)
    assert run.args[0] == "report"
    with qtbot.waitSignal(nav.sig_run_job, timeout=3000) as run:
        qtbot.keyClick(page.view, Qt.Key.Key_F5)  # F5 runs, as in the editor
    assert run.args[0] == "report"


def _keys(menu: QMenu) -> dict[str, str]:
    return {a.text(): a.shortcut().toString() for a in menu.actions() if not a.isSeparator()}


def test_shortcuts_are_shown_in_the_menus(window: MainWindow) -> None:
    page = _manage(window)
    assert _keys(page.run_menu) == {
        "Run with parameters…": "Ctrl+Shift+Return", "Open in browser": "Ctrl+B",
        "Debug…": "Ctrl+D", "Edit code": "Return", "History": "Ctrl+H", "Versions": "",
        "Delete": "Del"}
    job_keys = _keys(page.page_menu)
    assert job_keys["Run"] == "F5" and job_keys["New job…"] == "Ctrl+N"
    bar = {a.text(): a.menu() for a in window.menuBar().actions()}
    assert list(bar) == ["&Hub", "&Go", "&Job"] and bar["&Job"] is page.page_menu
    go = bar["&Go"]
    assert isinstance(go, QMenu)
    assert _keys(go)["Command &palette…"] == "Ctrl+Shift+P"
    assert _keys(go)["&Find on this page"] == QKeySequence("Ctrl+F").toString()


def test_icons_in_the_sidebar_the_toolbar_and_the_menus(window: MainWindow) -> None:
    page = _manage(window)
    for row in range(window.nav_list.count()):
        assert not window.nav_list.item(row).icon().isNull()
    buttons = {b.text(): b for b in page.findChildren(QPushButton)}
    for text in ("Create", "Upload", "Ad-hoc", "Refresh"):
        assert not buttons[text].icon().isNull(), text
    assert buttons["Create"].toolTip() == "New job… (Ctrl+N)"
    assert not page.run_button.icon().isNull()
    assert all(not a.icon().isNull() for a in page.run_menu.actions())
