"""The graphical step debugger: one debug run, a replay, or a live page session.

The source shows the paused line and a breakpoint margin; beside it the variables
in scope (expanding on demand while paused), live mode's requests, the console and
the outcome. Step (F10), Continue (F8), Stop (Shift+F5) and F9 (toggle a breakpoint
at the caret) drive the hub's session; breakpoints go to the hub as they change,
running or paused. Every hub call goes through ``session.tasks``; the stream is
cancelled when the window closes, which also stops the run (or, live, detaches)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import shiboken6
from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QToolBar,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from console_app.client import debug, jobs
from console_app.client.connection import CancelToken
from console_app.client.errors import describe_error
from console_app.debugger.commands import CommandQueue
from console_app.debugger.panes import ConsoleView, ResultView
from console_app.debugger.requests import RequestsModel
from console_app.debugger.state import DebugState, Phase, VarNode
from console_app.debugger.variables import VariablesModel
from console_app.editor import JobEditor
from console_app.session import DEBUG_BREAKPOINTS_KEY, DEBUG_CODE_KEY, HubSession
from console_app.widgets import MessageBar
from shared.ndjson import (
    DebugAnswer,
    DebugPause,
    DebugRequest,
    DebugStart,
    Failure,
    LogLine,
    MetaData,
    Payload,
    StreamEvent,
)

__all__ = ["DebuggerWindow"]

Opener = Callable[[str], None]


def _desktop_opener(url: str) -> None:
    QDesktopServices.openUrl(QUrl(url))


class DebuggerWindow(QMainWindow):
    sig_started = Signal(str)            # the hub's session id
    sig_paused = Signal(int)             # the line the run is parked before
    sig_resumed = Signal()
    sig_finished = Signal(str)           # the outcome line (result or failure code)
    sig_request = Signal(str, str)       # live: method, path of a request arriving
    sig_answered = Signal(int)           # live: the HTTP status the browser got
    sig_error = Signal(str)              # a hub failure's code, shown in the message bar
    sig_closed = Signal()                # closed, and the hub's session ended with it

    def __init__(self, session: HubSession, name: str, params: dict[str, Any] | None = None,
                 *, replay_run_id: str | None = None, live: bool = False,
                 opener: Opener | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.name, self.params = session, name, dict(params or {})
        # From the editor: its unsaved text and breakpoints, which are not parameters.
        self.code: str | None = self.params.pop(DEBUG_CODE_KEY, None)
        first_breakpoints = self.params.pop(DEBUG_BREAKPOINTS_KEY, None) or []
        self.replay_run_id = replay_run_id
        self.state = DebugState(live=live)
        self.state.breakpoints = {int(n) for n in first_breakpoints}
        self.page_url = ""
        self._opener = opener or _desktop_opener
        self._cancel: CancelToken | None = None
        self._closed = False
        self.closed_cleanly = False  # the hub answered the closing stop/detach
        self.commands = CommandQueue(session.tasks, self._failed)
        self.variables = VariablesModel(self._expand, self)
        self.requests_model = RequestsModel(self.state.requests, self)
        self._build()
        self._refresh()
        self._begin()

    # -- building -----------------------------------------------------------------------

    def _build(self) -> None:
        live = self.state.live
        title = (f"Replay of run {self.replay_run_id}" if self.replay_run_id
                 else f"Live debugger — {self.name}" if live else f"Debugger — {self.name}")
        self.setWindowTitle(title)
        self.resize(1100, 720)
        self.source_view = JobEditor(self)
        self.source_view.set_read_only(True)  # breakpoints still toggle in its margin
        self.source_view.sig_breakpoints_changed.connect(self._breakpoints_changed)
        self.variables_view = QTreeView(self)
        self.variables_view.setModel(self.variables)
        self.variables_view.setUniformRowHeights(True)
        self.variables_view.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.requests_view = QTableView(self)
        self.requests_view.setModel(self.requests_model)
        self.requests_view.horizontalHeader().setStretchLastSection(True)
        self.requests_view.setVisible(live)
        self.console_view = ConsoleView(self)
        self.result_view = ResultView(self)
        self.banner = MessageBar(self)
        self.status_label = QLabel(self)
        self._build_toolbar()
        self.setCentralWidget(self._layout())

    def _layout(self) -> QWidget:
        right = QSplitter(Qt.Orientation.Vertical, self)
        right.addWidget(self.variables_view)
        right.addWidget(self.requests_view)
        bottom = QTabWidget(self)
        bottom.addTab(self.console_view, "Console")
        bottom.addTab(self.result_view, "Result")
        self.bottom_tabs = bottom
        main = QSplitter(Qt.Orientation.Horizontal, self)
        main.addWidget(self.source_view)
        main.addWidget(right)
        main.setStretchFactor(0, 3)
        main.setStretchFactor(1, 2)
        upright = QSplitter(Qt.Orientation.Vertical, self)
        upright.addWidget(main)
        upright.addWidget(bottom)
        upright.setStretchFactor(0, 3)
        upright.setStretchFactor(1, 1)
        holder = QWidget(self)
        column = QVBoxLayout(holder)
        column.setContentsMargins(4, 4, 4, 4)
        column.addWidget(self.banner)
        column.addWidget(upright, 1)
        column.addWidget(self.status_label)
        return holder

    def _action(self, text: str, keys: QKeySequence | str, slot: Callable[[], None]) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: slot())
        self.toolbar.addAction(action)
        return action

    def _build_toolbar(self) -> None:
        self.toolbar = QToolBar("Debug", self)
        self.toolbar.setMovable(False)
        self.addToolBar(self.toolbar)
        self.action_step = self._action("Step", "F10", self.step)
        self.action_continue = self._action("Continue", "F8", self.resume)
        self.action_stop = self._action("Stop", "Shift+F5", self.stop)
        self.action_breakpoint = self._action("Toggle breakpoint", "F9",
                                              self.source_view.toggle_breakpoint_at_caret)
        self.open_page_button = QPushButton("Open page", self)
        self.open_page_button.setToolTip("Open the tagged page in a browser signed in to "
                                         "this hub as you: its requests stop here.")
        self.open_page_button.clicked.connect(self.open_page)
        self.pause_first_switch = QCheckBox("Pause on the first line of every request", self)
        self.pause_first_switch.setToolTip("Off: requests run on until a breakpoint.")
        self.pause_first_switch.setChecked(True)
        self.pause_first_switch.toggled.connect(self._pause_first_toggled)
        if self.state.live:
            self.toolbar.addSeparator()
            self.toolbar.addWidget(self.open_page_button)
            self.toolbar.addWidget(self.pause_first_switch)
        else:  # live-only controls: unplaced, they would float over the toolbar
            self.open_page_button.hide()
            self.pause_first_switch.hide()

    # -- starting -----------------------------------------------------------------------

    def _begin(self) -> None:
        conn = self.session.conn
        if self.state.live:
            name, first = self.name, self.pause_first_switch.isChecked()
            self.session.tasks.run(lambda: (debug.attach(conn, name, step_from_start=first),
                                            jobs.code(conn, name)),
                                   self._attached, self._failed)
            return
        run_id, params, name, code = self.replay_run_id, self.params, self.name, self.code
        lines = sorted(self.state.breakpoints)
        if run_id is not None:
            def items(cancel: CancelToken) -> Any:
                return debug.replay(conn, run_id, cancel, breakpoints=lines)
        else:
            def items(cancel: CancelToken) -> Any:
                return debug.start(conn, name, cancel, params=params, code=code,
                                   breakpoints=lines)
        self._cancel = self.session.tasks.stream(items, self._on_event, self._stream_done,
                                                 self._stream_failed)

    def _attached(self, got: tuple[debug.Attached, str]) -> None:
        attached, code = got
        if self._closed:  # closed while attaching: let the session go at once
            conn = self.session.conn
            self.session.tasks.run(lambda: debug.command(conn, attached.session, "detach"))
            return
        self.state.session, self.state.phase = attached.session, Phase.WAITING
        self.page_url = self.session.url + attached.url
        self.source_view.set_text(code)
        conn = self.session.conn
        self._cancel = self.session.tasks.stream(
            lambda cancel: debug.session_events(conn, attached.session, cancel),
            self._on_event, self._stream_done, self._stream_failed)
        self.sig_started.emit(attached.session)
        self._refresh()

    # -- the stream -----------------------------------------------------------------------

    def _on_event(self, event: StreamEvent) -> None:
        if self._closed:
            return
        handler = self._HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)
            self._refresh()

    def _on_start(self, event: DebugStart) -> None:
        state = self.state
        state.session, state.job_id, state.phase = event.session, event.jobId, Phase.RUNNING
        wanted = sorted(state.breakpoints)  # set before the source came (set_text clears)
        self.source_view.set_text(event.source)
        if wanted:
            self.source_view.set_breakpoints(wanted)
            state.breakpoints = set(wanted)
            self._configure()
        self.sig_started.emit(event.session)

    def _on_log(self, event: LogLine) -> None:
        self.console_view.append_line(event)

    def _on_pause(self, event: DebugPause) -> None:
        state = self.state
        state.paused(event.line, event.reason)
        self.source_view.highlight_line(event.line)
        self.variables.set_scope(event.vars)
        self.sig_paused.emit(event.line)

    def _on_request(self, event: DebugRequest) -> None:
        entry = self.state.request(event)
        self.requests_model.append(entry)
        self.console_view.append_note(f"→ {event.method} {event.path}")
        self.sig_request.emit(event.method, event.path)

    def _on_answer(self, event: DebugAnswer) -> None:
        row = self.state.answered(event)
        if row is not None:
            self.requests_model.row_changed(row)
        self._ran_on()
        verdict = "" if event.success else f" ({event.code or 'failed'})"
        self.console_view.append_note(f"← {event.status}{verdict}")
        self.sig_answered.emit(event.status)

    def _on_meta(self, event: MetaData) -> None:
        self.state.meta = event

    def _on_payload(self, event: Payload) -> None:
        self.state.result = event.data
        self._finish()

    def _on_failure(self, event: Failure) -> None:
        self.state.failure = event
        self._finish()

    _HANDLERS: ClassVar[dict[type, Callable[[DebuggerWindow, Any], None]]] = {
        DebugStart: _on_start, LogLine: _on_log, DebugPause: _on_pause,
        DebugRequest: _on_request, DebugAnswer: _on_answer, MetaData: _on_meta,
        Payload: _on_payload, Failure: _on_failure}

    def _finish(self) -> None:
        self.state.phase = Phase.FINISHED
        self._ran_on()
        outcome = self.state.outcome_text()
        self.result_view.show_outcome(outcome, self.state.result_text())
        self.bottom_tabs.setCurrentWidget(self.result_view)
        self.sig_finished.emit(outcome)

    def _stream_done(self) -> None:
        if self._closed:
            return
        if self.state.live:
            self.state.phase = Phase.CLOSED
            self._ran_on()
            self.banner.show_info("The live session ended (detached, or left alone for "
                                  "10 minutes)")
        self._refresh()

    def _stream_failed(self, exc: Exception) -> None:
        if self._closed:
            return
        self.state.phase = Phase.CLOSED
        self._ran_on()
        self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        if self._closed:
            return
        self.banner.show_error(exc)
        self.sig_error.emit(str(getattr(exc, "code", type(exc).__name__)))
        self._refresh()

    # -- commands -----------------------------------------------------------------------

    def step(self) -> None:
        self._drive("step")

    def resume(self) -> None:
        self._drive("continue")

    def stop(self) -> None:
        if self.state.phase in (Phase.PAUSED, Phase.RUNNING) and self.state.session:
            self._send("stop")

    def _drive(self, command: str) -> None:
        if self.state.phase != Phase.PAUSED:
            return
        self.state.resumed()
        self._ran_on()
        self._send(command)
        self.sig_resumed.emit()
        self._refresh()

    def _ran_on(self) -> None:
        """Not paused any more: no highlight, and values can no longer expand."""
        self.source_view.clear_highlight()
        self.variables.set_paused(False)

    def _send(self, command: str) -> None:
        conn, sid = self.session.conn, self.state.session
        self.commands.send(lambda: debug.command(conn, sid, command))

    def open_page(self) -> None:
        """Open the tagged page (live): the browser must be signed in as this owner."""
        if self.page_url:
            self._opener(self.page_url)

    # -- breakpoints ----------------------------------------------------------------------

    def toggle_breakpoint(self, line: int) -> None:
        """The editor's ``sig_breakpoints_changed`` passes the change on to the hub."""
        self.source_view.toggle_breakpoint(line)

    def _breakpoints_changed(self, lines: list[int]) -> None:
        if set(lines) == self.state.breakpoints:
            return
        self.state.breakpoints = set(lines)
        self._configure()

    def _pause_first_toggled(self, on: bool) -> None:
        """Live: the hub starts each later request stepping, or runs it to a breakpoint."""
        if not self.state.live or not self.state.session or self.state.phase in (
                Phase.FINISHED, Phase.CLOSED):
            return
        conn, sid = self.session.conn, self.state.session
        self.commands.send(lambda: debug.configure(conn, sid, step_from_start=on))

    def _configure(self) -> None:
        if not self.state.session or self.state.phase in (Phase.FINISHED, Phase.CLOSED):
            return
        conn, sid, lines = self.session.conn, self.state.session, sorted(self.state.breakpoints)
        self.commands.send(lambda: debug.configure(conn, sid, breakpoints=lines))

    # -- expanding values ------------------------------------------------------------------

    def _expand(self, node: VarNode, generation: int) -> None:
        handle, conn, sid = node.handle, self.session.conn, self.state.session
        if handle is None or not sid:
            return

        def shown(got: Any) -> None:
            if not self._closed:
                self.variables.expanded(node, generation, got.entries, got.more, got.error)

        def failed(exc: Exception) -> None:
            if not self._closed:
                self.variables.expand_failed(node, generation, describe_error(exc))

        self.commands.send(lambda: debug.expand(conn, sid, handle), shown, failed)

    # -- state on screen ---------------------------------------------------------------------

    def _refresh(self) -> None:
        phase = self.state.phase
        self.action_step.setEnabled(phase == Phase.PAUSED)
        self.action_continue.setEnabled(phase == Phase.PAUSED)
        self.action_stop.setEnabled(phase in (Phase.PAUSED, Phase.RUNNING))
        self.open_page_button.setEnabled(bool(self.page_url) and phase != Phase.CLOSED)
        where = f" at line {self.state.line} ({self.state.reason})" \
            if phase == Phase.PAUSED else ""
        waiting = " — open the page; its requests stop here" \
            if phase == Phase.WAITING else ""
        self.status_label.setText(f"{phase.value.capitalize()}{where}{waiting}")

    # -- closing ------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shut_down()
        super().closeEvent(event)

    def shut_down(self) -> None:
        """End the hub's session, then the stream: a run is stopped, a live session
        detaches (which also stops a request parked now). The hangup waits for the
        hub's answer, so the run ends by the command rather than by a vanished client;
        ``sig_closed`` says when that is done."""
        if self._closed:
            return
        self._closed = True
        cancel = self._cancel or CancelToken()
        live_or_running = self.state.phase in (Phase.RUNNING, Phase.PAUSED, Phase.WAITING)
        if not (self.state.session and live_or_running):
            self._ended(cancel)
            return
        conn, sid = self.session.conn, self.state.session
        command = "detach" if self.state.live else "stop"
        try:  # straight out, not behind queued commands: the window is going
            self.session.tasks.run(lambda: debug.command(conn, sid, command),
                                   lambda _answer: self._ended(cancel),
                                   lambda _exc: self._ended(cancel))
        except RuntimeError:  # the app's tasks already shut down: hang up at once
            self._ended(cancel)

    def _ended(self, cancel: CancelToken) -> None:
        cancel.cancel()
        self.closed_cleanly = True
        if shiboken6.isValid(self):  # a window closed with WA_DeleteOnClose is gone by now
            self.sig_closed.emit()
