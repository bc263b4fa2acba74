"""Hover documentation for the job API: rest the mouse on ``http`` or ``db.exec`` and
the signature and what it does appear, from the same catalog completion offers.

:func:`doc_at` is pure (a line's text and a column); :class:`Hover` shows its
answer as a Scintilla call tip while the mouse dwells on a word."""

from __future__ import annotations

import re

from pyside6_scintilla import ScintillaEdit

from console_app.editor.catalog import GLOBALS, MEMBERS, Entry

__all__ = ["DWELL_MS", "Hover", "doc_at", "doc_for"]

DWELL_MS = 500
_DOTTED_RE = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*")
_BY_NAME: dict[str, Entry] = {e.name: e for e in GLOBALS}
for _owner, _entries in MEMBERS.items():
    _BY_NAME.update({f"{_owner}.{e.name}": e for e in _entries})


def doc_for(dotted: str) -> str | None:
    """The documentation of a dotted name (``db.exec``), or None if it is not the API's."""
    entry = _BY_NAME.get(re.sub(r"\s+", "", dotted))
    if entry is None:
        return None
    first = entry.signature or dotted
    return f"{first}\n{entry.doc}"


def doc_at(line: str, column: int) -> str | None:
    """The documentation of the API name under ``column`` (0-based, characters) of
    ``line``: the dotted chain up to and including the word there, so hovering
    ``exec`` in ``db.exec(…)`` documents ``db.exec`` and hovering ``db`` documents ``db``."""
    for match in _DOTTED_RE.finditer(line):
        if match.start() <= column < match.end():
            chain = match.group(0)
            cut = chain.find(".", column - match.start())
            chain = chain if cut < 0 else chain[:cut]
            # A member of something the catalog does not know (foo.log) is not the API.
            return doc_for(chain.strip())
    return None


class Hover:
    """What the mouse rests on now: ``shown`` is the documentation on screen, or ''."""

    def __init__(self, sci: ScintillaEdit) -> None:
        self.sci = sci
        self.shown = ""
        sci.setMouseDwellTime(DWELL_MS)
        # Scintilla's Qt signals give the mouse's x and y, not a text position.
        sci.dwellStart.connect(lambda x, y: self.show_at(sci.positionFromPointClose(x, y)))
        sci.dwellEnd.connect(lambda _x, _y: self.hide())

    def show_at(self, position: int) -> str:
        """Show the documentation of the API name at ``position`` (a byte position);
        what was shown, or '' when nothing there is the job API's."""
        sci = self.sci
        if position < 0 or sci.callTipActive() or sci.autoCActive():
            return ""
        line = sci.lineFromPosition(position)
        text = bytes(sci.getLine(line).data()).decode("utf-8", "replace")
        doc = doc_at(text, sci.countCharacters(sci.positionFromLine(line), position))
        if doc:
            sci.callTipShow(position, doc)
            self.shown = doc
        return doc or ""

    def hide(self) -> None:
        if self.shown and self.sci.callTipActive():
            self.sci.callTipCancel()
        self.shown = ""
