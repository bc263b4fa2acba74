"""Issue 17, the debugger window against a real hub: step over / into / out with the
async call stack, expanded values that stay expanded, the job globals under their own
node, watches, a name's value on hover, a pause on an exception leaving the job,
restart, the labels ("at a breakpoint", not "(step)"; one "(line N)"), a page job's
*Debug…* opening the live session with *Copy URL*, and a window that fits."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHeaderView
from pytestqt.qtbot import QtBot

from console_app.client import jobs
from console_app.client.connection import HubConnection
from console_app.debugger import DebuggerWindow
from console_app.debugger.hover import name_at
from console_app.debugger.launch import DEBUG_LIVE_KEY, debug_job
from console_app.debugger.state import DebugState, Phase
from console_app.debugger.watches import parse_watch
from console_app.session import HubSession
from shared.ndjson import Failure
from tests.console.test_debugger import WAIT_MS, Opener, open_window, paused_at, save, var

__all__ = ["open_window"]  # the fixture, shared with test_debugger

CALLS = """const base = Number(params.base)
async function inner(x) {
  const y = x + 1
  return y
}
async function outer(x) {
  const z = await inner(x)
  return z * 2
}
const obj = { name: 'x', list: [1, 2, 3], deep: { k: true } }
const r = await outer(base)
console.log('r is ' + r)
return { r }"""
THROWS = """let seen = 'before'
async function check(value) {
  const limit = 3
  if (value > limit) throw new RangeError('too big: ' + value)
  return value
}
seen = 'calling'
return await check(Number(params.n))"""
PAGE = "/*\nMode: page\n*/\nreturn response.html('<p>hi</p>')"


def stack_names(window: DebuggerWindow) -> list[str]:
    return [row.split("  —  ")[0] for row in window.stack_view.rows()]


def test_step_over_into_out_follow_the_call_stack(qtbot: QtBot, connection: HubConnection,
                                                   open_window: Opener) -> None:
    window = open_window(save(connection, CALLS), {"base": 1})
    assert paused_at(qtbot, window, lambda: None) == 1
    assert window.status_label.text() == "Paused at line 1, on entry"
    assert stack_names(window) == ["(job)"]
    assert paused_at(qtbot, window, window.action_step.trigger) == 10  # over
    assert paused_at(qtbot, window, window.action_step.trigger) == 11
    assert paused_at(qtbot, window, window.action_step_into.trigger) == 7
    assert stack_names(window) == ["outer", "(job)"]
    assert window.stack_view.rows()[1] == "(job)  —  line 11"
    assert paused_at(qtbot, window, window.step_into) == 3
    assert stack_names(window) == ["inner", "outer", "(job)"]
    assert paused_at(qtbot, window, window.action_step_out.trigger) == 8
    assert var(window, "z").siblingAtColumn(1).data() == "2"
    with qtbot.waitSignal(window.stack_view.sig_frame_chosen, timeout=WAIT_MS) as chosen:
        window.stack_view.itemClicked.emit(window.stack_view.item(1))
    assert chosen.args == [11] and window.source_view.caret_position()[0] == 11
    assert paused_at(qtbot, window, window.step_out) == 12
    assert window.status_label.text() == "Paused at line 12, after a step"
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS):
        window.resume()
    assert window.stack_view.count() == 0


def test_expanded_values_stay_expanded_and_globals_have_their_own_node(
        qtbot: QtBot, connection: HubConnection, open_window: Opener) -> None:
    window = open_window(save(connection, CALLS), {"base": 1})
    assert paused_at(qtbot, window, lambda: None) == 1
    tops = [window.variables.index(r, 0).data() for r in range(window.variables.rowCount())]
    assert tops[-1] == "job globals" and "params" not in tops and "console" not in tops
    group = var(window, "job globals")
    assert window.variables.rowCount(group) >= 2  # console and params, already there
    assert var(window, "params", group).siblingAtColumn(1).data() == "Object {1}"
    assert paused_at(qtbot, window, window.step) == 10
    assert paused_at(qtbot, window, window.step) == 11
    window.variables_view.expand(var(window, "obj"))
    qtbot.waitUntil(lambda: window.variables.rowCount(var(window, "obj")) == 3,
                    timeout=WAIT_MS)
    window.variables_view.expand(var(window, "list", var(window, "obj")))
    qtbot.waitUntil(lambda: window.variables.rowCount(
        var(window, "list", var(window, "obj"))) == 3, timeout=WAIT_MS)

    assert paused_at(qtbot, window, window.step) == 12  # a new pause: a new tree...
    def reopened() -> bool:
        obj = var(window, "obj")
        return (window.variables_view.isExpanded(obj) and window.variables.rowCount(obj) == 3
                and window.variables_view.isExpanded(var(window, "list", obj))
                and window.variables.rowCount(var(window, "list", obj)) == 3)
    qtbot.waitUntil(reopened, timeout=WAIT_MS)  # ...opened where the owner had it open
    header = window.variables_view.header()
    assert header.sectionResizeMode(0) == QHeaderView.ResizeMode.ResizeToContents
    assert header.sectionResizeMode(2) == QHeaderView.ResizeMode.ResizeToContents
    window.variables_view.collapse(var(window, "obj"))
    assert paused_at(qtbot, window, window.step) == 13
    assert not window.variables_view.isExpanded(var(window, "obj"))


def test_watches_and_hover_show_values_at_each_pause(qtbot: QtBot, connection: HubConnection,
                                                     open_window: Opener) -> None:
    window = open_window(save(connection, CALLS), {"base": 1})
    assert paused_at(qtbot, window, lambda: None) == 1
    assert window.watches.add("obj.list[1]") and window.watches.add("params.base")
    assert not window.watches.add("obj.list[")
    assert window.watches.add("missing")
    for _ in range(3):
        paused_at(qtbot, window, window.step)
    assert window.state.line == 12
    qtbot.waitUntil(lambda: window.watches.value("obj.list[1]") == "2", timeout=WAIT_MS)
    assert window.watches.value("params.base") == "1"
    assert window.watches.value("missing") == "<missing is not in scope here>"

    sci = window.source_view.sci
    line_start = sci.positionFromLine(11)  # 0-based: line 12, "console.log('r is ' + r)"
    position = line_start + len("console.log('r is ' + ")
    assert window.value_hover.show_at(position) == "r = 4"
    assert window.value_hover.show_at(line_start).startswith("console = ")
    assert window.value_hover.show_at(line_start + len("console.l")) == ""  # a property
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS):
        window.resume()
    assert window.value_hover.show_at(position) == ""  # not paused: nothing to show


def test_an_exception_leaving_the_job_pauses_where_it_was_thrown(
        qtbot: QtBot, connection: HubConnection, open_window: Opener) -> None:
    window = open_window(save(connection, THROWS), {"n": 9})
    assert window.exception_switch.isChecked()
    assert paused_at(qtbot, window, lambda: None) == 1
    assert paused_at(qtbot, window, window.resume) == 4
    assert window.status_label.text() == "Paused at line 4, an uncaught exception"
    assert var(window, "<exception>").siblingAtColumn(1).data() == "RangeError: too big: 9"
    assert var(window, "value").siblingAtColumn(1).data() == "9"
    assert stack_names(window) == ["check", "(job)"]
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS) as finished:
        window.resume()
    assert finished.args[0].startswith("Failed JOB-001: RangeError: too big: 9")
    assert window.status_label.text() == "Failed"  # not "Finished"


def test_without_the_switch_the_run_just_fails(qtbot: QtBot, connection: HubConnection,
                                               open_window: Opener) -> None:
    window = open_window(save(connection, THROWS), {"n": 9})
    assert paused_at(qtbot, window, lambda: None) == 1
    window.exception_switch.setChecked(False)  # sent to the running session
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS) as finished:
        window.resume()
    assert "too big" in finished.args[0]


def test_restart_runs_again_from_the_top_keeping_breakpoints(
        qtbot: QtBot, connection: HubConnection, open_window: Opener) -> None:
    window = open_window(save(connection, CALLS), {"base": 2})
    assert paused_at(qtbot, window, lambda: None) == 1
    first = window.state.session
    window.toggle_breakpoint(12)
    assert paused_at(qtbot, window, window.resume) == 12
    assert window.status_label.text() == "Paused at line 12, at a breakpoint"
    assert window.console_view.toPlainText() == ""
    with qtbot.waitSignal(window.sig_paused, timeout=WAIT_MS) as again:
        window.action_restart.trigger()
    assert again.args == [1] and window.state.session != first
    assert window.source_view.breakpoints() == [12]
    assert paused_at(qtbot, window, window.resume) == 12
    with qtbot.waitSignal(window.sig_finished, timeout=WAIT_MS):
        window.resume()
    assert window.console_view.levels() == ["log"]  # one run's console, not two


def test_a_syntax_error_names_its_line_once(qtbot: QtBot, connection: HubConnection,
                                            open_window: Opener) -> None:
    window = open_window(save(connection, "return 1"), {"__code__": "let a = 1\nlet = = 2"})
    with qtbot.waitSignal(window.sig_error, timeout=WAIT_MS):
        pass
    assert window.banner.text().count("line 2") == 1, window.banner.text()
    state = DebugState(failure=Failure("Stopped by the debugger at line 19", "JOB-001",
                                       line=19))
    assert state.outcome_text() == "Failed JOB-001: Stopped by the debugger at line 19"
    state.failure = Failure("boom", "JOB-001", line=19)
    assert state.outcome_text() == "Failed JOB-001: boom (line 19)"


def test_debug_on_a_page_job_opens_the_live_session_with_copy_url(
        qtbot: QtBot, connection: HubConnection, session: HubSession,
        open_window: Opener) -> None:
    name = save(connection, PAGE, "page")
    job = next(j for j in jobs.available(connection).jobs if j.name == name)
    asked: list[tuple[str, dict[str, Any]]] = []
    session.nav.sig_open_debugger.connect(lambda n, p: asked.append((n, p)))
    debug_job(session, name, job, {"kept": 1})
    assert asked == [(name, {DEBUG_LIVE_KEY: True})]
    window = open_window(*asked[0])
    with qtbot.waitSignal(window.sig_started, timeout=WAIT_MS):
        pass
    assert window.state.live and window.state.phase == Phase.WAITING
    assert window.copy_url_button.isVisible() and window.copy_url_button.isEnabled()
    window.copy_url_button.click()
    clipboard = QGuiApplication.clipboard()
    assert clipboard is not None and clipboard.text() == window.page_url
    assert "?_debug=dbg_" in window.page_url
    plain = save(connection, "return 1")
    debug_job(session, plain, None, {"kept": 1})
    assert asked[-1] == (plain, {"kept": 1})


def test_the_window_fits_its_screen(qtbot: QtBot, connection: HubConnection,
                                    open_window: Opener) -> None:
    window = open_window(save(connection, "return 1"))
    screen = window.screen().availableGeometry()
    assert window.width() <= min(1024, screen.width())
    assert window.height() <= min(700, screen.height())
    assert screen.contains(window.frameGeometry().topLeft())
    assert paused_at(qtbot, window, lambda: None) == 1
    assert window.action_step_out.toolTip() == "Step out (Shift+F11)"


@given(st.text(max_size=40))
def test_any_watch_text_is_a_path_or_none(text: str) -> None:
    path = parse_watch(text)
    assert path is None or (path and all(isinstance(p, str) for p in path))


@given(st.lists(st.from_regex(r"[A-Za-z_$][\w$]{0,8}", fullmatch=True) | st.integers(0, 99),
                min_size=1, max_size=6).filter(lambda p: isinstance(p[0], str)))
def test_paths_read_back(parts: list[str | int]) -> None:
    text = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p)
                   for i, p in enumerate(parts))
    assert parse_watch(text) == [str(p) for p in parts]


def test_hover_names() -> None:
    assert name_at("total = a + b.c", 0) == "total"
    assert name_at("total = a + b.c", 8) == "a"
    assert name_at("total = a + b.c", 14) is None
    assert name_at("[...rest]", 5) == "rest"
    assert name_at("x", 5) is None
