"""History page state and its Qt adapter: the run table, and the replay plan.

Plain-Python state (:class:`HistoryState`, :func:`replay_plan`) holds what the page
knows; :class:`RunTableModel` only presents it. Views read the badge colour and the
run itself from custom roles. The replayed console is the Run dialog's
:class:`console_app.run.console.ConsoleModel`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from console_app.client.history import HistoryFilters, RunPage, RunSummary
from console_app.history.fmt import OUTCOME_COLOURS, duration, local_time
from console_app.models.rows import Index, RowsModel
from shared.ndjson import LogLine

__all__ = ["MAX_GAP_MS", "HistoryState", "Roles", "RunTableModel", "replay_plan"]

# Gaps longer than this are shortened when replaying at recorded pace: a job that
# slept for ten minutes should not make the owner wait ten minutes to see its end.
MAX_GAP_MS = 3000


class Roles:
    RUN = Qt.ItemDataRole.UserRole + 1          # the RunSummary of the row
    RUN_ID = Qt.ItemDataRole.UserRole + 2
    OUTCOME = Qt.ItemDataRole.UserRole + 3      # 'success', 'failed', ...
    BADGE_COLOUR = Qt.ItemDataRole.UserRole + 4  # '#rrggbb' for the status badge


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


def replay_plan(logs: tuple[LogLine, ...] | list[LogLine],
                max_gap_ms: int = MAX_GAP_MS) -> list[tuple[int, LogLine]]:
    """Each line with the wait before it, at recorded pace (long gaps shortened)."""
    plan: list[tuple[int, LogLine]] = []
    previous = 0
    for line in logs:
        plan.append((min(max(0, line.t - previous), max_gap_ms), line))
        previous = max(previous, line.t)
    return plan
