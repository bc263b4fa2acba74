"""Live mode's request list: each tagged browser request as it arrives, and its answer.

A thin table model over :class:`DebugState`'s ``requests`` (plain Python)."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from console_app.debugger.state import RequestEntry

__all__ = ["RequestRole", "RequestsModel"]

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invisible root, as a default argument
COLUMNS = ("Method", "Path", "Answer")
FAILED = QColor("#d32f2f")


class RequestRole(IntEnum):
    JOB_ID = Qt.ItemDataRole.UserRole + 1
    STATUS = Qt.ItemDataRole.UserRole + 2    # int, or None while the browser waits
    SUCCESS = Qt.ItemDataRole.UserRole + 3   # bool, or None while the browser waits


class RequestsModel(QAbstractTableModel):
    def __init__(self, entries: list[RequestEntry], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._entries = entries  # shared with the state: the window appends through us

    def append(self, entry: RequestEntry) -> None:
        row = len(self._entries)
        self.beginInsertRows(QModelIndex(), row, row)
        self._entries.append(entry)
        self.endInsertRows()

    def changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(COLUMNS)):
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (entry.method, entry.path, entry.answer_text)[index.column()]
        if role == Qt.ItemDataRole.ForegroundRole and entry.success is False:
            return QBrush(FAILED)
        if role == RequestRole.JOB_ID:
            return entry.job_id
        if role == RequestRole.STATUS:
            return entry.status
        if role == RequestRole.SUCCESS:
            return entry.success
        return None
