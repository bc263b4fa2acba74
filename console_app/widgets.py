"""Small widgets and recipes the console's pages share."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractItemModel, QEvent, QObject, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from console_app.client.errors import describe_error

__all__ = [
    "FIT_SIZE",
    "MessageBar",
    "RefreshWhileShown",
    "UrlNote",
    "anchor_window",
    "fit_on_screen",
    "new_item_key",
    "row_table",
    "run_key",
]


def row_table(model: QAbstractItemModel, parent: QWidget | None = None) -> QTableView:
    """A read-only table that selects one whole row at a time: how every list of
    things (runs, schedules, secrets) is shown. Columns start resizable by hand,
    the last one taking the rest of the width."""
    table = QTableView(parent)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.setWordWrap(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    return table


# A page's non-modal message line: a hub failure shows its code and message here,
# never in a dialog the owner must dismiss, and never as a crash.
_STYLES = {"error": "background:#fdecea;color:#8a1c1c;border:1px solid #f5c2c0;",
           "info": "background:#e8f1fb;color:#0d3c61;border:1px solid #b6d4f2;"}


# How long a note that something went well stays (an error stays until it is dealt with).
INFO_SHOWN_MS = 8000


class MessageBar(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.kind = ""
        self._info_timer = QTimer(self, singleShot=True, interval=INFO_SHOWN_MS)
        self._info_timer.timeout.connect(self._info_expired)
        self.hide()

    def show_error(self, exc: Exception, doing: str = "") -> None:
        prefix = f"{doing} failed — " if doing else ""
        self._show("error", prefix + describe_error(exc))

    def show_error_text(self, text: str) -> None:
        """An error already put in words: a local check, not a failed call."""
        self._show("error", text)

    def show_info(self, text: str) -> None:
        self._show("info", text)
        self._info_timer.start()

    def _info_expired(self) -> None:
        if self.kind == "info":
            self.clear_message()

    def clear_message(self) -> None:
        self._info_timer.stop()
        self.kind = ""
        self.setText("")
        self.hide()

    def _show(self, kind: str, text: str) -> None:
        self._info_timer.stop()
        self.kind = kind
        self.setStyleSheet(f"QLabel{{{_STYLES[kind]}padding:4px 8px;border-radius:3px;}}")
        self.setText(text)
        self.show()


class RefreshWhileShown(QObject):
    """Calls ``refresh`` when ``page`` is shown and every ``interval_ms`` while it
    stays shown; a hidden page costs the hub nothing."""

    def __init__(self, page: QWidget, interval_ms: int, refresh: Callable[[], object]) -> None:
        super().__init__(page)
        self._refresh = refresh
        self.timer = QTimer(self, interval=interval_ms)
        self.timer.timeout.connect(refresh)
        page.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show:
            self.timer.start()
            self._refresh()
        elif event.type() == QEvent.Type.Hide:
            self.timer.stop()
        return False


class UrlNote(QWidget):
    """An address the console could not open in a browser (none is set up, or one
    refuses to start as root), left in a field with a Copy button; stays until closed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self.url_edit = QLineEdit(readOnly=True)
        self.copy_button = QPushButton("Copy")
        self.copy_button.clicked.connect(self.copy)
        self.close_button = QToolButton(autoRaise=True)
        self.close_button.setText("×")
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.hide)
        # The text on a line of its own: beside a stretching address field a label
        # that wraps is squeezed to a column of one or two words a line.
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.text_label)
        row = QHBoxLayout()
        row.addWidget(self.url_edit, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.close_button)
        column.addLayout(row)
        self.hide()

    def show_url(self, text: str, url: str) -> None:
        self.text_label.setText(text)
        self.url_edit.setText(url)
        self.url_edit.setCursorPosition(0)
        self.show()

    def copy(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.url_edit.text())


# The smallest screen every window must fit on: a window's opening size never exceeds it.
FIT_SIZE = QSize(1024, 700)


def anchor_window() -> QWidget | None:
    """The window a new one should open beside: the active one, else the first shown
    main window."""
    active = QApplication.activeWindow()
    if active is not None:
        return active
    return next((w for w in QApplication.topLevelWidgets()
                 if isinstance(w, QMainWindow) and w.isVisible()), None)


def fit_on_screen(window: QWidget, wanted: QSize, anchor: QWidget | None = None) -> None:
    """Open ``window`` at ``wanted`` cut to :data:`FIT_SIZE` and to the free area of
    the screen ``anchor`` (by default :func:`anchor_window`) is on, centred over
    ``anchor`` and kept wholly on that screen. Call it before the first show."""
    near = anchor.window() if anchor is not None else anchor_window()
    screen = near.screen() if near is not None else QGuiApplication.primaryScreen()
    if screen is None:
        window.resize(wanted.boundedTo(FIT_SIZE))
        return
    area = screen.availableGeometry()
    # The frame (title bar, borders) is only known once shown: leave room for it.
    room = QSize(max(200, area.width() - 16), max(150, area.height() - 40))
    size = wanted.boundedTo(FIT_SIZE).boundedTo(room)
    window.resize(size)
    centre = near.frameGeometry().center() if near is not None and near.isVisible() \
        else area.center()
    box = QRect(0, 0, size.width(), size.height())
    box.moveCenter(centre)
    left = min(max(box.left(), area.left()), area.right() - size.width() - 8)
    top = min(max(box.top(), area.top()), area.bottom() - size.height() - 32)
    window.setScreen(screen)
    window.move(max(left, area.left()), max(top, area.top()))


def new_item_key(page: QWidget, button: QAbstractButton) -> QAction:
    """Ctrl+N clicks a page's "new" button while that page is the one shown."""
    return _button_key(page, button, "Ctrl+N")


def run_key(page: QWidget, button: QAbstractButton) -> QAction:
    """F5 clicks a page's run button while that page is the one shown: F5 runs, in every
    window that runs something (the editor, Manage, the Scheduler)."""
    return _button_key(page, button, "F5")


def _button_key(page: QWidget, button: QAbstractButton, key: str) -> QAction:
    # A hidden page's shortcut does not fire, so only the page shown answers the key.
    action = QAction(button.text(), page)
    action.setShortcut(QKeySequence(key))
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.triggered.connect(lambda _checked=False: button.click())
    page.addAction(action)
    button.setToolTip(f"{button.text()} ({key})")
    return action


def close_key(window: QWidget) -> QAction:
    """Ctrl+W (the platform's Close key) closes a window of its own (the editor, the
    debugger), through its close event, so an unsaved job is still asked about."""
    action = QAction("Close window", window)
    action.setShortcuts(QKeySequence.keyBindings(QKeySequence.StandardKey.Close))
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.triggered.connect(lambda _checked=False: window.close())
    window.addAction(action)
    return action
