"""JobEditor, offscreen: highlighting, breakpoints, marks, completion, find/replace."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from console_app.editor import JobEditor, theme
from console_app.editor import styling as st
from console_app.editor.marks import match_braces
from console_app.editor.theme import DARK, LIGHT, bgr

JOB = ("/*\n"                                  # 1
       "Name: Lookup\n"                        # 2
       "Secrets: stripe_key, crm_token\n"      # 3
       "*/\n"                                  # 4
       "const rows = await db.exec('SELECT 1', [])\n"  # 5
       "if (rows.length) {\n"                  # 6
       "  console.log(rows)\n"                 # 7
       "}\n"                                   # 8
       "return rows\n")                        # 9


@pytest.fixture
def editor(qtbot: QtBot) -> Iterator[JobEditor]:
    widget = JobEditor()
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_text(JOB)
    yield widget


def _caret_to_end_of_line(editor: JobEditor, line: int) -> None:
    editor.sci.gotoPos(editor.sci.lineEndPosition(line - 1))


def _click_symbol_margin(qtbot: QtBot, editor: JobEditor, line: int) -> None:
    sci = editor.sci
    y = sci.pointYFromPosition(sci.positionFromLine(line - 1)) + sci.textHeight(line - 1) // 2
    x = sci.marginWidthN(st.MARGIN_NUMBERS) + sci.marginWidthN(st.MARGIN_SYMBOLS) // 2
    qtbot.mouseClick(sci.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, y))


def test_keywords_and_globals_are_highlighted(editor: JobEditor) -> None:
    sci = editor.sci
    sci.colourise(0, -1)
    text = editor.text()
    const, db, comment = text.index("const"), text.index("db."), 0
    assert sci.styleAt(const) == theme.WORD
    assert sci.styleAt(db) == theme.WORD2
    assert sci.styleAt(comment) == theme.COMMENT
    assert sci.styleAt(text.index("'SELECT")) == theme.CHARACTER
    assert sci.styleFore(theme.WORD) == bgr(LIGHT.syntax[theme.WORD])


def test_colours_follow_a_dark_system_palette(editor: JobEditor) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    original = app.palette()
    dark = QPalette(original)
    dark.setColor(QPalette.ColorRole.Window, QColor("#202020"))
    try:
        app.setPalette(dark)
        QApplication.processEvents()
        assert editor.sci.styleBack(int(st.S.StylesCommon.Default)) == bgr(DARK.back)
        assert editor.sci.styleFore(theme.WORD) == bgr(DARK.syntax[theme.WORD])
    finally:
        app.setPalette(original)
        QApplication.processEvents()
    assert editor.sci.styleBack(int(st.S.StylesCommon.Default)) == bgr(LIGHT.back)


def test_breakpoints_by_margin_click_f9_and_api(qtbot: QtBot, editor: JobEditor) -> None:
    with qtbot.waitSignal(editor.sig_breakpoints_changed) as blocker:
        _click_symbol_margin(qtbot, editor, 7)
    assert blocker.args == [[7]]
    _caret_to_end_of_line(editor, 9)
    editor.focus_editor()
    with qtbot.waitSignal(editor.sig_breakpoints_changed) as blocker:
        qtbot.keyClick(editor.sci, Qt.Key.Key_F9)
    assert blocker.args == [[7, 9]] and editor.breakpoints() == [7, 9]
    with qtbot.waitSignal(editor.sig_breakpoints_changed):
        _click_symbol_margin(qtbot, editor, 7)
    assert editor.breakpoints() == [9]
    editor.set_breakpoints([5, 6, 99])
    assert editor.breakpoints() == [5, 6]


def test_breakpoints_move_with_inserted_lines(qtbot: QtBot, editor: JobEditor) -> None:
    editor.set_breakpoints([6])
    with qtbot.waitSignal(editor.sig_breakpoints_changed) as blocker:
        editor.sci.insertText(editor.sci.positionFromLine(4), "// new line\n")
    assert blocker.args == [[7]]


def test_breakpoints_allowed_while_read_only(qtbot: QtBot, editor: JobEditor) -> None:
    editor.set_read_only(True)
    editor.focus_editor()
    qtbot.keyClicks(editor.sci, "xyz")
    assert editor.text() == JOB and not editor.is_modified()
    _click_symbol_margin(qtbot, editor, 5)
    assert editor.breakpoints() == [5]
    editor.set_text("return 2\n")  # loading still works when read-only
    assert editor.text() == "return 2\n" and editor.is_read_only()


def test_mark_error_at_a_line_and_clear(editor: JobEditor) -> None:
    editor.mark_error(7, 3, "Unexpected identifier 'console'")
    sci = editor.sci
    pos = sci.positionFromLine(6) + 2
    assert sci.indicatorValueAt(st.IND_ERROR, pos) == 1
    assert sci.indicatorValueAt(st.IND_ERROR, pos - 1) == 0
    assert sci.markerGet(6) & (1 << st.MARK_ERROR)
    assert editor.annotation(7) == "Unexpected identifier 'console'"
    assert editor.error_lines() == [7]
    editor.mark_error(200, None, "at the end")  # clamped to the last line
    assert editor.error_lines() == [7, 10]
    editor.clear_errors()
    assert editor.annotation(7) == "" and editor.error_lines() == []
    assert sci.indicatorValueAt(st.IND_ERROR, pos) == 0


def test_paused_line_highlight(editor: JobEditor) -> None:
    editor.highlight_line(6)
    assert editor.highlighted_line() == 6
    assert editor.sci.markerGet(5) & (1 << st.MARK_PAUSED_LINE)
    editor.highlight_line(8)
    assert editor.highlighted_line() == 8 and not editor.sci.markerGet(5)
    editor.clear_highlight()
    assert editor.highlighted_line() is None


def test_modified_state_and_signal(qtbot: QtBot, editor: JobEditor) -> None:
    assert not editor.is_modified()
    editor.focus_editor()
    _caret_to_end_of_line(editor, 9)
    with qtbot.waitSignal(editor.sig_modified_changed) as blocker:
        qtbot.keyClicks(editor.sci, " ")
    assert blocker.args == [True] and editor.is_modified()
    with qtbot.waitSignal(editor.sig_modified_changed) as blocker:
        editor.set_saved()
    assert blocker.args == [False] and not editor.is_modified()
    qtbot.keyClicks(editor.sci, "x")
    with qtbot.waitSignal(editor.sig_modified_changed) as blocker:
        editor.sci.undo()
    assert blocker.args == [False]
    qtbot.keyClicks(editor.sci, "y")
    assert editor.is_modified()
    with qtbot.waitSignal(editor.sig_modified_changed) as blocker:  # typed back: no change
        qtbot.keyClick(editor.sci, Qt.Key.Key_Backspace)
    assert blocker.args == [False] and not editor.is_modified()
    qtbot.keyClicks(editor.sci, "z")  # away again from the text typed back to
    assert editor.is_modified()


def test_completion_for_db_dot(qtbot: QtBot, editor: JobEditor) -> None:
    editor.focus_editor()
    _caret_to_end_of_line(editor, 9)
    qtbot.keyClick(editor.sci, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.sci, "await db.")
    assert editor.sci.autoCActive()
    found = editor.completion_at_caret()
    assert found is not None and found.items == ("exec",)
    qtbot.keyClick(editor.sci, Qt.Key.Key_Return)  # take the choice
    qtbot.keyClicks(editor.sci, "(")
    assert editor.text().endswith("await db.exec(\n")
    assert editor.sci.callTipActive()


def test_completion_for_declared_secrets_and_modules(qtbot: QtBot, editor: JobEditor) -> None:
    editor.set_approved_modules(["pdf-lib", "date-fns"])
    editor.focus_editor()
    _caret_to_end_of_line(editor, 9)
    qtbot.keyClick(editor.sci, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.sci, 'const k = secrets.get("')
    assert editor.sci.autoCActive()
    found = editor.completion_at_caret()
    assert found is not None and found.items == ("crm_token", "stripe_key")
    qtbot.keyClick(editor.sci, Qt.Key.Key_Escape)
    qtbot.keyClick(editor.sci, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.sci, "const f = require('")
    found = editor.completion_at_caret()
    assert found is not None and found.items == ("date-fns", "pdf-lib")


def test_secrets_offered_follow_the_header_once_checked(qtbot: QtBot,
                                                        editor: JobEditor) -> None:
    editor.focus_editor()
    _caret_to_end_of_line(editor, 3)
    with qtbot.waitSignal(editor.sig_header_checked, timeout=3000):
        qtbot.keyClicks(editor.sci, ", erp_pass")
    _caret_to_end_of_line(editor, 9)
    qtbot.keyClick(editor.sci, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.sci, "secrets.get('")
    found = editor.completion_at_caret()
    assert found is not None and found.items == ("crm_token", "erp_pass", "stripe_key")


def test_no_completion_inside_comments(qtbot: QtBot, editor: JobEditor) -> None:
    editor.focus_editor()
    _caret_to_end_of_line(editor, 9)
    qtbot.keyClicks(editor.sci, " // see db.")
    assert editor.completion_at_caret() is None and not editor.sci.autoCActive()


def test_header_checked_as_you_type(qtbot: QtBot, editor: JobEditor) -> None:
    editor.focus_editor()
    _caret_to_end_of_line(editor, 2)
    qtbot.keyClick(editor.sci, Qt.Key.Key_Return)
    with qtbot.waitSignal(editor.sig_header_checked, timeout=3000) as blocker:
        qtbot.keyClicks(editor.sci, "Runtime: soon")
    [problem] = blocker.args[0]
    assert (problem.line, problem.column) == (3, 10)
    assert "Runtime" in editor.line_note(3)
    sci = editor.sci
    assert sci.indicatorValueAt(st.IND_WARNING, sci.positionFromLine(2) + 9) == 1
    assert sci.markerGet(2) & (1 << st.MARK_WARNING)
    sci.setSelection(sci.lineEndPosition(2), sci.positionFromLine(2) + 9)
    with qtbot.waitSignal(editor.sig_header_checked, timeout=3000) as blocker:
        qtbot.keyClicks(editor.sci, "500")
    assert blocker.args[0] == [] and editor.line_note(3) == ""
    assert not sci.markerGet(2) & (1 << st.MARK_WARNING)


def test_find_and_replace(qtbot: QtBot, editor: JobEditor) -> None:
    editor.set_text("foo Foo foo\nbar foo\n")
    editor.focus_editor()
    qtbot.keyClick(editor.sci, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = editor.find_bar
    assert bar.isVisible() and not bar.replace_edit.isVisible()
    bar.find_edit.setText("foo")
    bar.match_case.setChecked(True)
    assert bar.find_next() and editor.sci.selectionStart() == 0
    assert bar.find_next() and editor.sci.selectionStart() == 8
    assert bar.find_previous() and editor.sci.selectionStart() == 0
    bar.find_edit.setText("nothing")
    assert not bar.find_next() and bar.status.text() == "Not found"
    qtbot.keyClick(editor.sci, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    assert bar.replace_edit.isVisible()
    bar.find_edit.setText("foo")
    bar.replace_edit.setText("baz")
    assert editor.sci.selectionStart() == 0  # still the match found before
    assert bar.replace()
    assert editor.text() == "baz Foo foo\nbar foo\n"
    assert editor.sci.selectionStart() == 8  # and on to the next one
    assert bar.replace_all() == 2
    assert editor.text() == "baz Foo baz\nbar baz\n"
    bar.match_case.setChecked(False)
    assert bar.replace_all() == 1
    editor.sci.undo()  # replace all is one undo step
    assert editor.text() == "baz Foo baz\nbar baz\n"
    qtbot.keyClick(bar.find_edit, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def test_marks_are_not_text_changes(qtbot: QtBot, editor: JobEditor) -> None:
    # Marking header problems must not schedule another check (that would loop).
    changes: list[bool] = []
    editor.sig_text_changed.connect(lambda: changes.append(True))
    editor.set_text("/*\nRuntime: x\n*/\nreturn 1\n")
    editor.mark_error(4, 1, "boom")
    editor.highlight_line(2)
    editor.toggle_breakpoint(3)
    assert changes == [] and not editor._header_timer.isActive()
    assert not editor.is_modified()


def test_the_brace_at_the_caret_and_its_match_are_lit(qtbot: QtBot, editor: JobEditor) -> None:
    """Braces in code are matched; one in a comment is not code; one alone is bad."""
    lit: list[tuple[str, int, int]] = []
    sci = editor.sci
    sci.braceHighlight = lambda a, b: lit.append(("match", a, b))  # type: ignore[method-assign]
    sci.braceBadLight = lambda a: lit.append(("bad", a, -1))  # type: ignore[method-assign]
    editor.set_text("x = f(a[1]) // (c\ny = (\n")
    sci.colourise(0, -1)  # the lexer's styles, which say what is a comment
    for caret, expected in ((11, ("match", 10, 5)), (8, ("match", 7, 9)), (16, ("match", -1, -1)),
                            (23, ("bad", 22, -1))):
        lit.clear()
        sci.gotoPos(caret)
        match_braces(sci)
        assert lit == [expected], (caret, lit)


def test_a_short_file_scrolls_no_wider_than_its_longest_line(editor: JobEditor) -> None:
    editor.set_text("return 1\n")
    editor.grab()  # laid out and painted: Scintilla widens the scroll width as it draws
    assert editor.sci.scrollWidth() < editor.sci.width()  # no horizontal scroll bar
    editor.set_text("x" * 400 + "\n")
    editor.grab()
    assert editor.sci.scrollWidth() > editor.sci.width()
