"""Watches: names and paths into them (``order.items[0].price``) shown at every pause.

A watch is a path, never code: the console does not evaluate JavaScript in the run,
it walks the values the pause gave it, opening each object on the way with the hub's
``expand``. :func:`parse_watch` reads a path (None if it is not one), :func:`resolve`
walks it with a blocking ``expand`` (the window runs it off the GUI thread), and
:class:`WatchesPanel` lists them with their values."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from console_app.client.debug import Expansion
from console_app.debugger.state import in_scope, value_text
from shared.wire.debug import DebugValue

__all__ = ["WatchesPanel", "parse_watch", "resolve"]

_NAME = r"[A-Za-z_$][\w$]*"
_STEP = re.compile(rf"\.\s*({_NAME})|\[\s*(\d+)\s*\]|\[\s*(\"(?:[^\"\\]|\\.)*\")\s*\]")
_FIRST = re.compile(rf"\s*({_NAME})")
MAX_STEPS = 20

Expand = Callable[[int], Expansion]


def parse_watch(text: str) -> list[str] | None:
    """``a.b[0]["c d"]`` as ``["a", "b", "0", "c d"]``; None for anything else."""
    first = _FIRST.match(text)
    if first is None:
        return None
    path, at = [first.group(1)], first.end()
    rest = text.rstrip()
    while at < len(rest):
        step = _STEP.match(rest, at)
        if step is None or len(path) > MAX_STEPS:
            return None
        name, index, quoted = step.groups()
        if quoted is not None:
            try:
                name = json.loads(quoted)
            except ValueError:
                return None
        path.append(name if name is not None else str(index))
        at = step.end()
    return path


def resolve(vars_: dict[str, DebugValue], path: list[str], expand: Expand) -> DebugValue:
    """The description at ``path`` in a pause's ``vars_`` (job names, then globals),
    or an ``error`` one saying why there is none. Blocks on ``expand`` for each object."""
    desc = in_scope(vars_, path[0])
    if desc is None:
        return _missing(f"{path[0]} is not in scope here")
    for name in path[1:]:
        if desc.handle is None:
            return _missing(f"{value_text(desc)} has no '{name}'")
        opened = expand(desc.handle)
        if opened.error:
            return _missing(opened.error)
        found = opened.entries.get(name)
        if found is None:
            return _missing(f"no '{name}'" + (" among the first 50" if opened.more else ""))
        desc = found
    return desc


def _missing(why: str) -> DebugValue:
    return DebugValue("error", why)


def watch_text(desc: DebugValue) -> str:
    if desc.type == "error":
        return f"<{desc.value}>"
    return value_text(desc)


class WatchesPanel(QWidget):
    """The watch list: type a path and Enter (or Add); Del removes the selected one."""

    sig_changed = Signal()  # a watch was added or removed: the window evaluates them

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry = QLineEdit(self)
        self.entry.setPlaceholderText("Watch a name or path, e.g. order.items[0]")
        self.entry.returnPressed.connect(self.add_from_entry)
        add = QPushButton("Add", self)
        add.clicked.connect(self.add_from_entry)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Watch", "Value"])
        self.tree.setRootIsDecorated(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        row = QHBoxLayout()
        row.addWidget(self.entry, 1)
        row.addWidget(add)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(row)
        column.addWidget(self.tree, 1)
        self.paths: dict[str, list[str]] = {}

    def add_from_entry(self) -> None:
        text = self.entry.text().strip()
        if self.add(text):
            self.entry.clear()

    def add(self, text: str) -> bool:
        """Watch ``text``; False (and said in the entry) when it is not a path."""
        path = parse_watch(text)
        if path is None:
            self.entry.setToolTip(f"'{text}' is not a name or a path (a.b, a[0], a[\"k\"])")
            self.entry.setStyleSheet("QLineEdit { border: 1px solid #d32f2f; }")
            return False
        self.entry.setStyleSheet("")
        self.entry.setToolTip("")
        if text not in self.paths:
            self.paths[text] = path
            item = QTreeWidgetItem(self.tree, [text, ""])
            item.setData(0, Qt.ItemDataRole.UserRole, text)
            self.sig_changed.emit()
        return True

    def _items(self) -> list[QTreeWidgetItem]:
        found = (self.tree.topLevelItem(row) for row in range(self.tree.topLevelItemCount()))
        return [item for item in found if item is not None]

    def keyPressEvent(self, event: Any) -> None:
        current = self.tree.currentItem()
        if event.key() == Qt.Key.Key_Delete and current is not None:
            self.remove(str(current.text(0)))
            return
        super().keyPressEvent(event)

    def remove(self, text: str) -> None:
        self.paths.pop(text, None)
        for item in self._items():
            if item.text(0) == text:
                self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(item))
                break

    def show_values(self, values: dict[str, DebugValue]) -> None:
        """Each watch's value at this pause (missing ones: not available now)."""
        for item in self._items():
            desc = values.get(item.text(0))
            item.setText(1, watch_text(desc) if desc is not None else "")
            item.setToolTip(1, item.text(1))

    def value(self, text: str) -> str:
        return next((str(i.text(1)) for i in self._items() if i.text(0) == text), "")
