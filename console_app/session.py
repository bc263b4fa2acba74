"""What every window and page of the console is handed: the hub and the ways out.

A page never builds its own connection or thread. It gets a :class:`HubSession`,
calls the hub through ``session.tasks.run(lambda: session.conn.get(...), ...)``
and asks for other screens through ``session.nav``, which the main window
answers. So pages stay independent of each other and testable alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from console_app.client.connection import HubConnection
from console_app.shell.connecting import HubInfo
from console_app.tasks import TaskManager

# sig_open_debugger's params may carry these two, for the debugger window only (it
# takes them out before the rest reach the job): the editor's breakpoint lines, and
# its unsaved text when there is some.
DEBUG_BREAKPOINTS_KEY = "__breakpoints__"
DEBUG_CODE_KEY = "__code__"


class Navigator(QObject):
    """Requests to open another screen; the main window connects each one."""

    sig_run_job = Signal(str, dict)          # name, params: the run dialog
    sig_open_editor = Signal(str)            # name ('' for a new job)
    sig_open_debugger = Signal(str, dict)    # name, params: a debug session
    sig_replay_run = Signal(str)             # run id: debug a recorded run
    sig_open_history = Signal(dict)          # filters: {"job": ..., "schedule": ...}
    sig_open_schedules = Signal(str)         # job name ('' for all)
    sig_jobs_changed = Signal()              # a save, upload, delete or restore happened
    sig_run_ended = Signal(str)              # job name: a run this console watched ended


@dataclass
class HubSession:
    conn: HubConnection
    tasks: TaskManager
    nav: Navigator = field(default_factory=Navigator)
    # The health, the caller and the store, as read when connecting (none of them
    # for a session made without signing in).
    info: HubInfo = field(default_factory=HubInfo)

    @property
    def url(self) -> str:
        return self.conn.url
