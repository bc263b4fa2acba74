"""Issue 17: the line a recorded failure names is a link that opens the editor there."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytestqt.qtbot import QtBot

from console_app.client.history import RunDetail
from console_app.history.run_view import RunView, failure_line
from shared.wire import decode
from shared.wire import history as wire


def _failed(message: str) -> RunDetail:
    return RunDetail.of(decode(wire.RunDetail, {
        "jobId": "job_1", "jobName": "report", "outcome": "failed", "source": "http",
        "caller": {"kind": "owner"}, "started": 0, "node": "n1", "ref": "r",
        "code": "JOB-001", "message": message, "logs": []}, strict=True))


@pytest.mark.parametrize(("message", "line"), [
    ("Error: nope (line 12)", 12), ("Stopped by the debugger at line 3", 3),
    ("Error: no line here", None), ("Error: <b>x</b> (line 2)", 2),
])
def test_the_line_a_failure_names(message: str, line: int | None) -> None:
    assert failure_line(message) == line


@given(st.text())
def test_any_message_is_shown_as_its_text(message: str) -> None:
    failure_line(message)  # never raises


def test_clicking_the_line_asks_for_the_editor_there(qtbot: QtBot) -> None:
    view = RunView(ask_masked_values=lambda *_: None)
    qtbot.addWidget(view)
    view.show_run(_failed("Error: <b>nope</b> (line 12)"))
    text = view.failure_label.text()
    assert '<a href="line:12">line 12</a>' in text and "&lt;b&gt;nope" in text
    with qtbot.waitSignal(view.sig_open_line, timeout=1000) as opened:
        view.failure_label.linkActivated.emit("line:12")
    assert opened.args == ["report", 12]


def test_no_run_picked_says_nothing_of_the_last_ones_result(qtbot: QtBot) -> None:
    view = RunView(ask_masked_values=lambda *_: None)
    qtbot.addWidget(view)
    view.show_run(_failed("Error: nope"))
    assert "did not finish well" in view.result_edit.placeholderText()
    view.show_run(None)  # a filter left no run picked
    assert view.result_edit.placeholderText() == ""
    assert "Pick a run" in view.facts.text()
