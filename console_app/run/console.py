"""A run's console lines as a list model: ``t`` ms, level and message, coloured by level.

The one console model and level colour table of the app: the Run dialog streams into
it, the History page replays a recorded run into it, and the debugger's console
colours its lines from the same table."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QAbstractListModel, QObject, Qt
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import QListView

from console_app.models.rows import ROOT, Index
from shared.ndjson import LogLine

__all__ = ["LEVEL_COLOURS", "LEVEL_ROLE", "MESSAGE_ROLE", "TIME_ROLE", "ConsoleModel",
           "console_list_view", "line_text"]

LEVEL_ROLE = Qt.ItemDataRole.UserRole + 1   # log | info | debug | warn | error
TIME_ROLE = Qt.ItemDataRole.UserRole + 2    # ms since the run started
MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 3

# Readable on light and dark backgrounds alike; plain log lines keep the palette's text.
LEVEL_COLOURS = {"info": "#1e88e5", "debug": "#8e8e8e", "warn": "#ef8f00", "error": "#e53935"}


def line_text(line: LogLine, time_width: int = 6) -> str:
    return f"{line.t:>{time_width}} ms  {line.level:<5}  {line.message}"


class ConsoleModel(QAbstractListModel):
    """Lines are appended as the stream delivers them, never reordered.

    ``time_width`` is how many characters the milliseconds are right-aligned in."""

    def __init__(self, parent: QObject | None = None, *, time_width: int = 6) -> None:
        super().__init__(parent)
        self.lines: list[LogLine] = []
        self.time_width = time_width

    def append(self, line: LogLine) -> None:
        self.extend((line,))

    def extend(self, lines: Iterable[LogLine]) -> None:
        added = list(lines)
        if not added:
            return
        first = len(self.lines)
        self.beginInsertRows(ROOT, first, first + len(added) - 1)
        self.lines.extend(added)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self.lines = []
        self.endResetModel()

    def text(self) -> str:
        return "\n".join(line_text(line, self.time_width) for line in self.lines)

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.lines)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.lines):
            return None
        line = self.lines[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return line_text(line, self.time_width)
        if role == Qt.ItemDataRole.ForegroundRole:
            colour = LEVEL_COLOURS.get(line.level)
            return QColor(colour) if colour else None
        return {LEVEL_ROLE: line.level, TIME_ROLE: line.t,
                MESSAGE_ROLE: line.message}.get(role)


def console_list_view(model: ConsoleModel) -> QListView:
    """A view of ``model`` in the fixed-pitch font: the times, levels and messages of
    every line start in the same columns (``line_text`` pads them for that)."""
    view = QListView()
    view.setModel(model)
    view.setUniformItemSizes(True)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return view
