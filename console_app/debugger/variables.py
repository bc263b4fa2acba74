"""The variables in scope as a tree: a thin Qt model over :class:`VarNode`.

Objects and arrays expand on demand: a view asks ``fetchMore`` for a node's children,
the model hands the node to ``on_expand`` (the window sends the hub's ``expand``
command) and :meth:`VariablesModel.expanded` inserts the answer. Handles are only
good during one pause, so an answer that comes back after the run moved on is
dropped (each pause is a new ``generation``).

:class:`KeepExpanded` keeps what the owner opened open: a node's path (names from the
top) is remembered when its row is expanded, and at the next pause, or when its
parent's children arrive, the row of the same path is expanded again."""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QTreeView

from console_app.debugger.state import VarNode, scope_nodes
from console_app.models.rows import ROOT, Index, column_header
from shared.wire.debug import DebugValue

__all__ = ["KeepExpanded", "VarRole", "VariablesModel"]

COLUMNS = ("Name", "Value", "Type")
DIM = QColor("#8a8a8a")


class VarRole(IntEnum):
    KIND = Qt.ItemDataRole.UserRole + 1      # the hub's type: number, object, tdz, ...
    HANDLE = Qt.ItemDataRole.UserRole + 2    # int, or None for a plain value
    TDZ = Qt.ItemDataRole.UserRole + 3       # bool: a let/const not yet initialised
    TRUNCATED = Qt.ItemDataRole.UserRole + 4  # int full length, or None
    LOADING = Qt.ItemDataRole.UserRole + 5   # bool: its expansion is on its way


class VariablesModel(QAbstractItemModel):
    def __init__(self, on_expand: Callable[[VarNode, int], None] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._roots: list[VarNode] = []
        self._on_expand = on_expand or (lambda _node, _gen: None)
        self._paused = False
        self.generation = 0

    # -- what the window tells it ---------------------------------------------------

    def set_scope(self, vars_: dict[str, DebugValue], paused: bool = True) -> None:
        """A new pause: its variables replace the tree (old handles are dead)."""
        self.beginResetModel()
        self.generation += 1
        self._roots = scope_nodes(vars_)
        self._paused = paused
        self.endResetModel()

    def set_paused(self, paused: bool) -> None:
        """While running, nothing can expand (the hub answers only at a pause)."""
        self._paused = paused

    def clear(self) -> None:
        self.set_scope({}, paused=False)

    def expanded(self, node: VarNode, generation: int, entries: dict[str, DebugValue],
                 more: int, error: str | None) -> bool:
        """The hub's answer for ``node``; False if it is stale and was dropped."""
        if generation != self.generation or node.children is not None:
            return False
        index = self._index_of(node)
        count = len(entries) + (1 if more > 0 else 0)
        if count:
            self.beginInsertRows(index, 0, count - 1)
            node.fill(entries, more, error)
            self.endInsertRows()
        else:
            node.fill({}, 0, error)
        last = self.index(index.row(), len(COLUMNS) - 1, index.parent())
        self.dataChanged.emit(index.siblingAtColumn(0), last)
        return True

    def expand_failed(self, node: VarNode, generation: int, message: str) -> None:
        """The expand call failed (the run moved on, the hub went away)."""
        if generation == self.generation and node.children is None:
            node.loading, node.error = False, message
            index = self._index_of(node)
            self.dataChanged.emit(index, index.siblingAtColumn(len(COLUMNS) - 1))

    def node(self, index: Index) -> VarNode | None:
        return index.internalPointer() if index.isValid() else None  # type: ignore[no-any-return]

    def roots(self) -> list[VarNode]:
        return list(self._roots)

    # -- QAbstractItemModel ---------------------------------------------------------

    def _children(self, parent: Index) -> list[VarNode]:
        node = self.node(parent)
        if node is None:
            return self._roots
        return node.children or []

    def _index_of(self, node: VarNode) -> QModelIndex:
        siblings = node.parent.children or [] if node.parent is not None else self._roots
        return self.createIndex(siblings.index(node), 0, node)

    def index(self, row: int, column: int, parent: Index = ROOT) -> QModelIndex:
        children = self._children(parent)
        if not (0 <= row < len(children) and 0 <= column < len(COLUMNS)):
            return QModelIndex()
        return self.createIndex(row, column, children[row])

    def parent(self, index: Index = ROOT) -> QModelIndex:  # type: ignore[override]
        node = self.node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        return self._index_of(node.parent)

    def rowCount(self, parent: Index = ROOT) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._children(parent))

    def columnCount(self, parent: Index = ROOT) -> int:
        return len(COLUMNS)

    def hasChildren(self, parent: Index = ROOT) -> bool:
        node = self.node(parent)
        if node is None:
            return bool(self._roots)
        if parent.column() != 0:
            return False
        if node.children is not None:
            return bool(node.children)
        return node.expandable

    def canFetchMore(self, parent: Index) -> bool:
        node = self.node(parent)
        return (node is not None and parent.column() == 0 and self._paused
                and node.expandable and node.children is None and not node.loading)

    def fetchMore(self, parent: Index) -> None:
        if not self.canFetchMore(parent):
            return
        node = self.node(parent)
        assert node is not None
        node.loading = True
        self._on_expand(node, self.generation)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.node(index)
        if node is None:
            return None
        column = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self._text(node, column)
        if role == Qt.ItemDataRole.ForegroundRole and (node.is_tdz or node.error):
            return QBrush(DIM)
        if role == Qt.ItemDataRole.FontRole and column == 1 and (node.is_tdz
                                                                 or node.is_truncated):
            font = QFont()
            font.setItalic(True)
            return font
        return self._custom(node, role)

    @staticmethod
    def _text(node: VarNode, column: int) -> str:
        if column == 0:
            return node.label
        if column == 1:
            return "loading…" if node.loading else node.value_text
        return node.type_text

    @staticmethod
    def _custom(node: VarNode, role: int) -> Any:
        if role == VarRole.KIND:
            return node.type_text
        if role == VarRole.HANDLE:
            return node.handle
        if role == VarRole.TDZ:
            return node.is_tdz
        if role == VarRole.TRUNCATED:
            return node.desc.truncated
        if role == VarRole.LOADING:
            return node.loading
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class KeepExpanded(QObject):
    """Expanded rows stay expanded across pauses, and the columns fit their contents."""

    def __init__(self, view: QTreeView, model: VariablesModel) -> None:
        super().__init__(view)
        self.view, self.model = view, model
        self.paths: set[tuple[str, ...]] = set()
        header = view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        view.expanded.connect(self._opened)
        view.collapsed.connect(self._closed)
        model.modelReset.connect(lambda: self._restore(QModelIndex()))
        model.rowsInserted.connect(lambda parent, _first, _last: self._restore(parent))

    def _opened(self, index: QModelIndex) -> None:
        node = self.model.node(index)
        if node is not None:
            self.paths.add(node.path())

    def _closed(self, index: QModelIndex) -> None:
        node = self.model.node(index)
        if node is not None:
            gone = node.path()
            self.paths = {p for p in self.paths if p[:len(gone)] != gone}

    def _restore(self, parent: QModelIndex) -> None:
        """Expand again the remembered rows under ``parent`` whose children are there
        or can be asked for (asking is the view's fetchMore, then rowsInserted)."""
        for row in range(self.model.rowCount(parent)):
            index = self.model.index(row, 0, parent)
            node = self.model.node(index)
            if node is None or node.path() not in self.paths:
                continue
            self.view.expand(index)
            if node.children is not None:
                self._restore(index)
