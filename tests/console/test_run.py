"""The run dialog against the real hub: live console, results by type, failures, Stop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QFontInfo
from PySide6.QtWidgets import QTextBrowser, QTreeView
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.run.console import LEVEL_ROLE, ConsoleModel
from console_app.run.dialog import RunDialog, pick_run
from console_app.run.json_tree import VALUE_ROLE, JsonTreeModel, build_tree
from console_app.run.params import (
    PLACEHOLDER,
    ParamsDialog,
    has_masked,
    parse_params,
    remember_params,
    remembered_params,
)
from console_app.run.result import CsvModel
from console_app.session import HubSession
from shared.ndjson import LogLine


def _run(qtbot: QtBot, session: HubSession, name: str, params: dict[str, object] | None = None,
         **kw: object) -> RunDialog:
    dialog = RunDialog(session, name, params or {}, **kw)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    if dialog.running:
        with qtbot.waitSignal(dialog.sig_finished, timeout=20000):
            pass
    return dialog


def test_live_console_in_order_then_a_json_tree(qtbot: QtBot, session: HubSession) -> None:
    dialog = RunDialog(session, "report", {})
    qtbot.addWidget(dialog)
    arrived: list[LogLine] = []
    dialog.sig_line.connect(arrived.append)
    with qtbot.waitSignal(dialog.sig_finished, timeout=20000) as finished:
        pass
    assert finished.args == ["success"] and dialog.status == "success"
    assert [(line.level, line.message) for line in arrived] == [
        ("log", "counting"), ("warn", "half way")]
    assert dialog.console.index(1).data(LEVEL_ROLE) == "warn"
    # one fixed pitch, so "counting" and "half way" start in the same column
    assert QFontInfo(dialog.console_view.font()).fixedPitch()
    view = dialog.result_view
    assert view is not None and view.kind == "json" and view.json_model is not None
    tree = view.json_model
    keys = [tree.index(r, 0).data() for r in range(tree.rowCount())]
    assert keys == ["count", "items", "nested"]
    items = tree.index(1, 0)
    assert tree.index(1, 1).data() == "[3 items]" and tree.rowCount(items) == 3
    assert tree.index(2, 0, tree.index(0, 0, items).parent()).data(VALUE_ROLE) == "c"
    assert [view.tabs.tabText(i) for i in range(view.tabs.count())] == ["Tree", "Raw"]
    assert isinstance(view.tabs.widget(0), QTreeView)
    assert dialog.http_label.text() == "200" and dialog.ref_label.text().startswith("job_")
    assert dialog.runtime_label.text().endswith(" ms")


def test_a_failing_job_shows_code_and_message(qtbot: QtBot, session: HubSession) -> None:
    dialog = _run(qtbot, session, "public_fail")
    assert dialog.status == "failed" and dialog.failure is not None
    text = dialog.failure_label.text()
    assert text.startswith("JOB-001: ") and "public failure" in text
    assert '<a href="line:1">line 1' in text  # a link that opens the editor there
    assert dialog.http_label.text() == "500" and dialog.ref_label.text().startswith("ref ")
    assert dialog.result_view is None and dialog.again_button.isEnabled()


def test_stop_ends_a_slow_run(qtbot: QtBot, session: HubSession,
                              connection: HubConnection) -> None:
    dialog = RunDialog(session, "public_slow", {"ms": 20000})
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.sig_line, timeout=15000):
        pass
    assert [r.job_name for r in api.running(connection)].count("public_slow") >= 1
    with qtbot.waitSignal(dialog.sig_finished, timeout=10000) as finished:
        dialog.stop_button.click()
    assert finished.args == ["stopped"]
    assert "Stopped" in dialog.failure_label.text()
    qtbot.waitUntil(lambda: "public_slow" not in [r.job_name for r in api.running(connection)],
                    timeout=10000)


def test_closing_mid_run_hangs_up(qtbot: QtBot, session: HubSession,
                                  connection: HubConnection) -> None:
    dialog = RunDialog(session, "public_slow", {"ms": 20000})
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.sig_line, timeout=15000):
        pass
    dialog.close()
    assert dialog.status == "stopped"
    qtbot.waitUntil(lambda: "public_slow" not in [r.job_name for r in api.running(connection)],
                    timeout=10000)


def test_csv_result_is_a_table_offered_for_saving(qtbot: QtBot, session: HubSession,
                                                  tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    asked: list[str] = []
    dialog = _run(qtbot, session, "public_files", {"kind": "csv"},
                  save_picker=lambda s: asked.append(s) or str(target))
    view = dialog.result_view
    assert view is not None and view.kind == "csv" and view.csv_model is not None
    qtmodeltester_free = view.csv_model
    assert qtmodeltester_free.header == ["a", "b"] and qtmodeltester_free.rows == [["1", "2"]]
    assert view.save_button.isVisibleTo(view)
    view.save_button.click()
    assert asked == ["staff.csv"] and target.read_text() == "a,b\n1,2"


def test_pdf_result_is_offered_for_saving(qtbot: QtBot, session: HubSession,
                                          tmp_path: Path) -> None:
    target = tmp_path / "r.pdf"
    dialog = _run(qtbot, session, "public_files", {}, save_picker=lambda _s: str(target))
    view = dialog.result_view
    assert view is not None and view.kind == "file" and view.meta.filename == "r.pdf"
    view.save()
    assert target.read_bytes().startswith(b"%PDF-") and view.saved_to == target
    cancelled = _run(qtbot, session, "public_files", {}, save_picker=lambda _s: None)
    assert cancelled.result_view is not None
    cancelled.result_view.save()
    assert cancelled.result_view.saved_to is None


def test_html_result_has_a_preview_and_its_source(qtbot: QtBot, session: HubSession) -> None:
    dialog = _run(qtbot, session, "public_page")
    view = dialog.result_view
    assert view is not None and view.kind == "html"
    preview = view.tabs.widget(0)
    assert isinstance(preview, QTextBrowser) and preview.toPlainText().strip() == "hi"
    assert view.tabs.tabText(1) == "Source"


def test_ad_hoc_code_runs_once_and_syntax_errors_fail(qtbot: QtBot,
                                                      session: HubSession) -> None:
    ok = _run(qtbot, session, "", {"who": "you"},
              source="console.info('hello', params.who)\nreturn 'done ' + params.who")
    assert ok.status == "success" and ok.console.lines[0].message == "hello you"
    assert ok.result_view is not None and ok.result_view.kind == "json"
    assert json.loads(ok.result_view.data) == "done you"
    bad = _run(qtbot, session, "scratch", {}, source="let x = \nreturn (", from_editor=True)
    assert bad.status == "failed" and bad.failure is not None
    # The hub names the line in the message (its line field is not always sent here).
    assert bad.failure.code == "JOB-001" and "(line 2)" in bad.failure.error


def test_run_again_clears_and_reruns(qtbot: QtBot, session: HubSession) -> None:
    dialog = _run(qtbot, session, "report")
    with qtbot.waitSignal(dialog.sig_finished, timeout=20000):
        dialog.again_button.click()
    assert dialog.status == "success", dialog.failure_label.text()
    assert [line.message for line in dialog.console.lines] == ["counting", "half way"]


def test_pick_run_prefers_the_one_started_with_the_dialog() -> None:
    runs = [api.RunningRun("a", "job", "http", 9000), api.RunningRun("b", "job", "http", 1000),
            api.RunningRun("c", "job", "adhoc", 1000)]
    assert pick_run(runs, "job", "http", 1.2) == runs[1]
    assert pick_run(runs, "other", "http", 1.0) is None


def test_small_models_pass_the_model_tester(qtmodeltester: object) -> None:
    console = ConsoleModel()
    console.append(LogLine("error", "bad", 5))
    qtmodeltester.check(console)  # type: ignore[attr-defined]
    assert "bad" in console.text() and console.index(0).data(LEVEL_ROLE) == "error"
    for value in ({"a": [1, {"b": None}], "c": True}, [1, 2], "just text"):
        qtmodeltester.check(JsonTreeModel(value))  # type: ignore[attr-defined]
    qtmodeltester.check(CsvModel("x,y\n1\n2,3,4"))  # type: ignore[attr-defined]


def test_params_dialog_and_memory(qtbot: QtBot, private_settings: Path) -> None:
    dialog = ParamsDialog("report", {"a": 1})
    qtbot.addWidget(dialog)
    assert dialog.params() == {"a": 1}
    dialog.editor.setPlainText("[1, 2]")
    assert dialog.params() is None and "JSON object" in dialog.problem.text()
    dialog.editor.setPlainText("{not json")
    assert "Not JSON" in dialog.problem.text()
    assert parse_params("  ") == ({}, "")
    assert remembered_params("http://hub", "report") == {}
    remember_params("http://hub", "report", {"department": 2})
    assert remembered_params("http://hub", "report") == {"department": 2}
    assert remembered_params("http://other", "report") == {}
    assert list(private_settings.rglob("*.ini"))


def test_params_dialog_keeps_its_width_and_shows_an_example(qtbot: QtBot) -> None:
    dialog = ParamsDialog("report", {})
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.editor.toPlainText() == "" and dialog.params() == {}
    assert dialog.editor.placeholderText() == PLACEHOLDER
    width = dialog.width()
    dialog.editor.setPlainText("{" + "x" * 300)  # a long parse error
    qtbot.waitUntil(lambda: "Not JSON" in dialog.problem.text())
    dialog.adjustSize()
    assert dialog.width() <= width + 20, (width, dialog.width())


def test_one_key_and_one_item_are_singular() -> None:
    assert build_tree({"ok": True}, "r", None).summary() == "{1 key}"
    assert build_tree([1], "r", None).summary() == "[1 item]"
    assert build_tree({}, "r", None).summary() == "{0 keys}"


@pytest.mark.parametrize(("params", "masked"), [
    ({"token": "***"}, True), ({"auth": "Bearer ***"}, True), ({"a": [{"b": "x***"}]}, True),
    ({"who": "ann", "n": 3}, False), ({}, False),
])
def test_masked_params_are_found_however_history_kept_them(params: dict[str, object],
                                                           masked: bool) -> None:
    assert has_masked(params) is masked
