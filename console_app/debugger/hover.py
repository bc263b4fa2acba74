"""Hover a name in the paused source for its value: the word under the mouse is looked
up among the pause's names (then the job globals) and shown as a call tip.

:func:`name_at` is pure (a line's text and a column); :class:`ValueHover` follows the
source view's dwell. It is connected after the editor's own API documentation, so at
a pause a name's value wins over its documentation."""

from __future__ import annotations

import re
from collections.abc import Callable

from pyside6_scintilla import ScintillaEdit

from console_app.debugger.state import value_text
from shared.wire.debug import DebugValue

__all__ = ["ValueHover", "name_at"]

DWELL_MS = 500
_NAME_RE = re.compile(r"[A-Za-z_$][\w$]*")

Lookup = Callable[[str], DebugValue | None]


def name_at(line: str, column: int) -> str | None:
    """The identifier under ``column`` (0-based characters) of ``line``, if any; a
    property (``x`` in ``a.x``) is not a name in scope, so it is None."""
    for match in _NAME_RE.finditer(line):
        if match.start() <= column < match.end():
            before = line[:match.start()].rstrip()
            return None if before.endswith(".") and not before.endswith("...") \
                else match.group(0)
    return None


class ValueHover:
    """``shown`` is the value text on screen now, or ''."""

    def __init__(self, sci: ScintillaEdit, lookup: Lookup) -> None:
        self.sci, self.lookup, self.shown = sci, lookup, ""
        sci.setMouseDwellTime(DWELL_MS)
        sci.dwellStart.connect(self.show_at)
        sci.dwellEnd.connect(self._hide)

    def show_at(self, position: int, _x: int = 0, _y: int = 0) -> str:
        sci = self.sci
        if position < 0 or sci.autoCActive():
            return ""
        line = sci.lineFromPosition(position)
        text = bytes(sci.getLine(line).data()).decode("utf-8", "replace")
        name = name_at(text, sci.countCharacters(sci.positionFromLine(line), position))
        desc = self.lookup(name) if name else None
        if desc is None:
            return ""
        self.shown = f"{name} = {value_text(desc)}"
        sci.callTipShow(position, self.shown)
        return self.shown

    def _hide(self, _position: int, _x: int, _y: int) -> None:
        if self.shown and self.sci.callTipActive():
            self.sci.callTipCancel()
        self.shown = ""
