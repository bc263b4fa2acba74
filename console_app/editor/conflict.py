"""The lost-update guard's question: the job was saved by someone else since this
editor opened it, and the hub refused the save (409 HUB-010).

:class:`ConflictDialog` says which version the editor opened and which one the hub has
now, offers *Compare* (the hub's current code diffed against the editor's text, as the
Versions dialog shows it), *Overwrite* (save anyway) and *Cancel* (keep editing). It
never calls the hub itself: ``fetch(version, on_done)`` is the caller's, as for
:class:`~console_app.editor.versions.VersionsDialog`."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from console_app.client.errors import describe_error
from console_app.editor.diffing import unified_diff
from console_app.editor.versions import FetchCode, render_diff

__all__ = ["ConflictDialog", "conflict_message"]


def conflict_message(name: str, opened: int | None, current: int | None) -> str:
    """Plain words for what happened, without the hub's error code."""
    if current is None:
        return (f"{name} was deleted on the hub after this editor opened it. "
                "Overwrite saves your text as the job again.")
    since = f"version {opened}" if opened is not None else "a version"
    return (f"{name} was changed on the hub after this editor opened it: you opened "
            f"{since}, the hub has version {current} now. Saving would throw that "
            "change away. Compare them, overwrite it with your text, or cancel and "
            "keep editing.")


class ConflictDialog(QDialog):
    """``sig_overwrite`` when the owner chooses to save over the hub's version."""

    sig_overwrite = Signal()

    def __init__(self, name: str, opened: int | None, current: int | None,
                 editor_text: str, fetch: FetchCode, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{name} changed on the hub")
        self.current, self._text, self._fetch = current, editor_text, fetch
        self.message = QLabel(conflict_message(name, opened, current))
        self.message.setWordWrap(True)
        self.diff_view = QPlainTextEdit(readOnly=True)
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff_view.hide()
        self.status = QLabel("")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setEnabled(current is not None)
        self.overwrite_button = QPushButton("Overwrite with my text")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton(self.compare_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.overwrite_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.rejected.connect(self.reject)
        self.compare_button.clicked.connect(self.compare)
        self.overwrite_button.clicked.connect(self._overwrite)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addWidget(self.diff_view, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.resize(640, 200)

    def compare(self) -> None:
        if self.current is None:
            return
        self.status.setText(f"Loading version {self.current}…")
        self._fetch(self.current, self._fetched)

    def _fetched(self, result: str | Exception) -> None:
        if isinstance(result, Exception):
            self.status.setText(f"Could not load version {self.current}: "
                                f"{describe_error(result)}")
            return
        lines = unified_diff(result, self._text, f"version {self.current} (on the hub)",
                             "your text")
        render_diff(self.diff_view, lines)
        self.diff_view.show()
        added = sum(1 for line in lines if line.kind == "add")
        removed = sum(1 for line in lines if line.kind == "remove")
        self.status.setText(f"Version {self.current} → your text: +{added} −{removed} lines")
        self.resize(max(self.width(), 820), max(self.height(), 560))

    def _overwrite(self) -> None:
        self.sig_overwrite.emit()
        self.accept()
