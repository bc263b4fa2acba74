"""The main window: navigation on the left, the pages in a stack, banners on top,
the status bar below. Pages are built on first visit, from a registry of factories
(:mod:`console_app.shell.pages`); other windows open through :class:`ScreenOpener`.

Pages may offer these hooks, called when present:
``refresh()`` (Ctrl+R, and after the hub comes back), ``set_filters(dict)`` on History
(``Navigator.sig_open_history``) and ``set_job_filter(str)`` on Scheduler
(``Navigator.sig_open_schedules``); and these attributes: ``page_menu`` (a QMenu shown
in the menu bar while the page is, e.g. Manage's *Job* menu) and ``search`` or
``search_edit`` (the QLineEdit that Ctrl+F focuses). The command palette (Ctrl+Shift+P)
offers every menu action, and the buttons of a page that has no menu of its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from console_app.client.connection import HubConnection
from console_app.client.errors import describe_error
from console_app.client.history import get_health
from console_app.session import HubSession
from console_app.shell.banner import Banner
from console_app.shell.icons import PAGE_ICONS, icon
from console_app.shell.monitor import ConnectionMonitor, Probe
from console_app.shell.pages import PageFactory, PlaceholderPage, default_pages
from console_app.shell.palette import (
    Command,
    CommandPalette,
    commands_of_buttons,
    commands_of_menu,
    plain_text,
)
from console_app.shell.screens import ScreenOpener, ScreenSpec
from console_app.shell.status_bar import HubStatusBar
from console_app.tasks import TaskManager
from console_app.widgets import fit_on_screen

HEALTH_TIMEOUT_S = 5.0  # a hub slower than this to say "ok" counts as gone
SEARCH_HOOKS = ("search", "search_edit")  # a page's search box, by attribute


def health_probe(url: str, token: str | None) -> tuple[Probe, Callable[[], None]]:
    """A probe on its own short-timeout connection, and how to close it."""
    conn = HubConnection(url, token, timeout=HEALTH_TIMEOUT_S)
    return (lambda: get_health(conn)), conn.close


class MainWindow(QMainWindow):
    sig_switch_hub = Signal()  # the user asked to connect to another hub

    def __init__(self, session: HubSession, pages: Mapping[str, PageFactory] | None = None,
                 screens: dict[str, ScreenSpec] | None = None,
                 monitor_interval_ms: int = 3000, probe: Probe | None = None) -> None:
        super().__init__()
        self.session = session
        self._factories = dict(pages if pages is not None else default_pages())
        self._built: dict[str, QWidget] = {}
        # The hub alone: the desktop adds the application's name ("… — WebJobs console").
        self.setWindowTitle(session.url)
        fit_on_screen(self, QSize(1200, 760))  # at most 1024×700, on the screen in use
        self.connection_banner = Banner(closable=False)
        self.notice = Banner(closable=True)
        self.nav_list = QListWidget()
        self.stack = QStackedWidget()
        self._page_menu_action: QAction | None = None  # the current page's menu in the bar
        self._build_layout()
        self.status = HubStatusBar()
        self.setStatusBar(self.status)
        self.status.show_info(session.url, session.info)
        session.tasks.sig_busy_changed.connect(self.status.set_busy)
        self.screens = ScreenOpener(session, self.show_notice, self, screens)
        self._connect_navigator()
        self._build_actions()
        self.command_palette = CommandPalette(self)
        self.monitor = self._start_monitor(probe, monitor_interval_ms)
        self.show_page(0)

    # -- building ------------------------------------------------------------------

    def _build_layout(self) -> None:
        for name in self._factories:
            self.nav_list.addItem(QListWidgetItem(icon(PAGE_ICONS.get(name, "")), name))
            self.stack.addWidget(QWidget())  # swapped for the page on first visit
        self.nav_list.setIconSize(QSize(20, 20))
        self.nav_list.setSpacing(2)
        self.nav_list.setFixedWidth(150)
        self.nav_list.currentRowChanged.connect(self._row_changed)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(6, 6, 6, 0)
        column.addWidget(self.connection_banner)
        column.addWidget(self.notice)
        column.addWidget(self.stack, 1)
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.nav_list)
        row.addWidget(right, 1)
        self.setCentralWidget(holder)

    def _connect_navigator(self) -> None:
        nav = self.session.nav
        nav.sig_run_job.connect(self.screens.run_job)
        nav.sig_open_editor.connect(self.screens.open_editor)
        nav.sig_open_debugger.connect(self.screens.open_debugger)
        nav.sig_replay_run.connect(self.screens.replay_run)
        nav.sig_open_history.connect(self.open_history)
        nav.sig_open_schedules.connect(self.open_schedules)
        nav.sig_jobs_changed.connect(self._jobs_changed)
        # A run shorter than the Manage page's poll of /running is never seen in flight:
        # its last-run column is brought up to date when the window that ran it says so.
        nav.sig_run_ended.connect(lambda _name: self._jobs_changed())

    def _build_actions(self) -> None:
        hub_menu = self.menuBar().addMenu("&Hub")
        self._action(hub_menu, "&Switch hub…", "Ctrl+Shift+O", self.sig_switch_hub.emit,
                     "switch")
        # Ctrl+R, as in a browser: F5 runs, in every window that runs something.
        self._action(hub_menu, "&Refresh page", "Ctrl+R", self.refresh_current, "refresh")
        hub_menu.addSeparator()
        self._action(hub_menu, "&Quit", "Ctrl+Q", self.close, "quit")
        go_menu = self.menuBar().addMenu("&Go")
        for row, name in enumerate(self._factories):
            if row < 9:
                self._action(go_menu, name, f"Ctrl+{row + 1}",
                             lambda _checked=False, r=row: self.show_page(r),
                             PAGE_ICONS.get(name, ""))
        go_menu.addSeparator()
        self._action(go_menu, "&Find on this page", "Ctrl+F", self.find_on_page, "search")
        self.palette_action = self._action(go_menu, "Command &palette…", "Ctrl+Shift+P",
                                           self.open_palette, "palette")

    def _action(self, menu: QMenu, text: str, key: str, slot: Callable[..., Any],
                icon_name: str = "") -> QAction:
        action = QAction(icon(icon_name), text, self)
        action.setData(icon_name)  # drawn again in the new ink when the theme switches
        action.setShortcut(QKeySequence(key))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)  # shortcuts work with the menu bar hidden too
        return action

    def _start_monitor(self, probe: Probe | None, interval_ms: int) -> ConnectionMonitor:
        self._close_probe: Callable[[], None] = lambda: None
        if probe is None:
            probe, self._close_probe = health_probe(self.session.url, self.session.conn.token)
        self._monitor_tasks = TaskManager(max_workers=1, parent=self)
        monitor = ConnectionMonitor(probe, self._monitor_tasks, interval_ms, self)
        monitor.sig_connection_changed.connect(self._connection_changed)
        monitor.sig_health.connect(self.status.update_health)
        monitor.start()
        return monitor

    # -- pages ---------------------------------------------------------------------

    @property
    def page_names(self) -> list[str]:
        return list(self._factories)

    def show_page(self, which: int | str) -> QWidget | None:
        row = which if isinstance(which, int) else self.page_names.index(which)
        if self.nav_list.currentRow() != row:
            self.nav_list.setCurrentRow(row)  # _row_changed builds and shows it
        else:
            self._row_changed(row)
        return self.stack.currentWidget()

    def page(self, name: str) -> QWidget | None:
        """The page if it was built already."""
        return self._built.get(name)

    def current_page(self) -> QWidget | None:
        return self.stack.currentWidget()

    def current_name(self) -> str:
        return self.page_names[self.nav_list.currentRow()]

    def _row_changed(self, row: int) -> None:
        if row < 0:
            return
        name = self.page_names[row]
        if name not in self._built:
            self._built[name] = self._make_page(name)
            old = self.stack.widget(row)
            self.stack.insertWidget(row, self._built[name])
            if old is not None:
                self.stack.removeWidget(old)
                old.deleteLater()
        self.stack.setCurrentIndex(row)
        self._show_page_menu(self._built[name])

    def _show_page_menu(self, page: QWidget) -> None:
        """Only the shown page's menu is in the bar, so its shortcuts act on that page alone."""
        if self._page_menu_action is not None:
            self.menuBar().removeAction(self._page_menu_action)
            self._page_menu_action = None
        menu = getattr(page, "page_menu", None)
        if isinstance(menu, QMenu):
            self._page_menu_action = self.menuBar().addMenu(menu)

    def _make_page(self, name: str) -> QWidget:
        try:
            return self._factories[name](self.session)
        except Exception as err:  # a page that fails to build leaves the rest usable
            self.show_notice(f"The {name} page failed to open: {describe_error(err)}")
            return PlaceholderPage(name, f"Failed to open: {describe_error(err)}")

    def refresh_current(self) -> None:
        refresh = getattr(self.current_page(), "refresh", None)
        if callable(refresh):
            refresh()

    def search_box(self) -> QLineEdit | None:
        page = self.current_page()
        for hook in SEARCH_HOOKS:
            box = getattr(page, hook, None)
            if isinstance(box, QLineEdit):
                return box
        return None

    def find_on_page(self) -> None:
        box = self.search_box()
        if box is None:
            self.statusBar().showMessage(f"The {self.current_name()} page has no search", 4000)
            return
        box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        box.selectAll()

    # -- the command palette -------------------------------------------------------

    def palette_commands(self) -> list[Command]:
        """Every menu's actions (the current page's menu included), then, for a page
        without a menu, its buttons."""
        found: list[Command] = []
        for action in self.menuBar().actions():
            menu = action.menu()
            if isinstance(menu, QMenu):
                found += commands_of_menu(menu, plain_text(menu.title()),
                                          skip=[self.palette_action])
        page = self.current_page()
        if page is not None and self._page_menu_action is None:
            found += commands_of_buttons(page, self.current_name())
        return found

    def open_palette(self) -> None:
        self.command_palette.open(self.palette_commands())

    # -- navigator answers ---------------------------------------------------------

    def open_history(self, filters: dict[str, Any]) -> None:
        page = self.show_page("History")
        set_filters = getattr(page, "set_filters", None)
        if callable(set_filters):
            set_filters(dict(filters))

    def open_schedules(self, job: str) -> None:
        page = self.show_page("Scheduler")
        set_job_filter = getattr(page, "set_job_filter", None)
        if callable(set_job_filter):
            set_job_filter(job)

    def _jobs_changed(self) -> None:
        # The shell refreshes the job list; the Manage page need not listen itself.
        manage = self.page("Manage")
        refresh = getattr(manage, "refresh", None)
        if callable(refresh):
            refresh()

    # -- connection and messages ---------------------------------------------------

    def show_notice(self, text: str, level: str = "warning") -> None:
        """A non-modal note at the top of the window (dismissable, times out)."""
        self.notice.show_message(text, level, timeout_ms=20000)

    def _connection_changed(self, connected: bool) -> None:
        self.status.set_connected(connected)
        if connected:
            self.connection_banner.dismiss()
            self.refresh_current()
        else:
            self.connection_banner.show_message(
                f"Hub unreachable — retrying every {self.monitor_interval_s()} s "
                f"({self.monitor.last_problem})", "error")

    def monitor_interval_s(self) -> int:
        return max(1, round(self.monitor.interval_ms / 1000))

    def event(self, event: QEvent) -> bool:
        # Light <-> dark: the icons in the new ink. The application's change is asked
        # for by name: a window with a style sheet of its own never sees PaletteChange.
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._redraw_icons()
        return super().event(event)

    def _redraw_icons(self) -> None:
        for row, name in enumerate(self._factories):
            item = self.nav_list.item(row)
            if item is not None:
                item.setIcon(icon(PAGE_ICONS.get(name, "")))
        for action in self.actions():
            if isinstance(action.data(), str) and action.data():
                action.setIcon(icon(action.data()))

    def closeEvent(self, event: QCloseEvent) -> None:
        self.monitor.stop()
        self.screens.close_all()
        self._monitor_tasks.shutdown()
        self._close_probe()
        super().closeEvent(event)
