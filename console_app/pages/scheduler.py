"""The Scheduler page: every schedule, its switch, what it runs and when.

A row's *On* box switches the schedule on the hub (the row follows the hub's
answer); clicking its *Last run* opens that schedule's history; *Run now* and the
row menu (history, edit, run with other parameters, delete) act on the selected
schedule. Questions to the owner go through :attr:`SchedulerPage.confirm` and
:attr:`SchedulerPage.ask_params`, which tests replace to answer them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from console_app.client.schedules import (
    ScheduleInfo,
    delete_schedule,
    list_schedules,
    run_now,
    set_enabled,
)
from console_app.history.schedule_dialog import ScheduleDialog
from console_app.models.schedules import LAST, WHEN, ScheduleTableModel
from console_app.run.params import ParamsDialog
from console_app.session import HubSession
from console_app.tasks import Latest
from console_app.widgets import MessageBar, RefreshWhileShown, new_item_key, row_table, run_key

__all__ = ["SchedulerPage"]

REFRESH_MS = 30_000  # next fire times and 'running now' move on their own


def _ask_yes(parent: QWidget, title: str, question: str) -> bool:
    answer = QMessageBox.question(parent, title, question)
    return answer == QMessageBox.StandardButton.Yes


def _ask_params(parent: QWidget, item: ScheduleInfo) -> dict[str, Any] | None:
    """The JSON dialog every run shares: Run stays off, with the reason shown, while
    the text is not a JSON object."""
    dialog = ParamsDialog(item.job_name, item.params_dict(), parent)
    return dialog.params() if dialog.exec() == ParamsDialog.DialogCode.Accepted else None


class SchedulerPage(QWidget):
    sig_loaded = Signal()               # the table shows the hub's schedules
    sig_ran = Signal(int, str)          # schedule id, outcome of a Run now
    sig_changed = Signal()              # a switch, save or delete was confirmed by the hub

    def __init__(self, session: HubSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model = ScheduleTableModel(on_toggle=self.set_enabled, parent=self)
        self.all_schedules: list[ScheduleInfo] = []
        self.job_filter = ""
        self.dialog: ScheduleDialog | None = None
        self.confirm: Callable[[str, str], bool] = lambda t, q: _ask_yes(self, t, q)
        self.ask_params: Callable[[ScheduleInfo], dict[str, Any] | None] = (
            lambda item: _ask_params(self, item))
        self._loads = Latest()
        self._refresher = RefreshWhileShown(self, REFRESH_MS, self.refresh)
        self._build()

    def _build(self) -> None:
        self.message = MessageBar()
        self.scope_label = QLabel("All schedules")
        self.add_button = QPushButton("Add schedule…")
        self.add_button.clicked.connect(lambda: self.open_dialog(None))
        new_item_key(self, self.add_button)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.run_button = QPushButton("Run now")
        self.run_button.clicked.connect(lambda: self._with_selected(self.run_now))
        run_key(self, self.run_button)
        self.menu = QMenu(self)
        self.menu_actions = {
            "history": self.menu.addAction("History", lambda: self._with_selected(
                self.open_history)),
            "edit": self.menu.addAction("Edit…", lambda: self._with_selected(self.open_dialog)),
            "params": self.menu.addAction("Run with other parameters…", lambda: self
                                          ._with_selected(self.run_with_params)),
            "delete": self.menu.addAction("Delete…", lambda: self._with_selected(self.delete)),
        }
        self.more_button = QToolButton()
        self.more_button.setText("More ▾")
        self.more_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.more_button.setMenu(self.menu)
        self._build_table()
        bar = QHBoxLayout()
        bar.addWidget(self.scope_label, 1)
        for widget in (self.run_button, self.more_button, self.add_button, self.refresh_button):
            bar.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        self._update_buttons()

    def _build_table(self) -> None:
        self.table = row_table(self.model)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(WHEN, QHeaderView.ResizeMode.Stretch)  # the plain words
        self.table.clicked.connect(self._clicked)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())

    # -- loading -----------------------------------------------------------------------

    def set_job_filter(self, job: str) -> None:
        """Only ``job``'s schedules ('' for all): answers ``nav.sig_open_schedules``."""
        self.job_filter = job
        self.scope_label.setText(f"Schedules of <b>{job}</b>" if job else "All schedules")
        self._show()
        self.refresh()

    def refresh(self) -> None:
        call, conn = self._loads.start(), self.session.conn
        self.session.tasks.run(lambda: list_schedules(conn), call.wrap(self._loaded),
                               call.wrap(self._error("Loading schedules")))

    def _loaded(self, items: list[ScheduleInfo]) -> None:
        if self.message.kind == "error":
            self.message.clear_message()
        self.all_schedules = items
        self._show()
        self.sig_loaded.emit()

    def _show(self) -> None:
        chosen = self.selected()
        self.model.set_schedules([s for s in self.all_schedules
                                  if not self.job_filter or s.job_name == self.job_filter])
        if chosen is not None:
            self.select(chosen.schedule_id)
        self._update_buttons()

    def _error(self, doing: str) -> Callable[[Exception], None]:
        return lambda exc: self.message.show_error(exc, doing)

    # -- selection ---------------------------------------------------------------------

    def selected(self) -> ScheduleInfo | None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return self.model.schedule_at(rows[0].row()) if rows else None

    def select(self, schedule_id: int) -> None:
        row = self.model.row_of(schedule_id)
        if row >= 0:
            self.table.selectRow(row)

    def _with_selected(self, action: Callable[[ScheduleInfo], object]) -> None:
        item = self.selected()
        if item is not None:
            action(item)

    def _update_buttons(self) -> None:
        chosen = self.selected() is not None
        self.run_button.setEnabled(chosen)
        self.more_button.setEnabled(chosen)

    def _clicked(self, index: QModelIndex) -> None:
        item = self.model.schedule_at(index.row())
        if item is not None and index.column() == LAST:
            self.open_history(item)

    def _context_menu(self, point: QPoint) -> None:
        index = self.table.indexAt(point)
        if index.isValid():
            self.table.selectRow(index.row())
            self.menu.popup(self.table.viewport().mapToGlobal(point))

    # -- actions -----------------------------------------------------------------------

    def set_enabled(self, schedule_id: int, enabled: bool) -> None:
        conn = self.session.conn
        self.session.tasks.run(lambda: set_enabled(conn, schedule_id, enabled), self._changed,
                               self._error("Switching the schedule " + ("on" if enabled
                                                                         else "off")))

    def _changed(self, item: ScheduleInfo) -> None:
        self.all_schedules = [item if s.schedule_id == item.schedule_id else s
                              for s in self.all_schedules]
        self.model.replace(item)
        self.sig_changed.emit()

    def run_now(self, item: ScheduleInfo, params: dict[str, Any] | None = None) -> None:
        """Run the schedule's job at once (recorded under the schedule)."""
        conn, sid = self.session.conn, item.schedule_id
        self.message.show_info(f"Running {item.name} ({item.job_name})…")

        def done(outcome: str) -> None:
            self.message.show_info(f"{item.name} ran: {outcome}. See its history for the "
                                   "console and result.")
            self.sig_ran.emit(sid, outcome)
            self.refresh()

        self.session.tasks.run(lambda: run_now(conn, sid, params), done,
                               self._error(f"Running {item.name}"))

    def run_with_params(self, item: ScheduleInfo) -> None:
        params = self.ask_params(item)
        if params is not None:
            self.run_now(item, params)

    def open_history(self, item: ScheduleInfo) -> None:
        self.session.nav.sig_open_history.emit({"schedule": str(item.schedule_id),
                                                "scheduleName": item.name})

    def delete(self, item: ScheduleInfo) -> None:
        if not self.confirm("Delete schedule", f"Delete the schedule '{item.name}' of "
                            f"{item.job_name}? It stops at once on every node."):
            return
        conn, sid = self.session.conn, item.schedule_id

        def done(_none: None) -> None:
            self.message.show_info(f"Deleted the schedule '{item.name}'.")
            self.sig_changed.emit()
            self.refresh()

        self.session.tasks.run(lambda: delete_schedule(conn, sid), done,
                               self._error(f"Deleting {item.name}"))

    def open_dialog(self, item: ScheduleInfo | None) -> ScheduleDialog:
        """The Add (``None``) or Edit dialog, opened window-modal without blocking."""
        self.dialog = ScheduleDialog(self.session, item, self.job_filter, self)
        self.dialog.sig_saved.connect(self._saved)
        self.dialog.open()
        return self.dialog

    def _saved(self, item: ScheduleInfo) -> None:
        state = "on" if item.enabled else "off"
        self.message.show_info(f"Saved the schedule '{item.name}' (switched {state}).")
        self.sig_changed.emit()
        self.refresh()
