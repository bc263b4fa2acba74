"""The editor's problems list: every mark in the code as a row (line, kind, message),
errors first; activating a row puts the caret on its line."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from console_app.editor.live_check import CodeProblem

__all__ = ["ProblemsList"]

_SOURCES = {"syntax": "syntax", "header": "header", "strict": "strict mode", "run": "last run",
            "secret": "secret", "save": "save"}
_COLOURS = {"error": "#e53935", "warning": "#ef8f00"}


class ProblemsList(QTreeWidget):
    sig_go_to = Signal(int, int)  # line, column (1-based)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["Line", "Kind", "Problem"])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.problems: list[CodeProblem] = []
        self.itemActivated.connect(self._activated)
        self.itemClicked.connect(self._activated)

    def set_problems(self, problems: list[CodeProblem]) -> None:
        self.problems = sorted(problems, key=lambda p: (not p.is_error, p.line, p.column))
        self.clear()
        for problem in self.problems:
            kind = f"{problem.severity} · {_SOURCES.get(problem.source, problem.source)}"
            item = QTreeWidgetItem([f"{problem.line}:{problem.column}", kind, problem.message])
            item.setData(0, Qt.ItemDataRole.UserRole, (problem.line, problem.column))
            item.setForeground(1, QColor(_COLOURS.get(problem.severity, "#8e8e8e")))
            item.setToolTip(2, problem.message)
            self.addTopLevelItem(item)
        for column in (0, 1):
            self.resizeColumnToContents(column)

    def counts(self) -> tuple[int, int]:
        """(errors, warnings)."""
        errors = sum(1 for p in self.problems if p.is_error)
        return errors, len(self.problems) - errors

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        line, column = item.data(0, Qt.ItemDataRole.UserRole)
        self.sig_go_to.emit(int(line), int(column))
