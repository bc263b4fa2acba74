"""The debugger's smaller panes: the console with level colours, the outcome, and the
non-modal message bar that shows a hub failure with its code."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from console_app.debugger.state import ConsoleEntry

__all__ = ["LEVEL_COLOURS", "ConsoleView", "ResultView"]

# Readable on light and dark backgrounds alike; 'log' keeps the palette's text colour.
LEVEL_COLOURS = {"info": "#1e88e5", "debug": "#8a8a8a", "warn": "#d98200", "error": "#e53935"}


class ConsoleView(QPlainTextEdit):
    """The run's console so far, one line per call, timed from the run's start."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText("Console output appears here as the run prints it.")
        self.setMaximumBlockCount(5000)  # the hub keeps 300 lines a run; live adds up
        self._levels: list[str] = []

    def append_entry(self, entry: ConsoleEntry) -> None:
        fmt = QTextCharFormat()
        colour = LEVEL_COLOURS.get(entry.level)
        if colour:
            fmt.setForeground(QColor(colour))
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not self.document().isEmpty():
            cursor.insertBlock()
        cursor.insertText(f"{entry.t / 1000:7.3f}s  {entry.level:<5}  {entry.message}", fmt)
        self._levels.append(entry.level)
        self.ensureCursorVisible()

    def append_note(self, text: str) -> None:
        """A line from the debugger itself (a live request arriving, its answer)."""
        self.append_entry(ConsoleEntry("debug", text, 0))

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
