"""Issue 17, the editor: one editor per job, the lost-update guard (baseVersion, 409
HUB-010, compare or overwrite), the run label after a save, and an error note that
follows its code — all against a real hub."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.editor_window import EditorWindow
from console_app.session import HubSession
from console_app.shell.screens import ScreenOpener, open_editor_at
from console_app.tasks import TaskManager
from tests.console.editing import saved_job, type_text

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def job(connection: HubConnection) -> Iterator[str]:
    with saved_job(connection, "i17_edit", "console.log('v1')\nreturn 1\n") as name:
        yield name



def _window(qtbot: QtBot, session: HubSession, name: str) -> EditorWindow:
    window = EditorWindow(session, name, ask_unsaved=lambda _w, _n: "discard")
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.loaded, timeout=10000)
    return window


def test_a_second_edit_code_raises_the_open_editor(qtbot: QtBot, session: HubSession,
                                                   job: str) -> None:
    host = QWidget()
    qtbot.addWidget(host)
    opener = ScreenOpener(session, lambda _text: None, host)
    first = opener.open_editor(job)
    assert isinstance(first, EditorWindow)
    qtbot.waitUntil(lambda: first.loaded, timeout=10000)
    second = opener.open_editor(job)
    assert second is first
    assert [w for w in opener.open_windows if isinstance(w, EditorWindow)] == [first]
    # Another job still gets its own editor; a closed one is opened afresh.
    first.close()
    qtbot.waitUntil(lambda: first not in opener.open_windows, timeout=5000)
    again = opener.open_editor(job)
    assert isinstance(again, EditorWindow) and again is not first
    opener.close_all()


def test_open_editor_at_puts_the_caret_on_the_line(qtbot: QtBot, session: HubSession,
                                                   job: str) -> None:
    host = QWidget()
    qtbot.addWidget(host)
    opener = ScreenOpener(session, lambda _text: None, host)
    window = open_editor_at(session, job, 2)
    assert isinstance(window, EditorWindow)
    qtbot.waitUntil(lambda: window.loaded, timeout=10000)
    assert window.editor.caret_position()[0] == 2
    assert open_editor_at(session, job, 1) is window  # raised, not opened twice
    assert window.editor.caret_position()[0] == 1
    opener.close_all()


def test_a_stale_editor_cannot_overwrite_a_newer_save(qtbot: QtBot, connection: HubConnection,
                                                      tasks: TaskManager, job: str) -> None:
    mine = _window(qtbot, HubSession(connection, tasks), job)
    assert mine.base_version is not None
    api.save(connection, job, "return 'theirs'\n")   # another console saves meanwhile
    type_text(mine, "return 'mine'\n")
    with qtbot.waitSignal(mine.sig_save_failed, timeout=10000) as failed:
        mine.save()
    assert failed.args == ["HUB-010"]
    assert api.code(connection, job) == "return 'theirs'\n"   # nothing was lost
    dialog = mine.conflict
    assert dialog is not None and dialog.isVisible()
    assert "changed on the hub" in dialog.message.text()
    dialog.compare_button.click()
    qtbot.waitUntil(lambda: dialog.diff_view.isVisible(), timeout=10000)
    diff = dialog.diff_view.toPlainText()
    assert "-return 'theirs'" in diff and "+return 'mine'" in diff
    with qtbot.waitSignal(mine.sig_saved, timeout=10000):
        dialog.overwrite_button.click()
    assert api.code(connection, job) == "return 'mine'\n"
    # Saved on top of the hub's version: the next save is guarded from there.
    type_text(mine, "return 'mine again'\n")
    with qtbot.waitSignal(mine.sig_saved, timeout=10000):
        mine.save()
    mine.close()


def test_the_run_label_says_saved_after_a_save(qtbot: QtBot, session: HubSession,
                                               job: str) -> None:
    window = _window(qtbot, session, job)
    type_text(window, "return 'edited'\n")
    pane = window.run()
    assert pane is not None
    with qtbot.waitSignal(pane.sig_finished, timeout=15000):
        pass
    assert "unsaved" in pane.heading_text
    with qtbot.waitSignal(window.sig_saved, timeout=10000):
        window.save()
    window.run()
    with qtbot.waitSignal(pane.sig_finished, timeout=15000):
        pass
    assert "unsaved" not in pane.heading_text and "as saved" in pane.heading_text
    assert "unsaved" not in pane.status_label.text()
    window.close()


def test_an_error_note_follows_its_code_without_an_old_line_number(
        qtbot: QtBot, session: HubSession, job: str) -> None:
    window = _window(qtbot, session, job)
    type_text(window, "const a = 1\nthrow new Error('nope')\n")
    pane = window.run()
    assert pane is not None
    with qtbot.waitSignal(pane.sig_finished, timeout=15000):
        pass
    assert pane.status == "failed" and window.editor.error_lines() == [2]
    window.editor.sci.gotoPos(0)
    window.editor.sci.insertText(0, "// one\n// two\n")
    assert window.editor.error_lines() == [4]
    note = window.editor.annotation(4)
    assert "nope" in note and "line 2" not in note
    window.close()
