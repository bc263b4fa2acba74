"""The windows that Navigator signals open, imported only when first asked for.

Each screen is named by module and attribute in :data:`SCREENS`, so a window
written later is picked up without touching the shell; until it exists, asking
for it shows a non-modal note instead of failing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QWidget

from console_app.client.errors import describe_error
from console_app.session import HubSession
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


class ScreenOpener(QObject):
    """Opens screens for one session and keeps them alive until they close."""

    def __init__(self, session: HubSession, notify: Callable[[str], None],
                 parent_window: QWidget | None = None,
                 screens: dict[str, ScreenSpec] | None = None) -> None:
        super().__init__(parent_window)
        self._session = session
        self._notify = notify
        self._parent = parent_window
        self._screens = screens if screens is not None else SCREENS
        self.open_windows: list[QWidget] = []

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

    def open_editor(self, name: str) -> QWidget | None:
        return self.open("editor", name)

    def open_debugger(self, name: str, params: dict[str, Any]) -> QWidget | None:
        return self.open("debugger", name, params)

    def replay_run(self, run_id: str) -> QWidget | None:
        return self.open("replay", run_id)
