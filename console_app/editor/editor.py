"""JobEditor: the job code editor the console embeds (edit window, debugger, ad-hoc).

Lines and columns in this API are 1-based, as the hub reports them; Scintilla's own
are 0-based byte positions, converted here and nowhere else."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget
from pyside6_scintilla import Scintilla, ScintillaEdit

from console_app.editor import styling as st
from console_app.editor.completion import Completion, call_tip, complete
from console_app.editor.find_bar import FindBar
from console_app.editor.header_check import HeaderProblem, check_header, declared_secrets
from console_app.editor.hover import Hover
from console_app.editor.marks import clear_marks, match_braces, notes_by_line, underline
from console_app.editor.theme import COMMENT_STYLES, STRING_STYLES, Scheme, scheme_for
from shared.header import Limits

__all__ = ["JobEditor"]

HEADER_CHECK_DELAY_MS = 300
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_COMPLETE_AFTER = frozenset(".\"'`")
_TEXT_EDIT = int(Scintilla.ModificationFlags.InsertText | Scintilla.ModificationFlags.DeleteText)
# A hub message may end with where it happened; under that line, after edits moved the
# code, an old number would only mislead.
_WHERE_RE = re.compile(r"\s*\(line \d+(?:, column \d+)?\)\s*$")
_Key = Qt.Key
_Mod = Qt.KeyboardModifier


class JobEditor(QWidget):
    """Scintilla with JavaScript highlighting, breakpoints, error marks, completion
    for a job's globals, header checks as you type and a find/replace bar."""

    sig_modified_changed = Signal(bool)       # True: the text differs from the saved one
    sig_breakpoints_changed = Signal(list)    # list[int], 1-based lines, ascending
    sig_header_checked = Signal(list)         # list[HeaderProblem] after each check
    sig_text_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sci = ScintillaEdit(self)
        self.find_bar = FindBar(self.sci, self)
        self.find_bar.hide()
        self.find_bar.sig_closed.connect(self.focus_editor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.sci, 1)
        layout.addWidget(self.find_bar)
        self._modules: list[str] = []
        self._maxima: Limits | None = None
        self._modified = False
        self._saved = b""  # the saved text as Scintilla holds it (UTF-8)
        self._loading = False
        self._breakpoints: list[int] = []
        self._errors: list[tuple[int, str]] = []        # (marker handle, message)
        self._header_notes: list[tuple[int, str]] = []  # (marker handle, message)
        self._problems: list[HeaderProblem] = []
        self._live: list[HeaderProblem] = []  # the hub's check: (errors, warnings)
        self._live_errors: list[HeaderProblem] = []
        self._secrets: list[str] = []  # the header's Secrets:, as of the last check
        self._header_timer = QTimer(self, singleShot=True, interval=HEADER_CHECK_DELAY_MS)
        self._header_timer.timeout.connect(self.check_header_now)
        # Built once: every key press and shortcut override is matched against them.
        self._key_actions: list[tuple[QKeySequence, Callable[[], object]]] = [
            (QKeySequence(_Key.Key_F9), self.toggle_breakpoint_at_caret),
            (QKeySequence(QKeySequence.StandardKey.Find), self.open_find),
            (QKeySequence("Ctrl+H"), self.open_replace),
            (QKeySequence("Ctrl+Space"), self.show_completions),
            (QKeySequence(_Key.Key_F3), self.find_bar.find_next),
            (QKeySequence("Shift+F3"), self.find_bar.find_previous),
        ]
        st.configure(self.sci, self.scheme())
        self.hover = Hover(self.sci)  # the job API's documentation on dwell
        self._update_number_margin()
        self._connect()

    def _connect(self) -> None:
        sci = self.sci
        sci.savePointChanged.connect(self._on_save_point)
        sci.marginClicked.connect(self._on_margin_clicked)
        sci.linesAdded.connect(self._on_lines_added)
        sci.modified.connect(self._on_modified)
        sci.updateUi.connect(lambda _updated: match_braces(self.sci))
        sci.charAdded.connect(self._on_char_added)
        sci.installEventFilter(self)

    # -- text and saved state ---------------------------------------------------------

    def text(self) -> str:
        return self._bytes().decode("utf-8")

    def _bytes(self) -> bytes:
        return bytes(self.sci.getText(self.sci.textLength() + 1).data())

    def set_text(self, text: str) -> None:
        """Load ``text`` as saved, unmodified code: undo history, breakpoints, error
        marks and the paused line all belong to the old text, so they go."""
        self._loading = True
        read_only = self.sci.readOnly()
        try:
            self.sci.setReadOnly(False)  # a read-only Scintilla ignores setText
            self.clear_errors()
            self.clear_highlight()
            self.sci.markerDeleteAll(st.MARK_BREAKPOINT)
            self.sci.setText(text)
            self.sci.emptyUndoBuffer()
            self.sci.setSavePoint()
            self._saved = self._bytes()
            self.sci.gotoPos(0)
        finally:
            self.sci.setReadOnly(read_only)
            self._loading = False
        self._set_modified(False)
        self._sync_breakpoints()
        self.check_header_now()

    def is_modified(self) -> bool:
        return self._modified

    def set_saved(self) -> None:
        """The current text is what the hub has now."""
        self.sci.setSavePoint()
        self._saved = self._bytes()
        self._set_modified(False)

    def set_read_only(self, read_only: bool) -> None:
        """Read-only still allows breakpoints (the debugger sets them on saved code)."""
        self.sci.setReadOnly(read_only)

    def is_read_only(self) -> bool:
        return bool(self.sci.readOnly())

    def _set_modified(self, modified: bool) -> None:
        if modified != self._modified:
            self._modified = modified
            self.sig_modified_changed.emit(modified)

    def _on_save_point(self, _flag: bool) -> None:
        # Read the state itself: the binding's flag is the reverse of Scintilla's docs.
        if not self._loading:
            self._set_modified(self._differs())

    def _differs(self) -> bool:
        """Whether the text differs from the saved one: away from Scintilla's save point
        and not typed back to the same text (``x`` then Backspace is no change)."""
        if not self.sci.modify():
            return False
        return self.sci.textLength() != len(self._saved) or self._bytes() != self._saved

    def _on_modified(self, kind: int, *_details: object) -> None:
        # Markers and annotations also notify; only text edits count as changes (else
        # marking header problems would start the next check, for ever).
        if self._loading or not kind & _TEXT_EDIT:
            return
        self._set_modified(self._differs())
        self._header_timer.start()
        self.sig_text_changed.emit()

    # -- caret and lines --------------------------------------------------------------

    def caret_position(self) -> tuple[int, int]:
        """(line, column), 1-based; the column counts characters."""
        pos = self.sci.currentPos()
        line = self.sci.lineFromPosition(pos)
        return line + 1, self.sci.countCharacters(self.sci.positionFromLine(line), pos) + 1

    def go_to_line(self, line: int, column: int = 1) -> None:
        pos = self._position(line, column)
        self.sci.ensureVisibleEnforcePolicy(self.sci.lineFromPosition(pos))
        self.sci.gotoPos(pos)
        self.focus_editor()

    def focus_editor(self) -> None:
        # ScintillaEdit.setFocus is Scintilla's SCI_SETFOCUS(bool), not QWidget's.
        QWidget.setFocus(self.sci)

    def _line_index(self, line: int) -> int:
        return min(max(line, 1), self.sci.lineCount()) - 1

    def _position(self, line: int, column: int | None) -> int:
        """The byte position of a 1-based line and character column (clamped)."""
        index = self._line_index(line)
        start, end = self.sci.positionFromLine(index), self.sci.lineEndPosition(index)
        if not column or column < 1:
            return start
        return min(self.sci.positionRelative(start, column - 1), end) if column > 1 else start

    # -- breakpoints ------------------------------------------------------------------

    def breakpoints(self) -> list[int]:
        lines, line = [], self.sci.markerNext(0, 1 << st.MARK_BREAKPOINT)
        while line >= 0:
            lines.append(line + 1)
            line = self.sci.markerNext(line + 1, 1 << st.MARK_BREAKPOINT)
        return lines

    def set_breakpoints(self, lines: Iterable[int]) -> None:
        self.sci.markerDeleteAll(st.MARK_BREAKPOINT)
        for line in set(lines):
            if 1 <= line <= self.sci.lineCount():
                self.sci.markerAdd(line - 1, st.MARK_BREAKPOINT)
        self._sync_breakpoints()

    def toggle_breakpoint(self, line: int) -> None:
        index = self._line_index(line)
        if self.sci.markerGet(index) & (1 << st.MARK_BREAKPOINT):
            self.sci.markerDelete(index, st.MARK_BREAKPOINT)
        else:
            self.sci.markerAdd(index, st.MARK_BREAKPOINT)
        self._sync_breakpoints()

    def toggle_breakpoint_at_caret(self) -> None:
        self.toggle_breakpoint(self.caret_position()[0])

    def _sync_breakpoints(self) -> None:
        # Scintilla moves markers with the text, so edits can move breakpoints too.
        now = self.breakpoints()
        if now != self._breakpoints:
            self._breakpoints = now
            self.sig_breakpoints_changed.emit(list(now))

    def _on_margin_clicked(self, position: int, _modifiers: int, margin: int) -> None:
        if margin == st.MARGIN_SYMBOLS:
            self.toggle_breakpoint(self.sci.lineFromPosition(position) + 1)

    def _on_lines_added(self, _count: int) -> None:
        self._update_number_margin()
        if not self._loading:
            self._sync_breakpoints()

    def _update_number_margin(self) -> None:
        digits = "9" * max(3, len(str(self.sci.lineCount())))
        width = self.sci.textWidth(int(st.S.StylesCommon.LineNumber), "_" + digits)
        self.sci.setMarginWidthN(st.MARGIN_NUMBERS, width)

    # -- error marks, header notes, the paused line -----------------------------------

    def mark_error(self, line: int, column: int | None = None, message: str = "") -> None:
        """Mark a hub error (say a syntax error) at ``line``/``column``: a squiggle from
        the column to the end of its word (the whole line without a column), a margin
        mark and the message boxed under the line. Stays until ``clear_errors``."""
        index = self._line_index(line)
        start = self._position(line, column)
        if column:
            end = max(self.sci.wordEndPosition(start, True), start + 1)
        else:
            start = self.sci.lineIndentPosition(index)
            end = self.sci.lineEndPosition(index)
        underline(self.sci, st.IND_ERROR, start, max(1, end - start))
        handle = self.sci.markerAdd(index, st.MARK_ERROR)
        self._errors.append((handle, _WHERE_RE.sub("", message)))
        self._refresh_annotations()
        self.sci.ensureVisibleEnforcePolicy(index)

    def clear_errors(self) -> None:
        clear_marks(self.sci, self._errors, st.IND_ERROR)
        self._refresh_annotations()

    def error_messages(self) -> list[str]:
        return [message for _handle, message in self._errors]

    def error_lines(self) -> list[int]:
        """1-based lines that carry a hub error now (they move with edits)."""
        return sorted({self.sci.markerLineFromHandle(h) + 1 for h, _m in self._errors})

    def header_problems(self) -> list[HeaderProblem]:
        return list(self._problems)

    def declared_secrets(self) -> list[str]:
        """The header's ``Secrets:`` names, as of the last header check."""
        return list(self._secrets)

    def check_header_now(self) -> list[HeaderProblem]:
        """Check the header at once (typing does it after a short pause)."""
        self._header_timer.stop()
        text = self.text()
        self._problems = check_header(text, self._maxima)
        # Completion reads the declared names from here, not by parsing on every key.
        self._secrets = declared_secrets(text)
        self._draw_notes()
        self.sig_header_checked.emit(list(self._problems))
        return list(self._problems)

    def set_live_problems(self, errors: list[HeaderProblem],
                          warnings: list[HeaderProblem]) -> None:
        """The hub's verdict on the text as typed (syntax errors, header warnings the
        editor's own check does not find), marked at the end of their lines until the
        next verdict."""
        self._live_errors, self._live = list(errors), list(warnings)
        self._draw_notes()

    def _draw_notes(self) -> None:
        clear_marks(self.sci, self._header_notes, st.IND_WARNING)
        self.sci.setIndicatorCurrent(st.IND_LIVE_ERROR)
        self.sci.indicatorClearRange(0, self.sci.textLength())
        for problem, error in ([(p, False) for p in self._problems + self._live]
                               + [(p, True) for p in self._live_errors]):
            start = self._position(problem.line, problem.column)
            end = max(self.sci.positionRelative(start, problem.length),
                      self.sci.wordEndPosition(start, True) if error else start)
            underline(self.sci, st.IND_LIVE_ERROR if error else st.IND_WARNING, start,
                            max(1, end - start))
            handle = self.sci.markerAdd(self._line_index(problem.line),
                                        st.MARK_ERROR if error else st.MARK_WARNING)
            self._header_notes.append((handle, problem.message))
        self._refresh_annotations()

    def live_error_lines(self) -> list[int]:
        """1-based lines the hub's last check found an error on."""
        return sorted({p.line for p in self._live_errors})

    def set_limit_maxima(self, maxima: Limits | None) -> None:
        """The hub's limit maxima, so a limit the hub would clamp is flagged too."""
        self._maxima = maxima
        self.check_header_now()

    def limit_maxima(self) -> Limits | None:
        return self._maxima

    def _refresh_annotations(self) -> None:
        # Rebuilt from the markers, which track their lines through edits.
        self.sci.annotationClearAll()
        for line, messages in notes_by_line(self.sci, self._errors).items():
            self.sci.annotationSetText(line, "\n".join(messages))
            self.sci.annotationSetStyle(line, st.STYLE_ERROR_NOTE)
        self.sci.eOLAnnotationClearAll()
        for line, messages in notes_by_line(self.sci, self._header_notes).items():
            self.sci.eOLAnnotationSetText(line, "  ⚠ " + " · ".join(messages))
            self.sci.eOLAnnotationSetStyle(line, st.STYLE_WARNING_NOTE)

    def annotation(self, line: int) -> str:
        """The message shown under ``line`` (hub errors), for tests and tooltips."""
        return bytes(self.sci.annotationText(line - 1).data()).decode("utf-8")

    def line_note(self, line: int) -> str:
        """The note at the end of ``line`` (header problems)."""
        return bytes(self.sci.eOLAnnotationText(line - 1).data()).decode("utf-8")

    def highlight_line(self, line: int) -> None:
        """Show ``line`` as the debugger's paused line and scroll to it."""
        self.clear_highlight()
        index = self._line_index(line)
        self.sci.markerAdd(index, st.MARK_PAUSED_LINE)
        self.sci.markerAdd(index, st.MARK_PAUSED_ARROW)
        self.sci.ensureVisibleEnforcePolicy(index)

    def clear_highlight(self) -> None:
        self.sci.markerDeleteAll(st.MARK_PAUSED_LINE)
        self.sci.markerDeleteAll(st.MARK_PAUSED_ARROW)

    def highlighted_line(self) -> int | None:
        line = self.sci.markerNext(0, 1 << st.MARK_PAUSED_LINE)
        return line + 1 if line >= 0 else None

    # -- completion and call tips -----------------------------------------------------

    def set_approved_modules(self, modules: list[str]) -> None:
        """The names ``require("`` offers (the hub's WEBJOB_MODULES)."""
        self._modules = sorted(set(modules))

    def approved_modules(self) -> list[str]:
        return list(self._modules)

    def _text_before_caret(self) -> str:
        pos = self.sci.currentPos()
        start = self.sci.positionFromLine(self.sci.lineFromPosition(pos))
        return bytes(self.sci.textRange(start, pos).data()).decode("utf-8", "replace")

    def completion_at_caret(self, *, min_word: int = 2) -> Completion | None:
        """What would be offered at the caret now (the list itself is Scintilla's)."""
        pos = self.sci.currentPos()
        self.sci.colourise(self.sci.positionFromLine(self.sci.lineFromPosition(pos)), pos)
        style = self.sci.styleAt(pos - 1) if pos > 0 else 0
        if style in COMMENT_STYLES:
            return None
        found = complete(self._text_before_caret(), secrets=self._secrets,
                         modules=self._modules, min_word=min_word)
        if found and style in STRING_STYLES and found.kind != "string":
            return None
        return found

    def show_completions(self, *, min_word: int = 0) -> bool:
        """Open the completion list at the caret (Ctrl+Space); False if nothing fits."""
        found = self.completion_at_caret(min_word=min_word)
        if not found:
            return False
        self.sci.autoCShow(len(found.prefix.encode("utf-8")), " ".join(found.items))
        return True

    def _on_char_added(self, ch: int) -> None:
        char = chr(ch) if 0 <= ch < 0x110000 else ""
        if char == "(":
            tip = call_tip(self._text_before_caret())
            if tip:
                self.sci.callTipShow(self.sci.currentPos(), tip)
        elif char == ")" and self.sci.callTipActive():
            self.sci.callTipCancel()
        if char in _COMPLETE_AFTER or (char in _WORD_CHARS and not self.sci.autoCActive()):
            self.show_completions(min_word=2)

    # -- find / replace, keys, theme --------------------------------------------------

    def open_find(self) -> None:
        self.find_bar.open_bar(replace=False)

    def open_replace(self) -> None:
        self.find_bar.open_bar(replace=not self.is_read_only())

    def add_key_action(self, sequence: QKeySequence, action: Callable[[], object]) -> None:
        """A key the editor keeps from Scintilla while it has focus (Ctrl+Enter runs)."""
        self._key_actions.append((sequence, action))

    def _key_action(self, event: QKeyEvent) -> Callable[[], object] | None:
        """The editor's own handler for a key, or None to leave it to Scintilla/Qt."""
        combo = QKeySequence(event.keyCombination())
        for sequence, action in self._key_actions:
            if combo.matches(sequence) == QKeySequence.SequenceMatch.ExactMatch:
                return action
        busy = self.sci.autoCActive() or self.sci.callTipActive()
        if event.key() == _Key.Key_Escape and self.find_bar.isVisible() and not busy:
            return self.find_bar.close_bar
        return None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Accepting ShortcutOverride keeps these keys ours while the editor has focus,
        # even if the window has shortcuts on the same keys (F9 in the debugger).
        kind = event.type()
        if (watched is self.sci and isinstance(event, QKeyEvent)
                and kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress)):
            action = self._key_action(event)
            if action is not None and kind == QEvent.Type.ShortcutOverride:
                event.accept()
                return True
            if action is not None:
                action()
                return True
        return super().eventFilter(watched, event)

    def scheme(self) -> Scheme:
        return scheme_for(QApplication.palette())

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            st.apply_scheme(self.sci, self.scheme())
        super().changeEvent(event)
