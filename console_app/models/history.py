"""History page state and its Qt adapters: the run table and the replayed console.

Plain-Python state (:class:`HistoryState`, :func:`replay_plan`) holds what the page
knows; :class:`RunTableModel` and :class:`ConsoleModel` only present it. Views read
the badge colour, the run itself and a line's timing from custom roles."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    Qt,
)
from PySide6.QtGui import QColor

from console_app.client.history import HistoryFilters, LogEntry, RunPage, RunSummary
from console_app.history.fmt import OUTCOME_COLOURS, duration, local_time
from console_app.models.rows import ROOT, Index, RowsModel

__all__ = [
    "LEVEL_COLOURS", "MAX_GAP_MS", "ConsoleModel", "HistoryState", "Roles", "RunTableModel",
    "replay_plan",
]

# Gaps longer than this are shortened when replaying at recorded pace: a job that
# slept for ten minutes should not make the owner wait ten minutes to see its end.
MAX_GAP_MS = 3000
LEVEL_COLOURS = {"error": "#c62828", "warn": "#ef6c00", "info": "#1565c0", "debug": "#757575"}


class Roles:
    RUN = Qt.ItemDataRole.UserRole + 1          # the RunSummary of the row
    RUN_ID = Qt.ItemDataRole.UserRole + 2
    OUTCOME = Qt.ItemDataRole.UserRole + 3      # 'success', 'failed', ...
    BADGE_COLOUR = Qt.ItemDataRole.UserRole + 4  # '#rrggbb' for the status badge
    LEVEL = Qt.ItemDataRole.UserRole + 5        # a console line's level
    MS = Qt.ItemDataRole.UserRole + 6           # its milliseconds from the start


@dataclass
class HistoryState:
    """Filters and the page of runs they found."""

    filters: HistoryFilters = field(default_factory=HistoryFilters)
    page: RunPage | None = None

    def refine(self, **changes: Any) -> HistoryFilters:
        """New filters back at the first page (a new search starts from the top)."""
        self.filters = replace(self.filters, offset=0, **changes)
        return self.filters

    def next_filters(self) -> HistoryFilters | None:
        if self.page is None or not self.page.has_more:
            return None
        return self.filters.page(self.filters.offset + self.filters.limit)

    def previous_filters(self) -> HistoryFilters | None:
        if self.filters.offset == 0:
            return None
        return self.filters.page(self.filters.offset - self.filters.limit)

    def range_text(self) -> str:
        if self.page is None:
            return ""
        if not self.page.runs:
            return "No runs" if self.filters.offset == 0 else "No more runs"
        first = self.filters.offset + 1
        return f"Runs {first}–{first + len(self.page.runs) - 1}"


COLUMNS = ("Started", "Job", "Status", "Duration", "Started by", "Node")
STATUS_COLUMN = 2


def _cell(run: RunSummary, column: int) -> str:
    if column == 0:
        return local_time(run.started)
    if column == 1:
        return run.job_name
    if column == STATUS_COLUMN:
        return run.outcome if run.code is None else f"{run.outcome} · {run.code}"
    if column == 3:
        return duration(run.runtime_ms)
    if column == 4:
        return run.started_by
    return run.node


class RunTableModel(RowsModel):
    """One row per run, newest first, as the hub sent them."""

    COLUMNS = COLUMNS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent=parent)

    def set_runs(self, runs: list[RunSummary] | tuple[RunSummary, ...]) -> None:
        self.reset_rows(list(runs))

    def run_at(self, row: int) -> RunSummary | None:
        found: RunSummary | None = self.row_item(row)
        return found

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        run = self.run_at(index.row()) if index.isValid() else None
        if run is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return _cell(run, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return run.message or run.run_id
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == STATUS_COLUMN:
            return QColor(OUTCOME_COLOURS.get(run.outcome, "#000000"))
        return {Roles.RUN: run, Roles.RUN_ID: run.run_id, Roles.OUTCOME: run.outcome,
                Roles.BADGE_COLOUR: OUTCOME_COLOURS.get(run.outcome, "#000000")}.get(role)


def replay_plan(logs: tuple[LogEntry, ...] | list[LogEntry],
                max_gap_ms: int = MAX_GAP_MS) -> list[tuple[int, LogEntry]]:
    """Each line with the wait before it, at recorded pace (long gaps shortened)."""
    plan: list[tuple[int, LogEntry]] = []
    previous = 0
    for entry in logs:
        plan.append((min(max(0, entry.ms - previous), max_gap_ms), entry))
        previous = max(previous, entry.ms)
    return plan


class ConsoleModel(QAbstractListModel):
    """The replayed console: lines in the order the run printed them."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._lines: list[LogEntry] = []

    def clear(self) -> None:
        self.beginResetModel()
        self._lines = []
        self.endResetModel()

    def append(self, entry: LogEntry) -> None:
        row = len(self._lines)
        self.beginInsertRows(ROOT, row, row)
        self._lines.append(entry)
        self.endInsertRows()

    def extend(self, entries: list[LogEntry] | tuple[LogEntry, ...]) -> None:
        if not entries:
            return
        first = len(self._lines)
        self.beginInsertRows(ROOT, first, first + len(entries) - 1)
        self._lines.extend(entries)
        self.endInsertRows()

    def lines(self) -> list[LogEntry]:
        return list(self._lines)

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._lines)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._lines):
            return None
        line = self._lines[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{line.ms:>7} ms  {line.level:<5}  {line.message}"
        if role == Qt.ItemDataRole.ForegroundRole and line.level in LEVEL_COLOURS:
            return QColor(LEVEL_COLOURS[line.level])
        return {Roles.LEVEL: line.level, Roles.MS: line.ms}.get(role)
