"""The find/replace bar under the editor, and the search it drives.

Searches go through Scintilla's target (byte positions, UTF-8), so a match in a
folded block or past a multi-byte character lands where the owner sees it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from pyside6_scintilla import Scintilla, ScintillaEdit

__all__ = ["FindBar", "Searcher"]


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


class Searcher:
    """Find and replace on one ScintillaEdit; every search wraps around the end."""

    def __init__(self, sci: ScintillaEdit) -> None:
        self._sci = sci

    # The binding takes text as str (its bytes overloads fail); lengths are UTF-8 bytes.
    def _search(self, needle: str, start: int, end: int) -> bool:
        self._sci.setTargetRange(start, end)
        return self._sci.searchInTarget(_size(needle), needle) >= 0

    def _prepare(self, text: str, match_case: bool) -> str:
        flags = Scintilla.FindOption.MatchCase if match_case else Scintilla.FindOption.None_
        self._sci.setSearchFlags(int(flags))
        return text

    def find(self, text: str, *, forward: bool = True, match_case: bool = False) -> bool:
        """Select the next (or previous) match; False when there is none anywhere."""
        if not text:
            return False
        needle, sci = self._prepare(text, match_case), self._sci
        length = sci.textLength()
        if forward:
            here = sci.selectionEnd()
            found = self._search(needle, here, length) or self._search(needle, 0, here)
        else:
            # A target whose start is after its end searches backwards.
            here = sci.selectionStart()
            found = self._search(needle, here, 0) or self._search(needle, length, here)
        if found:
            sci.ensureVisible(sci.lineFromPosition(sci.targetStart()))
            sci.setSelection(sci.targetEnd(), sci.targetStart())
            sci.scrollCaret()
        return found

    def _selection_matches(self, text: str, match_case: bool) -> bool:
        sci = self._sci
        selected = bytes(sci.textRange(sci.selectionStart(), sci.selectionEnd()).data())
        chosen = selected.decode("utf-8", "replace")
        return chosen == text if match_case else chosen.lower() == text.lower()

    def replace(self, text: str, replacement: str, *, match_case: bool = False) -> bool:
        """Replace the selected match (if the selection is one), then find the next."""
        if not text:
            return False
        sci, replaced = self._sci, False
        if sci.selectionStart() != sci.selectionEnd() and self._selection_matches(text,
                                                                                 match_case):
            sci.setTargetRange(sci.selectionStart(), sci.selectionEnd())
            sci.replaceTarget(_size(replacement), replacement)
            sci.setSelection(sci.targetEnd(), sci.targetEnd())
            replaced = True
        self.find(text, match_case=match_case)
        return replaced

    def replace_all(self, text: str, replacement: str, *, match_case: bool = False) -> int:
        """Replace every match as one undo step; the number replaced."""
        if not text:
            return 0
        needle, sci = self._prepare(text, match_case), self._sci
        count, pos = 0, 0
        sci.beginUndoAction()
        try:
            while self._search(needle, pos, sci.textLength()):
                sci.replaceTarget(_size(replacement), replacement)
                pos, count = sci.targetEnd(), count + 1
        finally:
            sci.endUndoAction()
        return count


class FindBar(QWidget):
    """Find (and, when shown for replacing, replace) for a ScintillaEdit.

    Enter finds the next match, Shift+Enter the previous, Escape closes."""

    sig_closed = Signal()

    def __init__(self, sci: ScintillaEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.searcher = Searcher(sci)
        self._sci = sci
        self.find_edit = QLineEdit(placeholderText="Find")
        self.replace_edit = QLineEdit(placeholderText="Replace with")
        self.match_case = QCheckBox("Match case")
        self.status = QLabel()
        self._replace_row = QWidget()
        self._build()
        for edit in (self.find_edit, self.replace_edit):
            edit.installEventFilter(self)
        self.find_edit.textEdited.connect(self._find_as_typed)

    def _button(self, text: str, slot: object, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        button.clicked.connect(slot)
        return button

    def _build(self) -> None:
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        close.clicked.connect(self.close_bar)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.find_edit, 1)
        top.addWidget(self._button("Previous", self.find_previous, "Shift+Enter"))
        top.addWidget(self._button("Next", self.find_next, "Enter"))
        top.addWidget(self.match_case)
        top.addWidget(self.status)
        top.addWidget(close)
        row = QHBoxLayout(self._replace_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.replace_edit, 1)
        row.addWidget(self._button("Replace", self.replace, "Replace this match, find the next"))
        row.addWidget(self._button("Replace all", self.replace_all, "Replace every match"))
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 2, 4, 2)
        outer.addLayout(top)
        outer.addWidget(self._replace_row)

    def open_bar(self, *, replace: bool) -> None:
        """Show the bar (with the replace row when ``replace``), seeded from the selection."""
        sci = self._sci
        if sci.selectionStart() != sci.selectionEnd():
            selected = bytes(sci.textRange(sci.selectionStart(), sci.selectionEnd()).data())
            text = selected.decode("utf-8", "replace")
            if "\n" not in text:
                self.find_edit.setText(text)
        self._replace_row.setVisible(replace and not sci.readOnly())
        self.show()
        self.find_edit.setFocus()
        self.find_edit.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.sig_closed.emit()

    def _report(self, ok: bool) -> bool:
        self.status.setText("" if ok else "Not found")
        return ok

    def _find_as_typed(self, _text: str) -> None:
        # Search again from the start of the current match, so it grows in place.
        start = self._sci.selectionStart()
        self._sci.setSelection(start, start)
        self.find_next()

    def find_next(self) -> bool:
        return self._report(self.searcher.find(self.find_edit.text(), forward=True,
                                               match_case=self.match_case.isChecked()))

    def find_previous(self) -> bool:
        return self._report(self.searcher.find(self.find_edit.text(), forward=False,
                                               match_case=self.match_case.isChecked()))

    def replace(self) -> bool:
        if self._sci.readOnly():
            return False
        return self.searcher.replace(self.find_edit.text(), self.replace_edit.text(),
                                     match_case=self.match_case.isChecked())

    def replace_all(self) -> int:
        if self._sci.readOnly():
            return 0
        count = self.searcher.replace_all(self.find_edit.text(), self.replace_edit.text(),
                                          match_case=self.match_case.isChecked())
        self.status.setText(f"{count} replaced")
        return count

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key, shift = event.key(), event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            if key == Qt.Key.Key_Escape:
                self.close_bar()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if watched is self.replace_edit:
                    self.replace()
                elif shift:
                    self.find_previous()
                else:
                    self.find_next()
                return True
        return super().eventFilter(watched, event)
