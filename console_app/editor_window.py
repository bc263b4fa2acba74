"""The editor window: one job's code in the JobEditor, with Save, Run, Debug and Versions.

``EditorWindow(session, name)`` loads ``/<name>/code``, and from ``/available`` the
hub's approved modules (``require("`` completes them) and limit maxima (a header limit
above one is flagged). Ctrl+S saves (``POST /save``;
a ``JobDoesNotParse`` failure is marked at its line), F5 runs the *unsaved* text once
through ``/execute`` in a :class:`RunDialog`, Debug asks the main window for the
debugger (``nav.sig_open_debugger``) with the job's parameters plus two keys:

- ``DEBUG_BREAKPOINTS_KEY`` (``"__breakpoints__"``): the editor's breakpoint lines;
- ``DEBUG_CODE_KEY`` (``"__code__"``): the unsaved text, present only when modified.

The debugger takes both out before the parameters reach the job. Closing with unsaved
changes asks Save / Discard / Cancel."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMessageBox, QToolBar, QWidget

from console_app.client import jobs as api
from console_app.client.connection import API, HubConnection
from console_app.client.errors import describe_error
from console_app.editor import HubContext, JobEditor, VersionsDialog, context_from_available
from console_app.run.dialog import RunDialog
from console_app.run.params import remembered_params
from console_app.session import DEBUG_BREAKPOINTS_KEY, DEBUG_CODE_KEY, HubSession
from shared.errors import JobDoesNotParse

__all__ = ["DEBUG_BREAKPOINTS_KEY", "DEBUG_CODE_KEY", "EditorWindow", "open_versions"]

log = logging.getLogger(__name__)

Notify = Callable[[str, bool], None]


def hub_context(conn: HubConnection) -> HubContext:
    """The approved modules and limit maxima ``/available`` carries (blocking)."""
    return context_from_available(conn.get(f"{API}/available"))


def open_versions(session: HubSession, name: str, current_text: str, parent: QWidget | None,
                  on_restored: Callable[[], None], notify: Notify) -> VersionsDialog:
    """The editor package's VersionsDialog for ``name``, fed from the hub off the GUI
    thread; Restore saves that version again, then ``on_restored()``."""
    conn, tasks = session.conn, session.tasks
    def fetch(n: int, done: Callable[[str | Exception], None]) -> None:
        tasks.run(lambda: api.version_code(conn, name, n), done, done)

    dialog = VersionsDialog([], fetch, current_text, job_name=name, parent=parent)

    def restored(number: int) -> None:
        notify(f"Restored version {number} of {name}", False)
        on_restored()

    dialog.sig_restore_requested.connect(lambda n: tasks.run(
        lambda: api.restore(conn, name, n), lambda _job: restored(n),
        lambda exc: notify(f"Could not restore version {n}: {describe_error(exc)}", True)))
    tasks.run(lambda: api.versions(conn, name), dialog.set_versions,
              lambda exc: notify(f"Could not list versions: {describe_error(exc)}", True))
    dialog.show()
    return dialog


def _ask_unsaved(parent: QWidget, name: str) -> str:
    buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
               | QMessageBox.StandardButton.Cancel)
    answer = QMessageBox.question(parent, "Unsaved changes",
                                  f"Save the changes to {name}?", buttons)
    return {QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard"}.get(answer, "cancel")


class EditorWindow(QMainWindow):
    sig_loaded = Signal()
    sig_context_loaded = Signal()          # the hub's modules and maxima reached the editor
    sig_saved = Signal()
    sig_save_failed = Signal(str)          # the failure's code
    sig_message = Signal(str, bool)        # text, is_error

    def __init__(self, session: HubSession, name: str, parent: QWidget | None = None,
                 ask_unsaved: Callable[[QWidget, str], str] | None = None) -> None:
        super().__init__(parent)
        self.session, self.name = session, name
        self.ask_unsaved = ask_unsaved or _ask_unsaved
        self.editor = JobEditor(self)
        self.setCentralWidget(self.editor)
        self.windows: list[QWidget] = []
        self._close_after_save = False
        self._saving = False
        self.editor.sig_modified_changed.connect(lambda _m: self._update_title())
        self._build_actions()
        self._update_title()
        self.resize(900, 700)
        self.load()
        self.load_context()

    def _build_actions(self) -> None:
        bar = QToolBar("Job")
        self.addToolBar(bar)
        self.actions_by_name: dict[str, QAction] = {}
        for key, text, shortcut, slot in (
                ("save", "Save", QKeySequence.StandardKey.Save, self.save),
                ("run", "Run", QKeySequence("F5"), self.run),
                ("debug", "Debug…", None, self.debug),
                ("versions", "Versions", None, self.versions)):
            action = QAction(text, self)
            if shortcut is not None:
                action.setShortcut(shortcut)
            action.triggered.connect(lambda _c=False, s=slot: s())
            bar.addAction(action)
            self.actions_by_name[key] = action

    def _update_title(self) -> None:
        mark = " •" if self.editor.is_modified() else ""
        self.setWindowTitle(f"{self.name}{mark} — WebJobs editor")

    # -- loading and saving --------------------------------------------------------------

    def load(self) -> None:
        self.session.tasks.run(lambda: api.code(self.session.conn, self.name), self._loaded,
                               lambda exc: self.notify(
                                   f"Could not load {self.name}: {describe_error(exc)}", True))

    def _loaded(self, text: str) -> None:
        self.editor.set_text(text)
        self.editor.set_saved()
        self._update_title()
        self.sig_loaded.emit()

    def load_context(self) -> None:
        """The hub's approved modules and limit maxima, for completion and header checks."""
        conn = self.session.conn
        self.session.tasks.run(lambda: hub_context(conn), self._context_loaded,
                               self._context_failed)

    def _context_loaded(self, context: HubContext) -> None:
        if context.modules is not None:
            self.editor.set_approved_modules(context.modules)
        if context.maxima is not None:
            self.editor.set_limit_maxima(context.maxima)
        self.sig_context_loaded.emit()

    def _context_failed(self, exc: Exception) -> None:
        # Not worth a message of its own: the editor works without them, and a hub that
        # cannot answer /available will not give the code either (that load says why).
        log.info("no modules or limit maxima from the hub: %s", describe_error(exc))

    def save(self) -> None:
        if self._saving:
            return
        self._saving = True
        text = self.editor.text()
        self.session.tasks.run(lambda: api.save(self.session.conn, self.name, text),
                               lambda _job: self._saved(text), self._save_failed)

    def _saved(self, text: str) -> None:
        self._saving = False
        self.editor.clear_errors()
        if self.editor.text() == text:  # typing during the save keeps it modified
            self.editor.set_saved()
        self._update_title()
        self.notify(f"Saved {self.name}", False)
        self.session.nav.sig_jobs_changed.emit()
        self.sig_saved.emit()
        if self._close_after_save:
            self.close()

    def _save_failed(self, exc: Exception) -> None:
        self._saving = self._close_after_save = False
        if isinstance(exc, JobDoesNotParse) and exc.line:
            self.editor.clear_errors()
            self.editor.mark_error(int(exc.line), exc.column, exc.message)
        self.notify(f"Not saved: {describe_error(exc)}", True)
        self.sig_save_failed.emit(getattr(exc, "code", ""))

    # -- run, debug, versions ------------------------------------------------------------

    def run(self) -> RunDialog:
        params = remembered_params(self.session.url, self.name)
        dialog = RunDialog(self.session, self.name, params, source=self.editor.text(),
                           from_editor=True)
        dialog.sig_finished.connect(lambda _s: self._mark_run_error(dialog))
        self._keep(dialog)
        dialog.show()
        return dialog

    def _mark_run_error(self, dialog: RunDialog) -> None:
        failure = dialog.failure
        if failure is None:
            return
        if failure.line:  # the hub sends a failure's line and column with it
            self.editor.mark_error(failure.line, failure.column, failure.error)

    def debug_params(self) -> dict[str, Any]:
        params: dict[str, Any] = dict(remembered_params(self.session.url, self.name))
        params[DEBUG_BREAKPOINTS_KEY] = self.editor.breakpoints()
        if self.editor.is_modified():
            params[DEBUG_CODE_KEY] = self.editor.text()
        return params

    def debug(self) -> None:
        self.session.nav.sig_open_debugger.emit(self.name, self.debug_params())

    def versions(self) -> VersionsDialog:
        dialog = open_versions(self.session, self.name, self.editor.text(), self,
                               self._restored, self.notify)
        self._keep(dialog)
        return dialog

    def _restored(self) -> None:
        self.session.nav.sig_jobs_changed.emit()
        self.load()

    # -- plumbing ------------------------------------------------------------------------

    def notify(self, text: str, error: bool) -> None:
        """Non-modal: the status bar (errors stay until the next message)."""
        self.statusBar().showMessage(text, 0 if error else 5000)
        self.sig_message.emit(text, error)

    def _keep(self, window: QWidget) -> None:
        self.windows.append(window)
        window.destroyed.connect(lambda *_: self.windows.remove(window)
                                 if window in self.windows else None)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.editor.is_modified() or self._close_after_save:
            super().closeEvent(event)
            return
        answer = self.ask_unsaved(self, self.name)
        if answer == "discard":
            super().closeEvent(event)
            return
        event.ignore()
        if answer == "save":
            self._close_after_save = True  # closes once the hub says it is saved
            self.save()
