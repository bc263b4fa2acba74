"""The windows that Navigator signals open, imported only when first asked for.

Each screen is named by module and attribute in :data:`SCREENS`, so a window
written later is picked up without touching the shell; until it exists, asking
for it shows a non-modal note instead of failing."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QWidget

from console_app.client.errors import describe_error
from console_app.session import HubSession, Navigator
from console_app.shell.pages import load_attr

Arguments = tuple[tuple[Any, ...], dict[str, Any]]


def _positional(*args: Any) -> Arguments:
    return args, {}


def _replay(run_id: str) -> Arguments:
    return ("",), {"replay_run_id": run_id}


@dataclass(frozen=True)
class ScreenSpec:
    title: str    # for messages: "the run dialog"
    module: str
    attr: str     # called as attr(session, *args, **kwargs) with what ``adapt`` makes
    adapt: Callable[..., Arguments] = _positional  # the signal's arguments -> the call's


SCREENS: dict[str, ScreenSpec] = {
    "run": ScreenSpec("the run dialog", "console_app.run.dialog", "RunDialog"),
    "editor": ScreenSpec("the editor", "console_app.editor_window", "EditorWindow"),
    "debugger": ScreenSpec("the debugger", "console_app.debugger.window", "DebuggerWindow"),
    # A recorded run replayed under the debugger (POST /debug/replay/<runId>).
    "replay": ScreenSpec("the debugger (replay)", "console_app.debugger.window",
                         "DebuggerWindow", _replay),
}


# Each session's opener, so a page can ask for "the editor at line N" with only its
# session in hand (see :func:`open_editor_at`).
_OPENERS: weakref.WeakKeyDictionary[Navigator, ScreenOpener] = weakref.WeakKeyDictionary()


def open_editor_at(session: HubSession, name: str, line: int | None = None) -> QWidget | None:
    """Open (or raise) the editor of ``name`` and put the caret on ``line`` (1-based).

    For error lines in runs and history. Without a main window (a page alone in a test)
    the plain ``sig_open_editor`` is emitted and the line is left out."""
    opener = _OPENERS.get(session.nav)
    if opener is None:
        session.nav.sig_open_editor.emit(name)
        return None
    return opener.open_editor(name, line)


def raise_window(window: QWidget) -> None:
    """Bring a window that is already open to the front, restoring it if minimised."""
    if window.isMinimized():
        window.showNormal()
    window.raise_()
    window.activateWindow()


class ScreenOpener(QObject):
    """Opens screens for one session and keeps them alive until they close; one editor
    per job (asking again raises the open one, so two editors never race to save)."""

    def __init__(self, session: HubSession, notify: Callable[[str], None],
                 parent_window: QWidget | None = None,
                 screens: dict[str, ScreenSpec] | None = None) -> None:
        super().__init__(parent_window)
        self._session = session
        self._notify = notify
        self._parent = parent_window
        self._screens = screens if screens is not None else SCREENS
        self.open_windows: list[QWidget] = []
        _OPENERS[session.nav] = self

    def open(self, key: str, *args: Any) -> QWidget | None:
        spec = self._screens[key]
        factory, why = load_attr(spec.module, spec.attr)
        if not callable(factory):
            self._notify(f"Cannot open {spec.title}: {why}")
            return None
        try:
            positional, keywords = spec.adapt(*args)
            window = factory(self._session, *positional, **keywords)
        except Exception as err:  # a bad window must not take the main one down
            self._notify(f"Cannot open {spec.title}: {describe_error(err)}")
            return None
        if not isinstance(window, QWidget):
            return None
        self._keep(window)
        window.show()  # show(), never exec(): the main window stays usable
        window.raise_()
        return window

    def _keep(self, window: QWidget) -> None:
        # Python holds the only reference to a parentless window: keep it until it goes,
        # and let closing it free it (each request opens a fresh window).
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.open_windows.append(window)
        window.destroyed.connect(lambda *_: self._drop(window))

    def _drop(self, window: QWidget) -> None:
        if window in self.open_windows:
            self.open_windows.remove(window)

    def close_all(self) -> None:
        for window in list(self.open_windows):
            window.close()
        self.open_windows.clear()

    # -- one method per Navigator signal that opens a window --------------------------

    def run_job(self, name: str, params: dict[str, Any]) -> QWidget | None:
        return self.open("run", name, params)

    def open_editor(self, name: str, line: int | None = None) -> QWidget | None:
        window = self.editor_of(name) if name else None
        if window is None:
            window = self.open("editor", name)
        else:
            raise_window(window)
        go_to = getattr(window, "go_to_line", None)
        if line and callable(go_to):
            go_to(line)
        return window

    def editor_of(self, name: str) -> QWidget | None:
        """The open editor window of job ``name``, if there is one."""
        spec = self._screens["editor"]
        for window in self.open_windows:
            if (type(window).__name__ == spec.attr and getattr(window, "name", None) == name
                    and window.isVisible()):
                return window
        return None

    def open_debugger(self, name: str, params: dict[str, Any]) -> QWidget | None:
        return self.open("debugger", name, params)

    def replay_run(self, run_id: str) -> QWidget | None:
        return self.open("replay", run_id)
