"""A debug-mode check that no hub call runs on the GUI thread.

Every hub call blocks, so one made on the GUI thread freezes the window for as long as the
hub takes (seconds on a slow network). The console's code reaches the hub only through
:mod:`console_app.tasks`; this check catches a screen that calls the client directly. It is
off unless ``WEBJOBS_CONSOLE_CHECK_THREADS=1`` (the console's tests turn it on) and costs
nothing then. A call counts as the GUI's when it is on the main thread and a console
module that uses Qt is on the stack: the plain-Python modules below (the client, the
screens' state; an import contract keeps them Qt-free) block by design and are run
through the tasks, and a test or a script calling them on its main thread is no GUI.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

_ENV = "WEBJOBS_CONSOLE_CHECK_THREADS"
# The console's Qt-free modules (pyproject.toml's import contract lists the same; a test
# keeps the two equal).
PLAIN_MODULES = (
    "console_app.client",
    "console_app.debugger.hover",
    "console_app.debugger.state",
    "console_app.editor.catalog",
    "console_app.editor.completion",
    "console_app.editor.diffing",
    "console_app.editor.header_check",
    "console_app.editor.hover",
    "console_app.editor.hub_context",
    "console_app.history.fmt",
    "console_app.history.metrics_data",
    "console_app.run.failure_text",
    "console_app.shell.connecting",
)


def _plain(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in PLAIN_MODULES)


class HubCallOnGuiThread(AssertionError):
    """A hub call made on the GUI thread (only raised while the check is on)."""


_excused = threading.local()


def checking() -> bool:
    return os.environ.get(_ENV) == "1"


@contextlib.contextmanager
def blocking_on_purpose() -> Iterator[None]:
    """For the few calls that block the GUI thread by design, each bounded: the revoke at
    quit (the windows are gone), a script's set-up before any window (screenshots)."""
    before = getattr(_excused, "on", False)
    _excused.on = True
    try:
        yield
    finally:
        _excused.on = before


def check_not_gui_thread(path: str) -> None:
    if not checking() or threading.current_thread() is not threading.main_thread():
        return
    if getattr(_excused, "on", False):
        return
    frame = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.startswith("console_app.") and not _plain(module):
            raise HubCallOnGuiThread(
                f"{module} called the hub ({path}) on the GUI thread: run it through "
                "console_app.tasks")
        frame = frame.f_back  # type: ignore[assignment]
