"""History models and helpers without views: state, table, console, replay plan."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from console_app.client.history import (
    HistoryFilters,
    RunDetail,
    RunPage,
    RunSummary,
)
from console_app.history.replay import ReplayPlayer
from console_app.history.run_view import result_text
from console_app.models.history import (
    HistoryState,
    Roles,
    RunTableModel,
    replay_plan,
)
from console_app.run.console import LEVEL_ROLE, TIME_ROLE, ConsoleModel
from shared.ndjson import LogLine
from shared.wire import decode
from shared.wire import history as wire

WIRE = {"jobId": "job_1", "jobName": "report", "source": "http", "outcome": "failed",
        "caller": {"kind": "user", "id": "1", "name": "owner", "userClass": "OWNER"},
        "started": 1_800_000_000.5, "node": "n1", "ref": "abc", "runtimeMs": 1500,
        "code": "JOB-001", "message": "Error: it broke", "httpStatus": 500,
        "params": {"a": 1}, "scheduleId": None, "scheduleName": None}


def run(**changes: object) -> RunSummary:
    return RunSummary.of(decode(wire.RunSummary, {**WIRE, **changes}, strict=True))


def test_summary_from_wire_and_who_started_it() -> None:
    summary = run()
    assert (summary.run_id, summary.outcome, summary.code) == ("job_1", "failed", "JOB-001")
    assert summary.started_by == "owner (http)"
    scheduled = run(source="schedule", scheduleId="4", scheduleName="nightly",
                    caller={"kind": "schedule", "name": "scheduler"})
    assert scheduled.started_by == "schedule nightly"


def test_filters_become_query_params_in_epoch_ms() -> None:
    params = HistoryFilters(job="x", since=100.5, search="", limit=10).params()
    assert params["since"] == 100500 and params["search"] is None
    assert params["job"] == "x" and params["limit"] == 10 and params["offset"] == 0


def test_state_pages_forward_and_back() -> None:
    state = HistoryState(HistoryFilters(limit=2))
    state.page = RunPage((run(), run(jobId="job_2")), 2, 0)
    forward = state.next_filters()
    assert forward is not None and forward.offset == 2
    assert state.previous_filters() is None
    assert state.range_text() == "Runs 1–2"
    state.filters, state.page = forward, RunPage((run(),), 2, 2)
    assert state.next_filters() is None
    back = state.previous_filters()
    assert back is not None and back.offset == 0
    assert state.refine(status="failed").offset == 0


def test_run_table_serves_badges_from_roles(qtmodeltester: ModelTester) -> None:
    model = RunTableModel()
    model.set_runs([run(), run(jobId="job_2", outcome="success", code=None)])
    qtmodeltester.check(model)
    first = model.index(0, 2)
    assert model.data(first) == "failed · JOB-001"
    assert model.data(first, Roles.OUTCOME) == "failed"
    assert model.data(first, Roles.BADGE_COLOUR) == "#c62828"
    assert model.data(model.index(1, 0), Roles.RUN_ID) == "job_2"
    assert model.data(model.index(0, 3)) == "1.5 s"
    assert model.data(model.index(0, 4)) == "owner (http)"
    assert model.headerData(2, Qt.Orientation.Horizontal) == "Status"


def test_console_model_and_replay_plan(qtmodeltester: ModelTester) -> None:
    lines = [LogLine("log", "a", 5), LogLine("warn", "b", 20), LogLine("error", "c", 9000)]
    plan = replay_plan(lines, max_gap_ms=1000)
    assert [wait for wait, _ in plan] == [5, 15, 1000]
    model = ConsoleModel()
    model.extend(lines)
    model.append(LogLine("info", "d", 9001))
    qtmodeltester.check(model)
    assert model.rowCount() == 4
    assert model.data(model.index(1, 0), LEVEL_ROLE) == "warn"
    assert model.data(model.index(2, 0), TIME_ROLE) == 9000
    assert "c" in model.data(model.index(2, 0))


def test_paced_replay_arrives_line_by_line(qtbot: QtBot) -> None:
    model = ConsoleModel()
    player = ReplayPlayer(model)
    seen: list[int] = []
    player.sig_progress.connect(lambda shown, _total: seen.append(model.rowCount()))
    lines = [LogLine("log", str(n), n * 30) for n in range(4)]
    with qtbot.waitSignal(player.sig_finished, timeout=3000):
        player.play(lines, paced=True)
        assert model.rowCount() < 4  # nothing is shown before its time
    assert [e.message for e in model.lines] == ["0", "1", "2", "3"]
    assert seen[:4] == [1, 2, 3, 4]
    with qtbot.waitSignal(player.sig_finished, timeout=1000):
        player.play(lines, paced=False)
    assert model.rowCount() == 4


def test_result_text_indents_json_and_describes_files() -> None:
    summary = run(outcome="success")
    json_run = RunDetail(summary, result='{"a":1}', result_type="json", result_size=7)
    assert result_text(json_run) == '{\n  "a": 1\n}'
    pdf = RunDetail(summary, result=None, result_format="application/pdf", result_size=900)
    assert "application/pdf" in result_text(pdf) and "900" in result_text(pdf)
    cut = RunDetail(summary, result="abc", result_type="text", result_truncated=True,
                    result_size=99999)
    assert result_text(cut).endswith("(cut at 64 KB of 99999 bytes)")
