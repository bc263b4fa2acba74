"""What the owner does to a debug session from the window, sent to the hub.

Stepping, resuming and stopping (while paused or running), breakpoints and the "pause
on uncaught exceptions" / "pause first" switches (sent as they change), values expanded
on demand while paused, the live page's address opened or copied, and the toolbar's
state kept to the session's phase. Every hub call goes through the window's
:class:`CommandQueue`, in order, off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication

from console_app.client import debug
from console_app.client.errors import describe_error
from console_app.debugger.commands import CommandQueue
from console_app.debugger.controls import DebuggerLayout
from console_app.debugger.state import DebugState, Phase, VarNode
from console_app.debugger.variables import VariablesModel
from console_app.session import HubSession

__all__ = ["DebuggerDriving", "Opener"]

Opener = Callable[[str], None]


class DebuggerDriving(DebuggerLayout):
    """The commands of :class:`~console_app.debugger.window.DebuggerWindow`, and the
    signals it tells the rest of the console by."""

    sig_started = Signal(str)            # the hub's session id
    sig_paused = Signal(int)             # the line the run is parked before
    sig_resumed = Signal()
    sig_finished = Signal(str)           # the outcome line (result or failure code)
    sig_request = Signal(str, str)       # live: method, path of a request arriving
    sig_answered = Signal(int)           # live: the HTTP status the browser got
    sig_error = Signal(str)              # a hub failure's code, shown in the message bar
    sig_closed = Signal()                # closed, and the hub's session ended with it

    # Set by the window as it starts its session.
    session: HubSession
    state: DebugState
    commands: CommandQueue
    variables: VariablesModel
    page_url: str
    _opener: Opener
    _closed: bool

    # -- commands -----------------------------------------------------------------------

    def step(self) -> None:
        """Step over: the next statement here, or of a function that called this one."""
        self._drive("over")

    def step_into(self) -> None:
        self._drive("into")

    def step_out(self) -> None:
        self._drive("out")

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
        self.stack_view.clear()

    def _send(self, command: str) -> None:
        conn, sid = self.session.conn, self.state.session
        self.commands.send(lambda: debug.command(conn, sid, command))

    def open_page(self) -> None:
        """Open the tagged page (live): the browser must be signed in as this owner."""
        if self.page_url:
            self._opener(self.page_url)

    def copy_url(self) -> None:
        """The tagged page's address on the clipboard, for a browser of one's choice."""
        clipboard = QGuiApplication.clipboard()
        if self.page_url and clipboard is not None:
            clipboard.setText(self.page_url)
            self.banner.show_info(f"Copied {self.page_url}")

    # -- breakpoints ----------------------------------------------------------------------

    def toggle_breakpoint(self, line: int) -> None:
        """The editor's ``sig_breakpoints_changed`` passes the change on to the hub."""
        self.source_view.toggle_breakpoint(line)

    def _breakpoints_changed(self, lines: list[int]) -> None:
        if set(lines) == self.state.breakpoints:
            return
        self.state.breakpoints = set(lines)
        self._configure(breakpoints=sorted(self.state.breakpoints))

    def _pause_first_toggled(self, on: bool) -> None:
        """Live: the hub starts each later request stepping, or runs it to a breakpoint."""
        if self.state.live:
            self._configure(step_from_start=on)

    def _exception_toggled(self, on: bool) -> None:
        self._configure(pause_on_exception=on)

    def _configure(self, *, breakpoints: list[int] | None = None,
                   step_from_start: bool | None = None,
                   pause_on_exception: bool | None = None) -> None:
        """Change the session's fields given (None: as it is). Before the session
        started there is nothing to change (the start asks for what is set), after it
        ended nothing to tell."""
        if not self.state.session or self.state.phase in (Phase.FINISHED, Phase.CLOSED):
            return
        conn, sid = self.session.conn, self.state.session
        self.commands.send(lambda: debug.configure(
            conn, sid, breakpoints=breakpoints, step_from_start=step_from_start,
            pause_on_exception=pause_on_exception))

    # -- expanding values ------------------------------------------------------------------

    def _expand(self, node: VarNode, generation: int) -> None:
        handle, conn, sid = node.handle, self.session.conn, self.state.session
        if handle is None or not sid:
            return

        def shown(got: debug.Expansion) -> None:
            if not self._closed:
                self.variables.expanded(node, generation, got.entries, got.more, got.error)

        def failed(exc: Exception) -> None:
            if not self._closed:
                self.variables.expand_failed(node, generation, describe_error(exc))

        self.commands.send(lambda: debug.expand(conn, sid, handle), shown, failed)

    # -- state on screen ---------------------------------------------------------------------

    def _refresh(self) -> None:
        phase = self.state.phase
        for action in (self.action_step, self.action_step_into, self.action_step_out,
                       self.action_continue):
            action.setEnabled(phase == Phase.PAUSED)
        self.action_stop.setEnabled(phase in (Phase.PAUSED, Phase.RUNNING))
        self.action_restart.setEnabled(phase != Phase.CONNECTING)
        for button in (self.open_page_button, self.copy_url_button):
            button.setEnabled(bool(self.page_url) and phase != Phase.CLOSED)
        self.status_label.setText(self.state.status_text())
