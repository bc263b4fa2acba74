"""VersionsDialog: a job's saved versions, a diff of one against the editor's text,
and Restore.

The dialog never calls the hub: the caller passes ``fetch(version, on_done)``, runs
the request off the GUI thread and calls ``on_done`` on the GUI thread with the code
(``str``) or the failure (an ``Exception``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from console_app.client.errors import describe_error
from console_app.editor.diffing import DiffLine, unified_diff
from console_app.editor.theme import is_dark
from shared.wire.store import VersionInfo

__all__ = ["FetchCode", "VersionsDialog", "describe_version", "render_diff"]

OnDone = Callable[[str | Exception], None]
FetchCode = Callable[[int, OnDone], None]

# (light, dark) backgrounds per diff line kind.
_DIFF_COLOURS = {
    "add": ("#e6ffec", "#12361f"),
    "remove": ("#ffebe9", "#4a1619"),
    "hunk": ("#ddf4ff", "#152a40"),
}


def _size_text(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB"


def describe_version(v: VersionInfo) -> str:
    """One list line for a version of ``GET /api/webjobs/<name>/versions``."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(v.saved)) if v.saved else "?"
    parts = [f"v{v.version}", when]
    if v.savedBy:
        parts.append(f"by {v.savedBy}")
    parts.append(_size_text(v.size))
    if v.current:
        parts.append("current")
    return " · ".join(parts)


def render_diff(view: QPlainTextEdit, lines: list[DiffLine]) -> None:
    """Show typed diff lines in ``view``: added, removed and hunk lines coloured for the
    palette, the two file lines bold."""
    dark = is_dark(view.palette())
    view.setPlainText("\n".join(line.text for line in lines))
    cursor = QTextCursor(view.document())
    for i, line in enumerate(lines):
        block = view.document().findBlockByNumber(i)
        cursor.setPosition(block.position())
        colours = _DIFF_COLOURS.get(line.kind)
        if colours:
            fmt = QTextBlockFormat()
            fmt.setBackground(QColor(colours[1] if dark else colours[0]))
            cursor.setBlockFormat(fmt)
        if line.kind == "file":
            bold = QTextCharFormat()
            bold.setFontWeight(700)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock,
                                QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(bold)


class VersionsDialog(QDialog):
    """Pick a version; its diff against the editor text shows; Restore asks the caller
    (``sig_restore_requested(version)``) to restore it, then the dialog closes."""

    sig_restore_requested = Signal(int)

    def __init__(self, versions: Sequence[VersionInfo], fetch: FetchCode,
                 current_text: str, *, job_name: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Versions — {job_name}" if job_name else "Versions")
        self.resize(900, 600)
        self._fetch = fetch
        self._current_text = current_text
        self._codes: dict[int, str] = {}
        self._wanted: int | None = None
        self.list = QListWidget()
        self.diff_view = QPlainTextEdit(readOnly=True)
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.status = QLabel("Choose a version to compare it with the editor's text.")
        self.restore_button = QPushButton("Restore this version")
        self.restore_button.setEnabled(False)
        self._build()
        self.set_versions(versions)

    def _build(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.list)
        splitter.addWidget(self.diff_view)
        splitter.setSizes([340, 560])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.restore_button.clicked.connect(self._restore)
        self.list.currentItemChanged.connect(lambda item, _prev: self._choose(item))
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

    def set_versions(self, versions: Sequence[VersionInfo]) -> None:
        """Newest first, as the hub lists them."""
        self.list.clear()
        for v in versions:
            item = QListWidgetItem(describe_version(v))
            item.setData(Qt.ItemDataRole.UserRole, v.version)
            self.list.addItem(item)

    def set_current_text(self, text: str) -> None:
        """The editor's text changed under the dialog: diff against the new one."""
        self._current_text = text
        if self._wanted in self._codes:
            self._show_diff(self._wanted)

    def selected_version(self) -> int | None:
        item = self.list.currentItem()
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole))

    def select_version(self, version: int) -> None:
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == version:
                self.list.setCurrentRow(row)
                return

    def _choose(self, item: QListWidgetItem | None) -> None:
        self.restore_button.setEnabled(item is not None)
        if item is None:
            return
        version = int(item.data(Qt.ItemDataRole.UserRole))
        self._wanted = version
        if version in self._codes:
            self._show_diff(version)
            return
        self.diff_view.clear()
        self.status.setText(f"Loading version {version}…")
        self._fetch(version, lambda result: self._fetched(version, result))

    def _fetched(self, version: int, result: str | Exception) -> None:
        if isinstance(result, Exception):
            if version == self._wanted:
                self.status.setText(f"Could not load version {version}: "
                                    f"{describe_error(result)}")
            return
        self._codes[version] = result
        # A slower answer for a version the owner has moved away from must not show.
        if version == self._wanted:
            self._show_diff(version)

    def _show_diff(self, version: int) -> None:
        lines = unified_diff(self._codes[version], self._current_text, f"version {version}",
                             "editor")
        if not lines:
            self.diff_view.setPlainText("")
            self.status.setText(f"Version {version} is the same as the editor's text.")
            return
        render_diff(self.diff_view, lines)
        added = sum(1 for line in lines if line.kind == "add")
        removed = sum(1 for line in lines if line.kind == "remove")
        self.status.setText(f"Version {version} → editor: +{added} −{removed} lines")

    def diff_lines(self) -> list[DiffLine]:
        """What the diff view shows, typed (for tests and the screenshots tool)."""
        version = self._wanted
        if version is None or version not in self._codes:
            return []
        return unified_diff(self._codes[version], self._current_text, f"version {version}",
                            "editor")

    def _restore(self) -> None:
        version = self.selected_version()
        if version is not None:
            self.sig_restore_requested.emit(version)
            self.accept()
