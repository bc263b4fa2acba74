"""Live mode's request list: each tagged browser request as it arrives, and its answer.

A thin table model over :class:`DebugState`'s ``requests`` (plain Python)."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QBrush, QColor

from console_app.debugger.state import RequestEntry
from console_app.models.rows import ROOT, Index, RowsModel

__all__ = ["RequestRole", "RequestsModel"]

COLUMNS = ("Method", "Path", "Answer")
FAILED = QColor("#d32f2f")


class RequestRole(IntEnum):
    JOB_ID = Qt.ItemDataRole.UserRole + 1
    STATUS = Qt.ItemDataRole.UserRole + 2    # int, or None while the browser waits
    SUCCESS = Qt.ItemDataRole.UserRole + 3   # bool, or None while the browser waits


class RequestsModel(RowsModel):
    COLUMNS = COLUMNS

    def __init__(self, entries: list[RequestEntry], parent: QObject | None = None) -> None:
        super().__init__(entries, parent)  # shared with the state: the window appends here

    def append(self, entry: RequestEntry) -> None:
        row = len(self._rows)
        self.beginInsertRows(ROOT, row, row)
        self._rows.append(entry)
        self.endInsertRows()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        entry: RequestEntry | None = self.row_item(index.row()) if index.isValid() else None
        if entry is None:
            return None
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
