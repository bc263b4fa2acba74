"""Marks a job editor puts on its text, as plain functions of the Scintilla widget:
underlines (indicators), markers carrying a message, and the matching brace."""

from __future__ import annotations

from pyside6_scintilla import ScintillaEdit

from console_app.editor.theme import COMMENT_STYLES, STRING_STYLES

__all__ = ["Marks", "clear_marks", "match_braces", "notes_by_line", "underline"]

# Each mark: a marker's handle and the message shown at its line.
Marks = list[tuple[int, str]]
_BRACES = frozenset(b"()[]{}")


def underline(sci: ScintillaEdit, indicator: int, start: int, length: int) -> None:
    sci.setIndicatorCurrent(indicator)
    sci.indicatorFillRange(start, length)


def clear_marks(sci: ScintillaEdit, marks: Marks, indicator: int) -> None:
    """Every marker of ``marks`` gone (the list emptied), and every underline of
    ``indicator``."""
    for handle, _message in marks:
        sci.markerDeleteHandle(handle)
    marks.clear()
    sci.setIndicatorCurrent(indicator)
    sci.indicatorClearRange(0, sci.textLength())


def notes_by_line(sci: ScintillaEdit, marks: Marks) -> dict[int, list[str]]:
    """The messages of ``marks`` by the line each marker is on now (edits move them)."""
    notes: dict[int, list[str]] = {}
    for handle, message in marks:
        line = sci.markerLineFromHandle(handle)
        if line >= 0 and message:
            notes.setdefault(line, []).append(message)
    return notes


def match_braces(sci: ScintillaEdit) -> None:
    """Highlight the brace at or before the caret and its match (a brace without one in
    the bad-brace style); braces in comments and strings are not code."""
    pos = sci.currentPos()
    for candidate in (pos - 1, pos):
        if 0 <= candidate < sci.textLength() and (sci.charAt(candidate) & 0xFF) in _BRACES:
            if sci.styleAt(candidate) in COMMENT_STYLES | STRING_STYLES:
                continue
            match = sci.braceMatch(candidate, 0)
            if match < 0:
                sci.braceBadLight(candidate)
            else:
                sci.braceHighlight(candidate, match)
            return
    sci.braceHighlight(-1, -1)
