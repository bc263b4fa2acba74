"""What every flat table of the console has in common: plain items in fixed columns.

A subclass names its ``COLUMNS`` and says in ``data()`` what a cell shows; the rows
stay a Python list it owns (or shares with plain state), never Qt items."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

__all__ = ["ROOT", "Index", "RowsModel", "column_header"]

Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()  # the invisible root, as a default argument


def column_header(columns: tuple[str, ...], section: int, orientation: Qt.Orientation,
                  role: int) -> str | None:
    """A model's ``headerData``: the column's title across the top, nothing else."""
    if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(columns)):
        return columns[section]
    return None


class RowsModel(QAbstractTableModel):
    COLUMNS: tuple[str, ...] = ()

    def __init__(self, rows: list[Any] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = rows if rows is not None else []

    def reset_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def row_item(self, row: int) -> Any:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(self.COLUMNS, section, orientation, role)
