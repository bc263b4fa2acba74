"""A run's console lines as a list model: ``t`` ms, level and message, coloured by level."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from shared.ndjson import LogLine

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invisible root, as a default argument

LEVEL_ROLE = Qt.ItemDataRole.UserRole + 1   # log | info | debug | warn | error
TIME_ROLE = Qt.ItemDataRole.UserRole + 2    # ms since the run started
MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 3

# Readable on light and dark backgrounds alike; plain log lines keep the palette's text.
LEVEL_COLOURS = {"info": "#1e88e5", "debug": "#8e8e8e", "warn": "#ef8f00", "error": "#e53935"}


def line_text(line: LogLine) -> str:
    return f"{line.t:>6} ms  {line.level:<5}  {line.message}"


class ConsoleModel(QAbstractListModel):
    """Lines are appended as the stream delivers them, never reordered."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.lines: list[LogLine] = []

    def append(self, line: LogLine) -> None:
        row = len(self.lines)
        self.beginInsertRows(QModelIndex(), row, row)
        self.lines.append(line)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self.lines = []
        self.endResetModel()

    def text(self) -> str:
        return "\n".join(line_text(line) for line in self.lines)

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.lines)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.lines):
            return None
        line = self.lines[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return line_text(line)
        if role == Qt.ItemDataRole.ForegroundRole:
            colour = LEVEL_COLOURS.get(line.level)
            return QColor(colour) if colour else None
        return {LEVEL_ROLE: line.level, TIME_ROLE: line.t,
                MESSAGE_ROLE: line.message}.get(role)
