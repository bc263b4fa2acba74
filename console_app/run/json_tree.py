"""A JSON document as a collapsible tree model: key, value (a summary for objects and
arrays) and type. Nodes are built once from the parsed value; the model only maps them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    Qt,
)

from console_app.models.rows import ROOT, Index, column_header

COLUMNS = ("Key", "Value", "Type")
VALUE_ROLE = Qt.ItemDataRole.UserRole + 1   # the JSON value under a node, as parsed


@dataclass(eq=False)
class JsonNode:
    key: str
    value: Any
    parent: JsonNode | None = None
    children: list[JsonNode] = field(default_factory=list)

    @property
    def row(self) -> int:
        return self.parent.children.index(self) if self.parent else 0

    @property
    def kind(self) -> str:
        if isinstance(self.value, dict):
            return "object"
        if isinstance(self.value, list):
            return "array"
        if self.value is None:
            return "null"
        if isinstance(self.value, bool):
            return "boolean"
        return "number" if isinstance(self.value, int | float) else "string"

    def summary(self) -> str:
        if isinstance(self.value, dict):
            return f"{{{_count(len(self.value), 'key')}}}"
        if isinstance(self.value, list):
            return f"[{_count(len(self.value), 'item')}]"
        return json.dumps(self.value, ensure_ascii=False)


def build_tree(value: Any, key: str = "", parent: JsonNode | None = None) -> JsonNode:
    node = JsonNode(key, value, parent)
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    node.children = [build_tree(v, k, node) for k, v in items]
    return node


class JsonTreeModel(QAbstractItemModel):
    """The top level shows the document's own members (or the one value it is)."""

    def __init__(self, value: Any = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root = JsonNode("", None)
        self.set_value(value)

    def set_value(self, value: Any) -> None:
        self.beginResetModel()
        if isinstance(value, dict | list):
            self._root = build_tree(value)
        else:  # a bare string or number still gets one row to show it
            self._root = JsonNode("", None)
            self._root.children = [JsonNode("value", value, self._root)]
        self.endResetModel()

    def _node(self, index: Index) -> JsonNode:
        node = index.internalPointer() if index.isValid() else None
        return node if isinstance(node, JsonNode) else self._root

    def index(self, row: int, column: int, parent: Index = ROOT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        return self.createIndex(row, column, self._node(parent).children[row])

    def parent(self, child: Index = ROOT) -> QModelIndex:  # type: ignore[override]
        if not child.isValid():
            return QModelIndex()
        up = self._node(child).parent
        if up is None or up is self._root:
            return QModelIndex()
        return self.createIndex(up.row, 0, up)

    def rowCount(self, parent: Index = ROOT) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: Index = ROOT) -> int:
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = self._node(index)
        if role == VALUE_ROLE:
            return node.value
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return (node.key, node.summary(), node.kind)[index.column()]
        return None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
