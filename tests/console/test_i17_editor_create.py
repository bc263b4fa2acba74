"""Issue 17: the Create dialog's templates and name check, and hover documentation for
the job API (pure rules with hypothesis, and the call tip in a real editor)."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import CancelToken, HubConnection
from console_app.editor import JobEditor
from console_app.editor.hover import doc_at, doc_for
from console_app.pages.create_dialog import TEMPLATES, CreateJobDialog, name_problem
from shared.errors import BadJobName
from shared.ndjson import Payload


@pytest.mark.parametrize("name, why", [
    ("", "Type a name"), ("has space", "only letters"), ("a.b", "only letters"),
    ("x" * 101, "at most 100"), ("Deleted", "hub's own"), ("check", "hub's own"),
    ("report", "exists already"), ("REPORT", "exists already"),
])
def test_a_name_the_hub_would_refuse_is_said_in_the_dialog(qtbot: QtBot, name: str,
                                                           why: str) -> None:
    assert why in (name_problem(name, ["report"]) or "")
    dialog = CreateJobDialog(["report"])
    qtbot.addWidget(dialog)
    dialog.name_edit.setText(name)
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    assert dialog.new_job() is None
    assert (why in dialog.problem.text()) is bool(name)  # nothing typed: no scolding


def test_the_form_keeps_its_place_as_a_reason_comes_and_goes(qtbot: QtBot) -> None:
    dialog = CreateJobDialog(["report"])
    qtbot.addWidget(dialog)
    dialog.show()
    templates_at = dialog.templates.y()
    dialog.name_edit.setText("has space")  # a reason appears
    qtbot.waitUntil(lambda: bool(dialog.problem.text()))
    dialog.layout().activate()
    assert dialog.templates.y() == templates_at
    dialog.name_edit.setText("fine_name")  # and goes
    dialog.layout().activate()
    assert dialog.templates.y() == templates_at


@given(st.text(max_size=120))
def test_the_dialogs_name_check_agrees_with_the_hubs(name: str) -> None:
    from hub.store.base import check_job_name

    try:
        check_job_name(name, for_save=True)
        hub_accepts = True
    except BadJobName:
        hub_accepts = False
    assert (name_problem(name) is None) is hub_accepts


def test_every_template_saves_on_the_hub_and_the_plain_one_runs(
        qtbot: QtBot, connection: HubConnection) -> None:
    dialog = CreateJobDialog([])
    qtbot.addWidget(dialog)
    for row, template in enumerate(TEMPLATES):
        name = f"i17_tpl_{template.key}_{uuid.uuid4().hex[:4]}"
        dialog.templates.setCurrentRow(row)
        dialog.name_edit.setText(name)
        assert dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
        new = dialog.new_job()
        assert new is not None and new.name == name and f"Name: {name}" in new.code
        assert name in dialog.preview.toPlainText()
        try:
            saved = api.save(connection, name, new.code)  # the hub's parse check passes
            assert not saved.warnings, saved.warnings
            if template.key == "json":
                events = list(api.run_stream(connection, name, {"a": 1}, CancelToken()))
                payload = [e for e in events if isinstance(e, Payload)]
                assert payload and json.loads(payload[0].data) == {"ok": True,
                                                                   "received": {"a": 1}}
        finally:
            api.delete(connection, name)


def test_hover_documents_the_api_name_under_the_mouse() -> None:
    line = "const rows = await db.exec('SELECT 1')"
    assert (doc_at(line, line.index("exec") + 1) or "").startswith("db.exec(sql, params?)")
    assert "business database" in (doc_at(line, line.index("db")) or "")
    assert doc_at(line, line.index("rows")) is None        # not the job API
    assert doc_at("foo.log(1)", 5) is None                 # a member of something else
    assert "a log line" in (doc_for("console . log") or "")


@given(st.text(max_size=80), st.integers(min_value=-5, max_value=100))
def test_hover_never_fails_on_any_line(line: str, column: int) -> None:
    found = doc_at(line, column)
    assert found is None or "\n" in found


def test_hover_shows_a_call_tip_in_the_editor(qtbot: QtBot) -> None:
    editor = JobEditor()
    qtbot.addWidget(editor)
    editor.set_text("const r = http('https://example.org')\n")
    position = editor.text().index("http") + 2
    shown = editor.hover.show_at(position)
    assert shown.startswith("http(url, options?)") and editor.sci.callTipActive()
    editor.sci.dwellEnd.emit(0, 0)
    assert not editor.sci.callTipActive() and editor.hover.shown == ""
    assert editor.hover.show_at(editor.text().index("const")) == ""
