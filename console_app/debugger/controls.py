"""The debugger window's widgets, toolbar and layout, without what they do: the
window (:mod:`console_app.debugger.window`) connects them to the session.

Every window opens whole on the screen of the window it came from, within 1024x700."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QStyle,
    QTableView,
    QTabWidget,
    QToolBar,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from console_app.debugger.panes import CallStackView, ConsoleView, ResultView
from console_app.debugger.watches import WatchesPanel
from console_app.editor import JobEditor
from console_app.widgets import MessageBar, close_key

__all__ = ["WINDOW_SIZE", "DebuggerLayout"]

# Fits a 1024x700 screen with room for the desktop's panels.
WINDOW_SIZE = (1000, 660)
Pixmap = QStyle.StandardPixmap


class DebuggerLayout(QMainWindow):
    def _build(self, title: str, live: bool) -> None:
        self.setWindowTitle(title)
        self.source_view = JobEditor(self)
        self.source_view.set_read_only(True)  # breakpoints still toggle in its margin
        self.variables_view = QTreeView(self)
        self.variables_view.setUniformRowHeights(True)
        self.watches = WatchesPanel(self)
        self.stack_view = CallStackView(self)
        self.requests_view = QTableView(self)
        self.requests_view.setVisible(live)
        self.console_view = ConsoleView(self)
        self.result_view = ResultView(self)
        self.banner = MessageBar(self)
        self.status_label = QLabel(self)
        self._build_toolbar(live)
        self.setCentralWidget(self._layout())
        self._place()
        self.close_action = close_key(self)

    def _size_requests(self) -> None:
        """The requests' columns fit their contents; the path takes what is left."""
        header = self.requests_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)

    def _layout(self) -> QWidget:
        self.values_tabs = QTabWidget(self)
        self.values_tabs.addTab(self.variables_view, "Variables")
        self.values_tabs.addTab(self.watches, "Watches")
        stack = QTabWidget(self)
        stack.addTab(self.stack_view, "Call stack")
        right = _splitter(Qt.Orientation.Vertical, (self.values_tabs, 3), (stack, 1),
                          (self.requests_view, 1))
        self.bottom_tabs = QTabWidget(self)
        self.bottom_tabs.addTab(self.console_view, "Console")
        self.bottom_tabs.addTab(self.result_view, "Result")
        main = _splitter(Qt.Orientation.Horizontal, (self.source_view, 3), (right, 2))
        upright = _splitter(Qt.Orientation.Vertical, (main, 3), (self.bottom_tabs, 1))
        holder = QWidget(self)
        column = QVBoxLayout(holder)
        column.setContentsMargins(4, 4, 4, 4)
        column.addWidget(self.banner)
        column.addWidget(upright, 1)
        column.addWidget(self.status_label)
        return holder

    def _place(self) -> None:
        origin = QApplication.activeWindow()
        screen = (origin.screen() if origin is not None else None) \
            or QGuiApplication.primaryScreen()
        if screen is None:
            self.resize(*WINDOW_SIZE)
            return
        area = screen.availableGeometry()
        self.resize(min(WINDOW_SIZE[0], area.width()), min(WINDOW_SIZE[1], area.height()))
        frame = self.frameGeometry()
        frame.moveCenter(area.center())
        self.move(max(area.left(), frame.left()), max(area.top(), frame.top()))

    def _action(self, text: str, keys: str, icon: Pixmap | None = None) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.setToolTip(f"{text} ({QKeySequence(keys).toString()})")
        if icon is not None:
            action.setIcon(self.style().standardIcon(icon))
        self.toolbar.addAction(action)
        return action

    def _build_toolbar(self, live: bool) -> None:
        self.toolbar = QToolBar("Debug", self)
        self.toolbar.setMovable(False)
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.addToolBar(self.toolbar)
        self.action_continue = self._action("Continue", "F8", Pixmap.SP_MediaPlay)
        self.action_step = self._action("Step over", "F10", Pixmap.SP_ArrowForward)
        self.action_step_into = self._action("Step into", "F11", Pixmap.SP_ArrowDown)
        self.action_step_out = self._action("Step out", "Shift+F11", Pixmap.SP_ArrowUp)
        self.action_restart = self._action("Restart", "Ctrl+Shift+F5", Pixmap.SP_BrowserReload)
        self.action_stop = self._action("Stop", "Shift+F5", Pixmap.SP_MediaStop)
        self.action_breakpoint = self._action("Breakpoint", "F9")
        self.action_breakpoint.setToolTip("Toggle a breakpoint at the caret (F9)")
        # The switches go on a row of their own: beside the stepping they would go off
        # the end of a narrow window, into the toolbar's overflow menu.
        self.addToolBarBreak()
        self.options_toolbar = QToolBar("Options", self)
        self.options_toolbar.setMovable(False)
        self.addToolBar(self.options_toolbar)
        self.exception_switch = QCheckBox("Pause on uncaught exceptions", self)
        self.exception_switch.setToolTip("An exception leaving the job stops where it was "
                                         "thrown, with the names there, before the run fails.")
        self.exception_switch.setChecked(True)
        self.options_toolbar.addWidget(self.exception_switch)
        self._build_live_controls(live)

    def _build_live_controls(self, live: bool) -> None:
        self.open_page_button = QPushButton("Open page", self)
        self.open_page_button.setToolTip("Open the tagged page in a browser signed in to "
                                         "this hub as you: its requests stop here.")
        self.copy_url_button = QPushButton("Copy URL", self)
        self.copy_url_button.setToolTip("Copy the tagged page's address, for a browser "
                                        "signed in to this hub as you.")
        self.pause_first_switch = QCheckBox("Pause on the first line of every request", self)
        self.pause_first_switch.setToolTip("Off: requests run on until a breakpoint.")
        self.pause_first_switch.setChecked(True)
        widgets = (self.open_page_button, self.copy_url_button, self.pause_first_switch)
        if live:
            self.options_toolbar.addSeparator()
            for widget in widgets:
                self.options_toolbar.addWidget(widget)
        else:  # live-only controls: unplaced, they would float over the toolbar
            for widget in widgets:
                widget.hide()


def _splitter(orientation: Qt.Orientation, *parts: tuple[QWidget, int]) -> QSplitter:
    splitter = QSplitter(orientation)
    for number, (widget, stretch) in enumerate(parts):
        splitter.addWidget(widget)
        splitter.setStretchFactor(number, stretch)
    return splitter
