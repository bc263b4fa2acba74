"""The editor window against the real hub: load, edit, save, run unsaved code, a syntax
error marked at its line, Debug's parameters, Versions, and closing with changes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.editor_window import DEBUG_BREAKPOINTS_KEY, DEBUG_CODE_KEY, EditorWindow
from console_app.session import HubSession
from console_app.tasks import TaskManager
from shared.header import Limits
from tests.console.editing import saved_job, type_text

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def job(connection: HubConnection) -> Iterator[str]:
    with saved_job(connection, "edited", "console.log('v1')\nreturn 1\n") as name:
        yield name



def _window(qtbot: QtBot, connection: HubConnection, tasks: TaskManager, name: str,
            answer: str = "discard") -> EditorWindow:
    window = EditorWindow(HubSession(connection, tasks), name,
                          ask_unsaved=lambda _w, _n: answer)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.sig_loaded, timeout=10000):
        pass
    return window


def test_edit_save_run(qtbot: QtBot, connection: HubConnection, tasks: TaskManager,
                       job: str) -> None:
    window = _window(qtbot, connection, tasks, job)
    assert window.editor.text().startswith("console.log('v1')")
    assert not window.editor.is_modified()
    type_text(window, "console.log('v2')\nreturn 2\n")
    assert window.editor.is_modified() and "•" in window.windowTitle()
    run = window.run()  # F5 runs the unsaved text
    with qtbot.waitSignal(run.sig_finished, timeout=15000):
        pass
    assert run.status == "success" and run.console.lines[0].message == "v2"
    assert "v1" in api.code(connection, job)  # running did not save
    with qtbot.waitSignal(window.sig_saved, timeout=10000):
        window.actions_by_name["save"].trigger()
    assert api.code(connection, job).startswith("console.log('v2')")
    assert not window.editor.is_modified()
    window.close()


def test_editor_gets_the_hubs_modules_and_maxima(qtbot: QtBot, connection: HubConnection,
                                                 tasks: TaskManager, job: str) -> None:
    window = _window(qtbot, connection, tasks, job)
    editor = window.editor
    qtbot.waitUntil(lambda: editor.limit_maxima() is not None, timeout=10000)
    assert editor.limit_maxima() == Limits(runtime_ms=300_000, memory_mb=2048, cpu_ms=120_000)
    assert editor.approved_modules() == ["date-fns", "pdf-lib"]  # WEBJOB_MODULES' default
    window.show()
    qtbot.waitExposed(window)
    editor.focus_editor()
    editor.sci.documentEnd()
    qtbot.keyClicks(editor.sci, 'const { format } = require("')
    found = editor.completion_at_caret()
    assert found is not None and "date-fns" in found.items
    assert editor.sci.autoCActive()
    type_text(window, "/*\nMemory: 4096\n*/\nreturn 1\n")
    problems = editor.check_header_now()
    assert [p.line for p in problems] == [2] and "maximum 2048" in problems[0].message


def test_syntax_error_is_marked_at_its_line(qtbot: QtBot, connection: HubConnection,
                                            tasks: TaskManager, job: str) -> None:
    window = _window(qtbot, connection, tasks, job)
    type_text(window, "const a = 1\nlet x = \nreturn (\n")
    with qtbot.waitSignal(window.sig_save_failed, timeout=10000) as failed:
        window.save()
    assert failed.args == ["HUB-008"]
    assert window.editor.error_lines() == [3]
    assert "HUB-008" in window.statusBar().currentMessage()
    type_text(window, "return 3\n")
    with qtbot.waitSignal(window.sig_saved, timeout=10000):
        window.save()
    assert window.editor.error_lines() == []


def test_a_syntax_error_mark_goes_once_the_hub_finds_none(
        qtbot: QtBot, connection: HubConnection, tasks: TaskManager, job: str) -> None:
    window = _window(qtbot, connection, tasks, job)
    type_text(window, "const a = 1\nlet x = \nreturn (\n")
    with qtbot.waitSignal(window.sig_save_failed, timeout=10000):
        window.save()
    assert window.editor.error_lines() == [3], window.editor.error_messages()
    with qtbot.waitSignal(window.checker.sig_checked, timeout=10000):
        type_text(window, "return 3\n")  # the whole text replaced; no save, no run
    assert window.editor.error_lines() == []


def test_a_run_failure_with_a_line_is_marked_too(qtbot: QtBot, connection: HubConnection,
                                                 tasks: TaskManager, job: str) -> None:
    window = _window(qtbot, connection, tasks, job)
    type_text(window, "const a = 1\nthrow new Error('nope')\n")
    run = window.run()
    with qtbot.waitSignal(run.sig_finished, timeout=15000):
        pass
    assert run.status == "failed" and window.editor.error_lines() == [2]
    window.close()


def test_debug_passes_breakpoints_and_unsaved_code(qtbot: QtBot, connection: HubConnection,
                                                   tasks: TaskManager, job: str) -> None:
    window = _window(qtbot, connection, tasks, job)
    window.editor.set_breakpoints([2])
    with qtbot.waitSignal(window.session.nav.sig_open_debugger) as opened:
        window.debug()
    assert opened.args == [job, {DEBUG_BREAKPOINTS_KEY: [2]}]
    type_text(window, "return 9\n")
    assert window.debug_params()[DEBUG_CODE_KEY] == "return 9\n"


def test_versions_dialog_and_restore(qtbot: QtBot, connection: HubConnection,
                                     tasks: TaskManager, job: str) -> None:
    api.save(connection, job, "return 'second'\n")
    window = _window(qtbot, connection, tasks, job)
    dialog = window.versions()
    qtbot.waitUntil(lambda: dialog.list.count() == 2, timeout=10000)
    dialog.select_version(1)
    qtbot.waitUntil(lambda: bool(dialog.diff_lines()), timeout=10000)
    with qtbot.waitSignal(window.sig_loaded, timeout=10000):
        dialog.restore_button.click()
    assert window.editor.text().startswith("console.log('v1')")


@pytest.mark.parametrize("answer", ["cancel", "discard", "save"])
def test_closing_with_unsaved_changes_asks(qtbot: QtBot, connection: HubConnection,
                                           tasks: TaskManager, job: str, answer: str) -> None:
    window = _window(qtbot, connection, tasks, job, answer)
    window.show()
    type_text(window, "return 'closing'\n")
    if answer == "save":
        with qtbot.waitSignal(window.sig_saved, timeout=10000):
            window.close()
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
        assert "closing" in api.code(connection, job)
        return
    window.close()
    assert window.isVisible() is (answer == "cancel")
    assert "closing" not in api.code(connection, job)


def test_ctrl_w_closes_and_still_asks_about_unsaved_text(
        qtbot: QtBot, connection: HubConnection, tasks: TaskManager, job: str) -> None:
    window = _window(qtbot, connection, tasks, job, "cancel")
    window.show()
    window.activateWindow()  # a window shortcut answers in the active window
    qtbot.waitActive(window)
    type_text(window, "return 'kept'\n")
    asked: list[str] = []
    window.ask_unsaved = lambda _w, name: asked.append(name) or "cancel"
    qtbot.keyClick(window.editor.sci, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert asked == [job] and window.isVisible()  # asked, and the owner cancelled
    window.ask_unsaved = lambda _w, _n: "discard"
    qtbot.keyClick(window.editor.sci, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()


def test_a_missing_job_shows_its_code(qtbot: QtBot, connection: HubConnection,
                                      tasks: TaskManager) -> None:
    window = EditorWindow(HubSession(connection, tasks), "no_such_job_here")
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.sig_message, timeout=10000) as note:
        pass
    assert note.args[1] is True and "SYS-404" in note.args[0]
