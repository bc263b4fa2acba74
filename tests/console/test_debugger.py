"""The debugger window against the real hub: a full session (pause at line 1, step,
variables with an object expanded, a breakpoint set while paused and run to,
the result, stop), a replay of a recorded run, and hub failures shown in place."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.debugger import DebuggerWindow
from console_app.debugger.state import Phase
from console_app.debugger.variables import VarRole
from console_app.run.console import LEVEL_COLOURS
from console_app.session import HubSession

WAIT_MS = 20_000
STEPPED = """const a = 1
let total = 0
const obj = { name: 'x', list: [1, 2, 3], deep: { k: true } }
const long = 'y'.repeat(300)
console.log('begin')
console.warn('careful')
total = a + params.p
console.error('almost')
return { total, name: obj.name }"""
DOUBLED = "const n = Number(params.n)\nconsole.log('n is ' + n)\nreturn n * 2"

Opener = Callable[..., DebuggerWindow]


def save(conn: HubConnection, code: str, prefix: str = "dbg") -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    conn.post("/api/webjobs/save", json={"name": name, "code": code})
    return name


@pytest.fixture
def open_window(qtbot: QtBot, session: HubSession) -> Iterator[Opener]:
    """Windows are closed here, before the task manager shuts down."""
    opened: list[DebuggerWindow] = []

    def make(name: str, params: dict[str, Any] | None = None, **kw: Any) -> DebuggerWindow:
        window = DebuggerWindow(session, name, params or {}, **kw)
        qtbot.addWidget(window)
        window.show()
        opened.append(window)
        return window

    yield make
    for window in opened:
        window.close()  # the stop reaches the hub before the task manager goes
        qtbot.waitUntil(lambda w=window: w.closed_cleanly, timeout=WAIT_MS)


def paused_at(qtbot: QtBot, window: DebuggerWindow, act: Callable[[], None]) -> int:
    with qtbot.waitSignal(window.sig_paused, timeout=WAIT_MS) as got:
        act()
    line: int = got.args[0]
    return line


def var(window: DebuggerWindow, name: str, parent: QModelIndex | None = None) -> QModelIndex:
    model = window.variables
    root = parent or QModelIndex()
    for row in range(model.rowCount(root)):
        if model.index(row, 0, root).data() == name:
            return model.index(row, 0, root)
    raise AssertionError(f"{name} not in the variables")


def test_a_full_debug_session(qtbot: QtBot, connection: HubConnection, open_window: Opener,
                              qtmodeltester: ModelTester) -> None:
    name = save(connection, STEPPED)
    window = open_window(name, {"p": 2})
    assert paused_at(qtbot, window, lambda: None) == 1
    assert window.source_view.text() == STEPPED
    assert window.state.phase == Phase.PAUSED and window.action_step.isEnabled()
    assert window.source_view.highlighted_line() == 1 and window.source_view.is_read_only()
    assert var(window, "obj").siblingAtColumn(1).data() == "<not initialised yet>"
    assert var(window, "total").data(VarRole.TDZ) is True

    assert paused_at(qtbot, window, lambda: qtbot.keyClick(window, Qt.Key.Key_F10)) == 2
    assert var(window, "a").siblingAtColumn(1).data() == "1"
    for expected in (3, 4, 5):
        assert paused_at(qtbot, window, window.action_step.trigger) == expected
    assert "truncated, 300 chars" in var(window, "long").siblingAtColumn(1).data()

    obj = var(window, "obj")
    assert obj.siblingAtColumn(1).data() == "Object {3}"
    window.variables_view.expand(obj)  # the view asks the model, the model the hub
    qtbot.waitUntil(lambda: window.variables.rowCount(var(window, "obj")) == 3,
                    timeout=WAIT_MS)
    obj = var(window, "obj")
    assert var(window, "list", obj).siblingAtColumn(1).data() == "Array(3)"
    assert var(window, "name", obj).siblingAtColumn(1).data() == '"x"'
    deep = var(window, "deep", obj)
    window.variables.fetchMore(deep)
    qtbot.waitUntil(lambda: window.variables.rowCount(var(window, "deep", var(
        window, "obj"))) == 1, timeout=WAIT_MS)
    qtmodeltester.check(window.variables)

    window.toggle_breakpoint(8)  # set while paused, then run to it
    assert window.source_view.highlighted_line() == 5
    assert window.source_view.breakpoints() == [8]
    assert paused_at(qtbot, window, window.action_continue.trigger) == 8
    assert var(window, "total").siblingAtColumn(1).data() == "3"
    assert window.console_view.levels() == ["log", "warn"]
    assert window.console_view.line_colour(1) == LEVEL_COLOURS["warn"]

    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS) as finished:
        window.resume()
    assert finished.args[0].startswith("Finished: json result, HTTP 200")
    assert window.source_view.highlighted_line() is None
    assert '"total": 3' in window.result_view.toPlainText()
    assert window.console_view.levels() == ["log", "warn", "error"]
    assert not window.action_step.isEnabled() and not window.action_stop.isEnabled()
    assert not window.banner.isVisible()


def test_stop_ends_the_run_at_its_line(qtbot: QtBot, connection: HubConnection,
                                       open_window: Opener) -> None:
    name = save(connection, STEPPED)
    window = open_window(name, {"p": 1})
    assert paused_at(qtbot, window, lambda: None) == 1
    assert paused_at(qtbot, window, window.step) == 2
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS) as finished:
        qtbot.keyClick(window, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    assert finished.args[0] == "Failed JOB-001: Stopped by the debugger at line 2"
    assert window.state.phase == Phase.FINISHED


def test_ctrl_w_closes_the_window_and_stops_its_run(qtbot: QtBot, connection: HubConnection,
                                                     open_window: Opener) -> None:
    name = save(connection, STEPPED)
    window = open_window(name, {"p": 1})
    assert paused_at(qtbot, window, lambda: None) == 1
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()
    qtbot.waitUntil(lambda: window.closed_cleanly, timeout=WAIT_MS)


def test_breakpoint_toggled_at_the_caret_with_f9(qtbot: QtBot, connection: HubConnection,
                                                 open_window: Opener) -> None:
    name = save(connection, DOUBLED)
    window = open_window(name, {"n": 4})
    assert paused_at(qtbot, window, lambda: None) == 1
    window.source_view.go_to_line(3)
    qtbot.keyClick(window, Qt.Key.Key_F9)
    assert window.state.breakpoints == {3}
    assert paused_at(qtbot, window, lambda: qtbot.keyClick(window, Qt.Key.Key_F8)) == 3


def test_replay_of_a_recorded_run(qtbot: QtBot, connection: HubConnection,
                                  open_window: Opener) -> None:
    name = save(connection, DOUBLED, "replayed")
    assert connection.post(f"/api/webjobs/{name}", json={"n": 21},
                           headers={"Accept": "application/json"}) == 42
    runs: list[dict[str, Any]] = []

    def recorded() -> bool:
        runs[:] = connection.get("/api/webjobs/history", job=name)["runs"]
        return bool(runs) and runs[0]["outcome"] != "running"

    qtbot.waitUntil(recorded, timeout=WAIT_MS)
    window = open_window(name, {}, replay_run_id=runs[0]["jobId"])
    assert "Replay" in window.windowTitle()
    assert paused_at(qtbot, window, lambda: None) == 1
    assert paused_at(qtbot, window, window.step) == 2
    assert var(window, "n").siblingAtColumn(1).data() == "21"
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS):
        window.resume()
    assert window.state.result_text() == "42"
    assert window.console_view.levels() == ["log"]


def test_hub_failures_show_their_code_without_a_dialog(qtbot: QtBot, open_window: Opener,
                                                       connection: HubConnection) -> None:
    window = open_window("no_such_job_here")
    with qtbot.waitSignal(window.sig_error, timeout=WAIT_MS) as failed:
        pass
    assert failed.args[0] == "SYS-404"
    assert window.banner.isVisible() and window.banner.text().startswith("SYS-404: ")
    replayed = open_window("x", replay_run_id="no-such-run")
    with qtbot.waitSignal(replayed.sig_error, timeout=WAIT_MS) as failed:
        pass
    assert failed.args[0] == "SYS-404"
    window = open_window(save(connection, "return 1"))
    assert paused_at(qtbot, window, lambda: None) == 1
    real, window.state.session = window.state.session, "dbg_gone"  # as if swept
    with qtbot.waitSignal(window.sig_error, timeout=WAIT_MS) as failed:
        window.step()
    assert failed.args[0] == "SYS-404" and "debug session" in window.banner.text()
    window.state.session = real
    window.state.paused(1, "step")
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS):
        window.stop()


def test_the_editors_unsaved_code_and_breakpoints_go_to_the_hub_not_to_the_job(
        qtbot: QtBot, open_window: Opener, connection: HubConnection) -> None:
    name = save(connection, "return 'saved'")
    unsaved = "const seen = Object.keys(params)\nlet x = 1\nx = 2\nreturn { seen, x }"
    window = open_window(name, {"__code__": unsaved, "__breakpoints__": [3], "p": 1})
    assert paused_at(qtbot, window, lambda: None) == 1  # the unsaved text, stepping
    assert window.source_view.text() == unsaved and window.source_view.breakpoints() == [3]
    assert paused_at(qtbot, window, window.resume) == 3
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS):
        window.resume()
    shown = window.result_view.toPlainText()
    assert '"x": 2' in shown and '"seen": [\n    "p"\n  ]' in shown.replace("\r", "")
