"""Small widget recipes the console's pages share."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

__all__ = ["row_table"]


def row_table(model: QAbstractItemModel, parent: QWidget | None = None) -> QTableView:
    """A read-only table that selects one whole row at a time: how every list of
    things (runs, schedules, secrets) is shown. Columns start resizable by hand,
    the last one taking the rest of the width."""
    table = QTableView(parent)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.setWordWrap(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    return table
