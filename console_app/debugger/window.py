"""The graphical step debugger: one debug run, a replay, or a live page session.

The source shows the paused line and a breakpoint margin (hover a name for its
value); beside it the variables in scope (expanding on demand while paused, and what
was open stays open from pause to pause; the job globals under a node of their own),
watches, the call stack of async frames, live mode's requests, the console and the
outcome. Continue (F8), Step over (F10), Step into (F11), Step out (Shift+F11),
Restart (Ctrl+Shift+F5), Stop (Shift+F5) and F9 (toggle a breakpoint at the caret)
drive the hub's session; breakpoints and "pause on uncaught exceptions" go to the hub
as they change, running or paused. Every hub call goes through ``session.tasks``; the
stream is cancelled when the window closes, which also stops the run (or, live,
detaches)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import shiboken6
from PySide6.QtCore import QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices
from PySide6.QtWidgets import (
    QWidget,
)

from console_app.client import debug, jobs
from console_app.client.connection import CancelToken
from console_app.debugger.commands import CommandQueue
from console_app.debugger.driving import DebuggerDriving, Opener
from console_app.debugger.hover import ValueHover
from console_app.debugger.launch import DEBUG_LIVE_KEY
from console_app.debugger.requests import RequestsModel
from console_app.debugger.state import DebugState, Phase
from console_app.debugger.variables import KeepExpanded, VariablesModel
from console_app.debugger.watches import resolve
from console_app.session import DEBUG_BREAKPOINTS_KEY, DEBUG_CODE_KEY, HubSession
from shared.ndjson import (
    DebugAnswer,
    DebugRequest,
    DebugStart,
    Failure,
    LogLine,
    MetaData,
    Payload,
    StreamEvent,
)
from shared.wire.debug import DebugPaused, DebugStack, DebugValue

__all__ = ["DebuggerWindow"]


def _desktop_opener(url: str) -> None:
    QDesktopServices.openUrl(QUrl(url))


class DebuggerWindow(DebuggerDriving):
    """The window of one debug session: starting it (or attaching, live), the stream's
    events onto the screen, restarting and closing; its signals and its commands are
    :class:`DebuggerDriving`'s."""

    def __init__(self, session: HubSession, name: str, params: dict[str, Any] | None = None,
                 *, replay_run_id: str | None = None, live: bool = False,
                 opener: Opener | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.name, self.params = session, name, dict(params or {})
        # From the editor: its unsaved text and breakpoints, which are not parameters.
        self.code: str | None = self.params.pop(DEBUG_CODE_KEY, None)
        first_breakpoints = self.params.pop(DEBUG_BREAKPOINTS_KEY, None) or []
        live = live or bool(self.params.pop(DEBUG_LIVE_KEY, False))  # Manage, a page job
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
        title = (f"Replay of run {replay_run_id}" if replay_run_id
                 else f"Live debugger — {name}" if live else f"Debugger — {name}")
        self._build(title, live)
        self._connect()
        self._refresh()
        self._begin()

    # -- building -----------------------------------------------------------------------

    def _connect(self) -> None:
        """The widgets of :class:`DebuggerLayout` to what they do."""
        for action, slot in ((self.action_continue, self.resume), (self.action_step, self.step),
                             (self.action_step_into, self.step_into),
                             (self.action_step_out, self.step_out),
                             (self.action_restart, self.restart), (self.action_stop, self.stop),
                             (self.action_breakpoint,
                              self.source_view.toggle_breakpoint_at_caret)):
            action.triggered.connect(lambda _checked=False, act=slot: act())
        self.source_view.sig_breakpoints_changed.connect(self._breakpoints_changed)
        self.value_hover = ValueHover(self.source_view.sci, self.state.lookup)
        self.variables_view.setModel(self.variables)
        self.kept_open = KeepExpanded(self.variables_view, self.variables)
        self.watches.sig_changed.connect(self._evaluate_watches)
        self.stack_view.sig_frame_chosen.connect(self.source_view.go_to_line)
        self.requests_view.setModel(self.requests_model)
        self._size_requests()
        self.exception_switch.toggled.connect(self._exception_toggled)
        self.open_page_button.clicked.connect(self.open_page)
        self.copy_url_button.clicked.connect(self.copy_url)
        self.pause_first_switch.toggled.connect(self._pause_first_toggled)

    # -- starting -----------------------------------------------------------------------

    def _begin(self) -> None:
        conn, on_exception = self.session.conn, self.exception_switch.isChecked()
        if self.state.live:
            name, first = self.name, self.pause_first_switch.isChecked()
            self.session.tasks.run(lambda: (debug.attach(conn, name, step_from_start=first,
                                                         pause_on_exception=on_exception),
                                            jobs.code(conn, name)),
                                   self._attached, self._failed)
            return
        run_id, params, name, code = self.replay_run_id, self.params, self.name, self.code
        lines = sorted(self.state.breakpoints)
        if run_id is not None:
            def items(cancel: CancelToken) -> Any:
                return debug.replay(conn, run_id, cancel, breakpoints=lines,
                                    pause_on_exception=on_exception)
        else:
            def items(cancel: CancelToken) -> Any:
                return debug.start(conn, name, cancel, params=params, code=code,
                                   breakpoints=lines, pause_on_exception=on_exception)
        self._cancel = self.session.tasks.stream(items, self._on_event, self._stream_done,
                                                 self._stream_failed)

    def restart(self) -> None:
        """The same run again from the top (a live session: attached afresh): the old
        one is stopped (detached) and its stream let go; breakpoints and watches stay."""
        if self._closed:
            return
        self._end_session()
        if self._cancel is not None:
            self._cancel.cancel()  # no callback of the old stream runs after this
        breakpoints = set(self.state.breakpoints)
        self.state = DebugState(live=self.state.live, breakpoints=breakpoints)
        self.requests_model = RequestsModel(self.state.requests, self)
        self.requests_view.setModel(self.requests_model)
        self.value_hover.lookup = self.state.lookup
        self.commands = CommandQueue(self.session.tasks, self._failed)
        self.page_url = ""
        self._ran_on()
        self.variables.clear()
        self.console_view.clear()
        self.result_view.clear()
        self.banner.hide()
        self.bottom_tabs.setCurrentWidget(self.console_view)
        self._refresh()
        self._begin()

    def _end_session(self) -> None:
        """Stop the run (or detach), straight out: the answer does not matter."""
        phase, sid = self.state.phase, self.state.session
        if sid and phase in (Phase.RUNNING, Phase.PAUSED, Phase.WAITING):
            conn, command = self.session.conn, "detach" if self.state.live else "stop"
            self.session.tasks.run(lambda: debug.command(conn, sid, command),
                                   None, lambda _exc: None)

    def _attached(self, got: tuple[debug.Attached, str]) -> None:
        attached, code = got
        if self._closed:  # closed while attaching: let the session go at once
            conn = self.session.conn
            self.session.tasks.run(lambda: debug.command(conn, attached.session, "detach"))
            return
        self.state.session, self.state.phase = attached.session, Phase.WAITING
        self.page_url = self.session.url + attached.url
        self.source_view.set_text(code)
        conn, sid = self.session.conn, attached.session

        def events(cancel: CancelToken) -> Any:
            return debug.session_events(conn, sid, cancel)

        self._cancel = self.session.tasks.stream(events, self._on_event, self._stream_done,
                                                 self._stream_failed)
        self.sig_started.emit(attached.session)
        self._refresh()

    # -- the stream -----------------------------------------------------------------------

    def _on_event(self, event: StreamEvent | DebugStack) -> None:
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
            self._configure(breakpoints=wanted)
        self.sig_started.emit(event.session)

    def _on_log(self, event: LogLine) -> None:
        self.console_view.append_line(event)

    def _on_stack(self, event: DebugStack) -> None:
        self.state.stack = list(event.frames)  # the pause that follows is its innermost
        self.stack_view.show_frames(self.state.stack)

    def _on_pause(self, event: DebugPaused) -> None:
        state = self.state
        state.paused(event.line, event.reason, event.vars)
        self.source_view.highlight_line(event.line)
        self.variables.set_scope(event.vars)
        self._evaluate_watches()
        self.sig_paused.emit(event.line)

    def _evaluate_watches(self) -> None:
        """Each watch's value at this pause, walked off the GUI thread."""
        paths, state = dict(self.watches.paths), self.state
        if not paths or state.phase != Phase.PAUSED:
            return
        conn, sid, vars_, generation = (self.session.conn, state.session, dict(state.vars),
                                        self.variables.generation)

        def walk() -> dict[str, DebugValue]:
            return {text: resolve(vars_, path, lambda handle: debug.expand(conn, sid, handle))
                    for text, path in paths.items()}

        def shown(values: dict[str, DebugValue]) -> None:
            if not self._closed and generation == self.variables.generation:
                self.watches.show_values(values)

        self.commands.send(walk, shown, lambda _exc: None)

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
        DebugStart: _on_start, LogLine: _on_log, DebugPaused: _on_pause,
        DebugStack: _on_stack,
        DebugRequest: _on_request, DebugAnswer: _on_answer, MetaData: _on_meta,
        Payload: _on_payload, Failure: _on_failure}

    def _finish(self) -> None:
        self.state.phase = Phase.FINISHED
        self._ran_on()
        outcome = self.state.outcome_text()
        self.result_view.show_outcome(outcome, self.state.result_text())
        self.bottom_tabs.setCurrentWidget(self.result_view)
        # The run is over: its variables and frames are gone with it.
        self.variables.clear()
        self.stack_view.show_frames([])
        self.sig_finished.emit(outcome)
        self.session.nav.sig_run_ended.emit(self.name)

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
        self.watches.paths.clear()
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
