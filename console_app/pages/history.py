"""The History page: every recorded run, per job, per schedule or all.

Filters are the hub's own (``GET /history``): text search, status, trigger (source),
a time range (a preset, or *Custom range…* with two date-time fields in local time),
job and schedule, with paging. Picking a run fetches it in full and
the :class:`~console_app.history.run_view.RunView` replays its console. Answers to
an older query are dropped (:class:`~console_app.tasks.Latest`), so fast typing never
shows stale rows."""

from __future__ import annotations

import html
import time
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QDateTime, QItemSelection, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDateTimeEdit,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from console_app.client.history import (
    OUTCOMES,
    SOURCES,
    HistoryFilters,
    RunDetail,
    RunPage,
    get_run,
    list_runs,
)
from console_app.history.run_view import RunView
from console_app.models.history import HistoryState, RunTableModel
from console_app.session import HubSession
from console_app.shell.screens import open_editor_at
from console_app.tasks import Latest
from console_app.widgets import MessageBar, row_table

__all__ = ["CUSTOM_RANGE", "TIME_RANGES", "HistoryPage"]

SEARCH_DELAY_MS = 350
CUSTOM_RANGE = -1  # the time box's value for "from and to as set in the two fields"
TIME_RANGES: tuple[tuple[str, int | None], ...] = (
    ("Any time", None), ("Last hour", 3600), ("Last 24 hours", 86400),
    ("Last 7 days", 7 * 86400), ("Last 30 days", 30 * 86400),
    ("Custom range…", CUSTOM_RANGE))
TRIGGER_WORDS = {"http": "HTTP call", "editor": "Editor", "adhoc": "Ad hoc",
                 "schedule": "Schedule", "debug": "Debugger"}


def _combo(first: str, items: list[tuple[str, Any]]) -> QComboBox:
    box = QComboBox()
    box.addItem(first, None)
    for text, value in items:
        box.addItem(text, value)
    return box


def _minute_of(edit: QDateTimeEdit) -> float:
    """The field's time in epoch seconds, to the minute it shows (it hides seconds)."""
    return float(edit.dateTime().toSecsSinceEpoch() // 60 * 60)


def _range_problem(since: float | None, until: float | None) -> str | None:
    if since is not None and until is not None and since >= until:
        return "The time range ends before it starts: set “to” later than “from”."
    return None


def _time_edit() -> QDateTimeEdit:
    edit = QDateTimeEdit(calendarPopup=True)
    edit.setDisplayFormat("yyyy-MM-dd HH:mm")
    return edit


class HistoryPage(QWidget):
    sig_loaded = Signal()           # a page of runs is in the table
    sig_run_shown = Signal(str)     # a run's detail is in the run view

    def __init__(self, session: HubSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.state = HistoryState()
        self.model = RunTableModel(self)
        self._queries = Latest()
        self._details = Latest()
        self._schedule_name = ""        # the scoped schedule's name, once known
        self._opening: str | None = None  # the run whose detail is on its way
        self._reached_by_request = False  # set_filters came with this show
        self._search_timer = QTimer(self, singleShot=True, interval=SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._apply_widgets)
        self._build()
        self.run_view.sig_run_again.connect(session.nav.sig_run_job.emit)
        self.run_view.sig_debug.connect(session.nav.sig_replay_run.emit)
        self.run_view.sig_open_line.connect(
            lambda job, line: open_editor_at(session, job, line))

    # -- building ----------------------------------------------------------------------

    def _build(self) -> None:
        self.message = MessageBar()
        self.scope_label = QLabel()
        self.clear_scope_button = QPushButton("Show all runs")
        self.clear_scope_button.clicked.connect(lambda: self.set_filters({}))
        self.search_edit = QLineEdit(placeholderText="Search job, parameters, console, "
                                                     "result, error, caller…")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(lambda _t: self._search_timer.start())
        self.search_edit.returnPressed.connect(self._apply_widgets)
        self.status_box = _combo("Any status", [(o.title(), o) for o in OUTCOMES])
        self.trigger_box = _combo("Any trigger", [(TRIGGER_WORDS[s], s) for s in SOURCES])
        self.time_box = QComboBox()
        for text, span in TIME_RANGES:
            self.time_box.addItem(text, span)
        self.time_box.currentIndexChanged.connect(lambda _i: self._time_range_changed())
        for box in (self.status_box, self.trigger_box):
            box.currentIndexChanged.connect(lambda _i: self._apply_widgets())
        self.from_edit, self.until_edit = _time_edit(), _time_edit()
        for edit in (self.from_edit, self.until_edit):
            edit.dateTimeChanged.connect(lambda _t: self._search_timer.start())
        self.custom_range = QWidget()
        custom = QHBoxLayout(self.custom_range)
        custom.setContentsMargins(0, 0, 0, 0)
        for widget in (QLabel("From"), self.from_edit, QLabel("to"), self.until_edit):
            custom.addWidget(widget)
        self.custom_range.setVisible(False)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.table = row_table(self.model)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.prev_button = QPushButton("‹ Newer")
        self.prev_button.clicked.connect(lambda: self._go(self.state.previous_filters()))
        self.next_button = QPushButton("Older ›")
        self.next_button.clicked.connect(lambda: self._go(self.state.next_filters()))
        self.range_label = QLabel()
        self.run_view = RunView()
        self._lay_out()

    def _lay_out(self) -> None:
        scope = QHBoxLayout()
        scope.addWidget(self.scope_label, 1)
        scope.addWidget(self.clear_scope_button)
        filters = QHBoxLayout()
        filters.addWidget(self.search_edit, 3)
        for widget in (self.status_box, self.trigger_box, self.time_box, self.custom_range,
                       self.refresh_button):
            filters.addWidget(widget)
        paging = QHBoxLayout()
        paging.addWidget(self.prev_button)
        paging.addWidget(self.range_label, 1)
        paging.addWidget(self.next_button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        left_layout.addLayout(paging)
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(self.run_view)
        split.setStretchFactor(0, 3)  # the run list needs its columns; the run view wraps
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addLayout(scope)
        layout.addLayout(filters)
        layout.addWidget(split, 1)
        self._show_scope()

    # -- filters -----------------------------------------------------------------------

    def set_filters(self, filters: dict[str, Any]) -> None:
        """Show the runs of ``{"job": name}``, ``{"schedule": id}``, both or (``{}``) all;
        the other filters go back to their defaults."""
        self._reached_by_request = True
        job, schedule = filters.get("job") or None, filters.get("schedule")
        self._schedule_name = str(filters.get("scheduleName") or "")
        for box in (self.status_box, self.trigger_box, self.time_box, self.search_edit):
            box.blockSignals(True)
        self.status_box.setCurrentIndex(0)
        self.trigger_box.setCurrentIndex(0)
        self.time_box.setCurrentIndex(0)
        self.custom_range.setVisible(False)
        self.search_edit.clear()
        for box in (self.status_box, self.trigger_box, self.time_box, self.search_edit):
            box.blockSignals(False)
        self._search_timer.stop()
        self.state.filters = HistoryFilters(
            job=job, schedule=None if schedule in (None, "") else str(schedule))
        self._show_scope()
        self._go(self.state.filters)

    def _time_range_changed(self) -> None:
        custom = self.time_box.currentData() == CUSTOM_RANGE
        if custom and self.custom_range.isHidden():
            # Start from the last 24 hours, to the next minute (so now is in it).
            until = QDateTime.currentDateTime().addSecs(60)
            for edit, value in ((self.from_edit, until.addSecs(-86400)), (self.until_edit, until)):
                edit.blockSignals(True)
                edit.setDateTime(value)
                edit.blockSignals(False)
        self.custom_range.setVisible(custom)
        self._apply_widgets()

    def _time_range(self) -> tuple[float | None, float | None]:
        span = self.time_box.currentData()
        if span != CUSTOM_RANGE:
            return (None if span is None else time.time() - span), None
        return _minute_of(self.from_edit), _minute_of(self.until_edit)

    def _apply_widgets(self) -> None:
        self._search_timer.stop()
        since, until = self._time_range()
        problem = _range_problem(since, until)
        if problem is not None:  # the rows of the last good range stay
            self.message.show_error_text(problem)
            return
        self._go(self.state.refine(
            search=self.search_edit.text().strip() or None,
            status=self.status_box.currentData(), source=self.trigger_box.currentData(),
            since=since, until=until))

    def _show_scope(self) -> None:
        f = self.state.filters
        schedule = (f"schedule <b>{html.escape(self._schedule_name)}</b>"
                    if self._schedule_name else f"schedule #{f.schedule}")
        parts = ([f"job <b>{html.escape(f.job)}</b>"] if f.job else []) + (
            [schedule] if f.schedule else [])
        self.scope_label.setText("Runs of " + " and ".join(parts) if parts else "All runs")
        self.clear_scope_button.setVisible(bool(parts))

    # -- loading -----------------------------------------------------------------------

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if event.spontaneous():  # the window came back (un-minimised): the same view
            self.refresh()
            return
        # The main window answers "history of X" by showing the page and then calling
        # set_filters; only a show without that (Ctrl+3, the sidebar) is plain navigation.
        self._reached_by_request = False
        QTimer.singleShot(0, self, self._shown_by_navigation)

    def _shown_by_navigation(self) -> None:
        if self._reached_by_request or not self.isVisible():
            return
        f = self.state.filters
        if f.job or f.schedule:  # the History page itself means every run
            self._schedule_name = ""
            self.state.filters = replace(f, job=None, schedule=None, offset=0)
            self._show_scope()
        self.refresh()

    def refresh(self) -> None:
        if self.time_box.currentData() != CUSTOM_RANGE:  # "the last hour" from now
            self.state.filters = replace(self.state.filters, since=self._time_range()[0])
        self._go(self.state.filters)

    def _go(self, filters: HistoryFilters | None) -> None:
        if filters is None:
            return
        self.state.filters = filters
        call, conn = self._queries.start(), self.session.conn
        self.session.tasks.run(lambda: list_runs(conn, filters), call.wrap(self._loaded),
                               call.wrap(self._failed))

    def _loaded(self, page: RunPage) -> None:
        problem = _range_problem(*self._time_range())  # the fields may still be wrong
        if problem is None:
            self.message.clear_message()
        else:
            self.message.show_error_text(problem)
        self.state.page = page
        self.model.set_runs(page.runs)
        self._keep_shown_run(page)
        self._name_schedule(page)
        self.table.resizeColumnsToContents()
        self.range_label.setText(self.state.range_text())
        self.prev_button.setEnabled(self.state.previous_filters() is not None)
        self.next_button.setEnabled(self.state.next_filters() is not None)
        self.sig_loaded.emit()

    def _failed(self, exc: Exception) -> None:
        self.message.show_error(exc, "Loading history")

    def _keep_shown_run(self, page: RunPage) -> None:
        """The run view shows a run of the list or none: a run the new page lacks is
        cleared (and a fetch of one still on its way is dropped)."""
        shown = self.run_view.detail.summary.run_id if self.run_view.detail else None
        wanted = shown or self._opening
        ids = [run.run_id for run in page.runs]
        if wanted is None:
            return
        if wanted not in ids:
            self._details.supersede()
            self._opening = None
            self.run_view.show_run(None)
            return
        selection = self.table.selectionModel()
        selection.blockSignals(True)  # the run is shown already: no second fetch
        self.table.selectRow(ids.index(wanted))
        selection.blockSignals(False)

    def _name_schedule(self, page: RunPage) -> None:
        if self.state.filters.schedule and not self._schedule_name:
            named = next((r.schedule_name for r in page.runs if r.schedule_name), None)
            if named:
                self._schedule_name = named
                self._show_scope()

    # -- one run -----------------------------------------------------------------------

    def _selection_changed(self, selected: QItemSelection, _old: QItemSelection) -> None:
        rows = selected.indexes()
        if rows:
            self.open_row(rows[0].row())

    def open_row(self, row: int) -> None:
        """Fetch the run on ``row`` in full and show it (its console replays)."""
        run = self.model.run_at(row)
        if run is None:
            return
        call, conn, run_id = self._details.start(), self.session.conn, run.run_id
        self._opening = run_id
        self.session.tasks.run(lambda: get_run(conn, run_id), call.wrap(self._shown),
                               call.wrap(self._detail_failed))

    def _shown(self, detail: RunDetail) -> None:
        self._opening = None
        self.run_view.show_run(detail)
        self.sig_run_shown.emit(detail.summary.run_id)

    def _detail_failed(self, exc: Exception) -> None:
        self._opening = None
        self.message.show_error(exc, "Opening the run")
