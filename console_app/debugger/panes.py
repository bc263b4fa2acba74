"""The debugger's smaller panes: the console with level colours, the outcome, and the
call stack of the current pause."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QPlainTextEdit, QWidget

from console_app.run.console import LEVEL_COLOURS, line_text
from shared.ndjson import LogLine
from shared.wire.debug import StackFrame

__all__ = ["CallStackView", "ConsoleView", "ResultView"]


class ConsoleView(QPlainTextEdit):
    """The run's console so far, one line per call, timed from the run's start."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText("Console output appears here as the run prints it.")
        self.setMaximumBlockCount(5000)  # the hub keeps 300 lines a run; live adds up
        self._levels: list[str] = []

    def append_line(self, line: LogLine) -> None:
        """One console call, in its level's colour ('log' keeps the palette's text)."""
        fmt = QTextCharFormat()
        colour = LEVEL_COLOURS.get(line.level)
        if colour:
            fmt.setForeground(QColor(colour))
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not self.document().isEmpty():
            cursor.insertBlock()
        cursor.insertText(line_text(line, 7), fmt)  # as the Run dialog and History write it
        self._levels.append(line.level)
        self.ensureCursorVisible()

    def append_note(self, text: str) -> None:
        """A line from the debugger itself (a live request arriving, its answer)."""
        self.append_line(LogLine("debug", text, 0))

    def line_colour(self, row: int) -> str | None:
        """The colour line ``row`` was written in (None: the palette's text colour)."""
        fragments = self.document().findBlockByNumber(row).begin()
        if fragments.atEnd():
            return None
        fmt = fragments.fragment().charFormat()
        if not fmt.hasProperty(QTextFormat.Property.ForegroundBrush):
            return None
        return str(fmt.foreground().color().name())

    def levels(self) -> list[str]:
        return list(self._levels)


class ResultView(QPlainTextEdit):
    """How the run ended: its outcome line, then the result as text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText("The result appears here when the run ends.")

    def show_outcome(self, outcome: str, result: str) -> None:
        self.setPlainText(outcome + ("\n\n" + result if result else ""))


class CallStackView(QListWidget):
    """The pause's async call chain, innermost first; choosing a frame shows its line."""

    sig_frame_chosen = Signal(int)  # the line the chosen frame is at

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setToolTip("The async functions on the way to this pause, innermost first")
        self.itemActivated.connect(self._chosen)
        self.itemClicked.connect(self._chosen)

    def show_frames(self, frames: list[StackFrame]) -> None:
        self.clear()
        for frame in frames:
            item = QListWidgetItem(f"{frame.name}  —  line {frame.line}", self)
            item.setData(Qt.ItemDataRole.UserRole, frame.line)

    def rows(self) -> list[str]:
        return [self.item(row).text() for row in range(self.count())
                if self.item(row) is not None]

    def _chosen(self, item: QListWidgetItem) -> None:
        line = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(line, int) and line > 0:
            self.sig_frame_chosen.emit(line)
