"""Issue 17, the editor loop against a real hub: the parameters panel (validated,
remembered per hub and job, else the last run's), Ctrl+Enter and F5 run into the docked
pane, Debug takes the same breakpoints and parameters, a failure's line is a link, the
problems list, a declared secret the hub lacks, and the hub's check as you type."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.editor_window import DEBUG_BREAKPOINTS_KEY, EditorWindow
from console_app.run.params import remembered_params
from console_app.session import HubSession
from tests.console.editing import saved_job, type_text

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def job(connection: HubConnection) -> Iterator[str]:
    code = "console.log('got', params.n)\nreturn { n: params.n }\n"
    with saved_job(connection, "i17_loop", code) as name:
        yield name



def _window(qtbot: QtBot, session: HubSession, name: str) -> EditorWindow:
    window = EditorWindow(session, name, ask_unsaved=lambda _w, _n: "discard")
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.sig_params_loaded, timeout=10000):
        pass
    return window


def test_params_panel_prefills_from_the_last_run_and_is_remembered(
        qtbot: QtBot, session: HubSession, connection: HubConnection, job: str) -> None:
    connection.fetch("POST", f"/api/webjobs/{job}", json={"n": 41})
    qtbot.waitUntil(lambda: bool(connection.get("/api/webjobs/history", job=job)["runs"]),
                    timeout=10000)
    window = _window(qtbot, session, job)
    assert window.params_panel.params() == {"n": 41}
    assert "last run" in window.params_panel.origin.text()
    window.params_panel.editor.setPlainText('{"n": 7}')
    pane = window.run()
    assert pane is not None
    with qtbot.waitSignal(pane.sig_finished, timeout=15000):
        pass
    assert pane.status == "success" and pane.console.lines[0].message == "got 7"
    assert pane.result_view is not None and b'"n":7' in pane.result_view.data.replace(b" ", b"")
    assert remembered_params(session.url, job) == {"n": 7}
    window.close()
    again = _window(qtbot, session, job)  # remembered beats the last run
    assert again.params_panel.params() == {"n": 7}
    again.close()


def test_bad_or_masked_params_do_not_run(qtbot: QtBot, session: HubSession, job: str) -> None:
    window = _window(qtbot, session, job)
    window.params_panel.editor.setPlainText("{not json")
    assert "Not JSON" in window.params_panel.problem.text()
    assert window.run() is None and "not a JSON object" in window.statusBar().currentMessage()
    window.params_panel.editor.setPlainText('{"token": "***"}')
    assert window.run() is None and "masked" in window.statusBar().currentMessage()
    assert window.run_pane.status == "idle"
    window.close()


@pytest.mark.parametrize("key", ["ctrl+return", "f5"])
def test_ctrl_enter_and_f5_run_from_the_code(qtbot: QtBot, session: HubSession, job: str,
                                             key: str) -> None:
    window = _window(qtbot, session, job)
    window.show()
    qtbot.waitExposed(window)
    window.editor.focus_editor()
    before = window.editor.text()
    with qtbot.waitSignal(window.run_pane.sig_finished, timeout=15000):
        if key == "f5":
            qtbot.keyClick(window.editor.sci, Qt.Key.Key_F5)
        else:
            qtbot.keyClick(window.editor.sci, Qt.Key.Key_Return,
                           Qt.KeyboardModifier.ControlModifier)
    assert window.run_pane.status == "success"
    assert window.editor.text() == before  # the key ran the code, it typed nothing
    window.close()


def test_debug_takes_the_panels_params_and_the_breakpoints(
        qtbot: QtBot, session: HubSession, job: str) -> None:
    window = _window(qtbot, session, job)
    window.params_panel.editor.setPlainText('{"n": 3}')
    window.editor.set_breakpoints([2])
    with qtbot.waitSignal(session.nav.sig_open_debugger) as opened:
        window.actions_by_name["debug"].trigger()
    assert opened.args == [job, {"n": 3, DEBUG_BREAKPOINTS_KEY: [2]}]
    window.close()


def test_a_failures_line_link_and_problem_row_go_to_the_line(
        qtbot: QtBot, session: HubSession, job: str) -> None:
    window = _window(qtbot, session, job)
    type_text(window, "const a = 1\nconst b = 2\nthrow new Error('bad')\n")
    pane = window.run()
    assert pane is not None
    with qtbot.waitSignal(pane.sig_finished, timeout=15000):
        pass
    assert 'href="line:3"' in pane.failure_label.text()
    window.editor.sci.gotoPos(0)
    pane.failure_label.linkActivated.emit("line:3")
    assert window.editor.caret_position()[0] == 3
    rows = [p for p in window.problems.problems if p.source == "run"]
    assert [p.line for p in rows] == [3]
    window.editor.sci.gotoPos(0)
    item = window.problems.topLevelItem(window.problems.problems.index(rows[0]))
    window.problems.itemActivated.emit(item, 0)
    assert window.editor.caret_position()[0] == 3
    window.close()


def test_a_declared_secret_the_hub_lacks_is_warned(qtbot: QtBot, session: HubSession,
                                                   connection: HubConnection) -> None:
    name = f"i17_secret_{uuid.uuid4().hex[:6]}"
    api.save(connection, name, "/*\nName: s\nSecrets: i17_never_set_anywhere\n*/\nreturn 1\n")
    try:
        window = _window(qtbot, session, name)
        qtbot.waitUntil(lambda: any(p.source == "secret" for p in window.problems.problems),
                        timeout=10000)
        found = [p for p in window.problems.problems if p.source == "secret"]
        assert [p.line for p in found] == [3]
        assert "i17_never_set_anywhere" in found[0].message
        assert "not set on the hub" in window.editor.line_note(3)
        window.close()
    finally:
        api.delete(connection, name)


def test_the_hubs_check_marks_syntax_errors_as_youtype_text(qtbot: QtBot, session: HubSession,
                                                       job: str) -> None:
    window = _window(qtbot, session, job)
    window.checker.check_now()  # the load's own check must not race the typing below
    qtbot.keyClicks(window.editor.sci, "")
    window.editor.sci.documentEnd()
    window.editor.sci.replaceSel("\nlet x = \nreturn (\n")
    with qtbot.waitSignal(window.checker.sig_checked, timeout=10000):
        pass
    assert window.editor.live_error_lines() != []
    assert any(p.source == "syntax" and p.is_error for p in window.problems.problems)
    assert not window.editor.is_read_only() and api.code(session.conn, job).startswith(
        "console.log")  # checking saved nothing
    type_text(window, "return 1\n")
    with qtbot.waitSignal(window.checker.sig_checked, timeout=10000):
        pass
    assert window.editor.live_error_lines() == []
    assert not [p for p in window.problems.problems if p.is_error]
    window.close()
