"""The Manage page's keys and its *Job* menu in the main window's menu bar.

On the job list, Enter or a double-click opens the editor and Del deletes (asking
first, as the menu does); those two act only while the list has the focus, so the
search box keeps its own Enter and Del. Anywhere on the page: Ctrl+Enter runs the
selected job, Ctrl+N creates one, Ctrl+U uploads a file. The Run button's menu shows
the same shortcuts, the row's context menu (right click or the keyboard's menu key)
is that menu, and the *Job* menu in the menu bar (Alt+J) holds all of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QMenu, QWidget

from console_app.shell.icons import icon

if TYPE_CHECKING:
    from console_app.pages.manage import ManagePage

_ON_LIST = Qt.ShortcutContext.WidgetShortcut     # only while the job list has the focus
_ON_PAGE = Qt.ShortcutContext.WindowShortcut     # the page is visible only when current


@dataclass(frozen=True)
class Key:
    keys: tuple[str, ...]
    icon: str
    context: Qt.ShortcutContext = _ON_PAGE


# The Run menu's own actions, by their text.
RUN_MENU_KEYS = {
    "Run with parameters…": Key(("Ctrl+Shift+Return",), "run"),
    "Open in browser": Key(("Ctrl+B",), "browser"),
    "Debug…": Key(("Ctrl+D",), "debug"),
    "Edit code": Key(("Return", "Enter"), "edit", _ON_LIST),
    "History": Key(("Ctrl+H",), "history"),
    "Versions": Key((), "versions"),
    "Delete": Key(("Del",), "delete", _ON_LIST),
}
# The toolbar's buttons, by their text: an icon and the shortcut in the tooltip.
TOOLBAR_ICONS = {"Run": "run", "Create": "create", "Upload": "upload", "Ad-hoc": "ad-hoc",
                 "Refresh": "refresh"}


def _give_keys(action: QAction, key: Key, page: QWidget, view: QWidget) -> None:
    action.setShortcuts([QKeySequence(k) for k in key.keys])
    action.setShortcutContext(key.context)
    action.setIcon(icon(key.icon))
    (view if key.context == _ON_LIST else page).addAction(action)


def _page_action(page: QWidget, text: str, key: Key, slot: Callable[[], object]) -> QAction:
    action = QAction(text, page)
    action.triggered.connect(lambda _checked=False: slot())
    _give_keys(action, key, page, page)
    return action


def install_job_keys(page: ManagePage) -> QMenu:
    """Shortcuts on the Run menu's actions and the page; returns the *Job* menu."""
    view = page.view
    by_text = {a.text(): a for a in page.run_menu.actions()}
    for text, key in RUN_MENU_KEYS.items():
        if text in by_text:
            _give_keys(by_text[text], key, page, view)
    view.setExpandsOnDoubleClick(False)  # a double-click edits; the arrow still expands
    if "Edit code" in by_text:
        view.doubleClicked.connect(lambda _index: by_text["Edit code"].trigger())
    view.customContextMenuRequested.disconnect()
    view.customContextMenuRequested.connect(
        lambda pos: page.run_menu.popup(view.viewport().mapToGlobal(pos)))
    run = _page_action(page, "Run", Key(("F5", "Ctrl+Return", "Ctrl+Enter"), "run"),
                       lambda: page.run_job(page.current_name()))
    menu = QMenu("&Job", page)
    menu.addAction(run)
    menu.addActions(page.run_menu.actions())
    menu.addSeparator()
    menu.addAction(_page_action(page, "New job…", Key(("Ctrl+N",), "create"), page.create_job))
    menu.addAction(_page_action(page, "Upload a job file…", Key(("Ctrl+U",), "upload"),
                                page.upload_job))
    menu.addAction(_page_action(page, "Run a file once (ad-hoc)…", Key((), "ad-hoc"),
                                page.run_ad_hoc))
    _dress_toolbar(page, {"Run": run, "Create": menu.actions()[-3],
                          "Upload": menu.actions()[-2]})
    return menu


def _dress_toolbar(page: ManagePage, actions: dict[str, QAction]) -> None:
    """Icons on the toolbar's buttons, and each one's shortcut in its tooltip."""
    for button in page.findChildren(QAbstractButton):
        name = TOOLBAR_ICONS.get(button.text())
        if name is None:
            continue
        button.setIcon(icon(name))
        if button.text() == "Refresh":
            button.setToolTip("Refresh the list (Ctrl+R)")  # the window's Ctrl+R
        action = actions.get(button.text())
        if action is not None and not action.shortcut().isEmpty():
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            button.setToolTip(f"{action.text()} ({keys})")
    page.run_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
