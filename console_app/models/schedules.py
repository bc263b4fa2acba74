"""Scheduler page state and its Qt adapter.

:class:`ScheduleTableModel` presents the schedules; ticking the *On* box does not
change the model, it asks ``on_toggle`` (the page sends it to the hub) and the row
changes when the hub's answer comes back, so the switch never shows a state the hub
does not have. :class:`CronCheck` is the cron field's as-you-type state: answers to
older keystrokes are dropped by their sequence number."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from console_app.client.schedules import CronPreview, ScheduleInfo
from console_app.history.fmt import OUTCOME_COLOURS, age, local_time
from console_app.models.rows import Index, RowsModel

__all__ = ["COLUMNS", "CronCheck", "Roles", "ScheduleTableModel"]

COLUMNS = ("On", "Name", "Job", "When", "Last run", "Next run")
ON, NAME, JOB, WHEN, LAST, NEXT = range(len(COLUMNS))


class Roles:
    SCHEDULE = Qt.ItemDataRole.UserRole + 1      # the ScheduleInfo of the row
    SCHEDULE_ID = Qt.ItemDataRole.UserRole + 2
    ENABLED = Qt.ItemDataRole.UserRole + 3
    LAST_OUTCOME = Qt.ItemDataRole.UserRole + 4
    BADGE_COLOUR = Qt.ItemDataRole.UserRole + 5  # the last outcome's colour


def _last_run(item: ScheduleInfo, now: float) -> str:
    if item.last_run is None:
        return "never"
    return f"{item.last_outcome or '?'} · {age(item.last_run, now)}"


def _next_run(item: ScheduleInfo, now: float) -> str:
    if item.running:
        return "running now"
    if not item.enabled:
        return "off"
    if item.next_run is None:
        return "—"
    if item.next_run <= now:  # the hub has not fired it yet: it is due, not past
        return f"{local_time(item.next_run)} (due now)"
    return f"{local_time(item.next_run)} ({age(item.next_run, now)})"


class ScheduleTableModel(RowsModel):
    COLUMNS = COLUMNS

    def __init__(self, on_toggle: Callable[[int, bool], None] | None = None,
                 clock: Callable[[], float] = time.time, parent: Any = None) -> None:
        super().__init__(parent=parent)
        self._on_toggle = on_toggle
        self._clock = clock

    def set_schedules(self, items: list[ScheduleInfo]) -> None:
        self.beginResetModel()
        self._rows = sorted(items, key=lambda s: (s.job_name, s.name, s.schedule_id))
        self.endResetModel()

    def replace(self, item: ScheduleInfo) -> None:
        """One schedule as the hub now has it (after a switch or an edit)."""
        for row, old in enumerate(self._rows):
            if old.schedule_id == item.schedule_id:
                self._rows[row] = item
                self.row_changed(row)
                return

    def schedule_at(self, row: int) -> ScheduleInfo | None:
        found: ScheduleInfo | None = self.row_item(row)
        return found

    def row_of(self, schedule_id: int) -> int:
        return next((r for r, s in enumerate(self._rows) if s.schedule_id == schedule_id), -1)

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = super().flags(index)
        if index.isValid() and index.column() == ON:
            return base | Qt.ItemFlag.ItemIsUserCheckable
        return base

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.schedule_at(index.row()) if index.isValid() else None
        if item is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.CheckStateRole and column == ON:
            return Qt.CheckState.Checked if item.enabled else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(item, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(item, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == LAST and item.last_outcome:
            return QColor(OUTCOME_COLOURS.get(item.last_outcome, "#000000"))
        return {Roles.SCHEDULE: item, Roles.SCHEDULE_ID: item.schedule_id,
                Roles.ENABLED: item.enabled, Roles.LAST_OUTCOME: item.last_outcome,
                Roles.BADGE_COLOUR: OUTCOME_COLOURS.get(item.last_outcome or "", None)
                }.get(role)

    def _text(self, item: ScheduleInfo, column: int) -> str:
        now = self._clock()
        texts = {ON: "", NAME: item.name, JOB: item.job_name, WHEN: item.cron_text,
                 LAST: _last_run(item, now), NEXT: _next_run(item, now)}
        return texts[column]

    def _tip(self, item: ScheduleInfo, column: int) -> str | None:
        if column == WHEN:
            return f"{item.cron}  ({item.timezone})"
        if column == LAST:
            return "Click for this schedule's history"
        if column == ON:
            return "Switch the schedule on or off"
        return None

    def setData(self, index: Index, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        item = self.schedule_at(index.row()) if index.isValid() else None
        if item is None or role != Qt.ItemDataRole.CheckStateRole or index.column() != ON:
            return False
        # Views send the enum, tests and delegates may send its int or a bool.
        wanted = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value, True)
        if self._on_toggle is not None and wanted != item.enabled:
            self._on_toggle(item.schedule_id, wanted)
        return False  # the row changes when the hub confirms (see the module docstring)


@dataclass
class CronCheck:
    """The cron field's check: the latest request's number and what came back."""

    sequence: int = 0
    preview: CronPreview | None = None
    error: str | None = None

    def ask(self) -> int:
        """A new keystroke's request number; older answers will be ignored."""
        self.sequence += 1
        self.preview, self.error = None, None
        return self.sequence

    def answered(self, sequence: int, preview: CronPreview) -> bool:
        if sequence != self.sequence:
            return False
        self.preview, self.error = preview, None
        return True

    def refused(self, sequence: int, message: str) -> bool:
        if sequence != self.sequence:
            return False
        self.preview, self.error = None, message
        return True

    @property
    def valid(self) -> bool:
        return self.preview is not None
