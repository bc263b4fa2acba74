"""The editor window: one job's code, run and debugged without leaving it.

``EditorWindow(session, name)`` loads the job's code and the version it is at, and from
``/available`` the hub's approved modules and limit maxima. Beside the code sits the
parameters panel (a JSON object, remembered per hub and job, else the job's last run's);
docked below are the run pane (console and result) and the problems list.

- Ctrl+S saves with the version the editor opened (``baseVersion``); when the job changed
  on the hub since, the hub refuses (HUB-010) and a :class:`ConflictDialog` offers to
  compare or overwrite.
- Ctrl+Enter or F5 runs the editor's text once (``/execute``), Shift+F5 stops it.
- Debug (Ctrl+Shift+D) asks the main window for the debugger (``nav.sig_open_debugger``)
  with the panel's parameters plus ``DEBUG_BREAKPOINTS_KEY`` (the editor's breakpoints)
  and ``DEBUG_CODE_KEY`` (the unsaved text, only when modified).
- As the owner types, the hub's ``/check`` marks syntax errors and header warnings; a
  declared secret the hub has no value for is warned about.

Closing with unsaved changes asks Save / Discard / Cancel."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QToolBar,
    QWidget,
)

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.client.errors import describe_error
from console_app.editor import HubContext, JobEditor, VersionsDialog, context_from_available
from console_app.editor.conflict import ConflictDialog
from console_app.editor.header_check import HeaderProblem
from console_app.editor.hub_calls import (
    LoadedJob,
    last_run_params,
    load_job,
    missing_secret_problems,
    save_job,
)
from console_app.editor.hub_versions import open_versions, version_fetcher
from console_app.editor.live_check import CodeProblem, LiveChecker
from console_app.editor.problems import ProblemsList
from console_app.editor.run_pane import RunPane
from console_app.run.params import ParamsPanel, has_masked, remember_params, remembered_params
from console_app.session import DEBUG_BREAKPOINTS_KEY, DEBUG_CODE_KEY, HubSession
from console_app.tasks import Latest
from console_app.widgets import close_key, fit_on_screen
from shared.errors import JobChanged, JobDoesNotParse

__all__ = ["DEBUG_BREAKPOINTS_KEY", "DEBUG_CODE_KEY", "EditorWindow"]

log = logging.getLogger(__name__)

RUN_KEYS = ("Ctrl+Return", "Ctrl+Enter", "F5")  # F5 runs, in every window that runs
MASKED_NOTE = ("History keeps secret-looking values only masked (\"***\"): type the real "
               "ones before running")


def hub_context(conn: HubConnection) -> HubContext:
    """The approved modules and limit maxima ``/available`` carries (blocking)."""
    return context_from_available(api.available_shape(conn))


def _ask_unsaved(parent: QWidget, name: str) -> str:
    buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
               | QMessageBox.StandardButton.Cancel)
    answer = QMessageBox.question(parent, "Unsaved changes",
                                  f"Save the changes to {name}?", buttons)
    return {QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard"}.get(answer, "cancel")


def _as_problems(found: list[HeaderProblem]) -> list[CodeProblem]:
    return [CodeProblem(p.line, p.column, p.message, "warning", "header") for p in found]


class EditorWindow(QMainWindow):
    sig_loaded = Signal()
    sig_context_loaded = Signal()          # the hub's modules and maxima reached the editor
    sig_saved = Signal()
    sig_save_failed = Signal(str)          # the failure's code
    sig_message = Signal(str, bool)        # text, is_error
    sig_problems_changed = Signal()        # the problems list was redrawn
    sig_params_loaded = Signal()

    def __init__(self, session: HubSession, name: str, parent: QWidget | None = None,
                 ask_unsaved: Callable[[QWidget, str], str] | None = None) -> None:
        super().__init__(parent)
        self.session, self.name = session, name
        self.ask_unsaved = ask_unsaved or _ask_unsaved
        self.base_version: int | None = None
        self.loaded = False
        self.windows: list[QWidget] = []
        self.conflict: ConflictDialog | None = None
        self._close_after_save = self._saving = False
        self._pending_line: int | None = None
        self._hub_problems: list[CodeProblem] = []
        self._secret_problems: list[CodeProblem] = []
        self._run_problems: list[CodeProblem] = []
        self._declared: list[str] | None = None
        # Answers that arrive after the window closed (and its widgets are gone) are
        # dropped: every callback below is tied to this.
        self._life = Latest()
        self._life.start()
        self._build()
        self.close_action = close_key(self)
        for sequence in self.close_action.shortcuts():  # Scintilla would take Ctrl+W
            self.editor.add_key_action(sequence, self.close_action.trigger)
        self._update_title()
        fit_on_screen(self, QSize(1000, 680))  # on the main window's screen, whole
        self.load()
        self.load_context()

    def _build(self) -> None:
        self.editor = JobEditor(self)
        self.params_panel = ParamsPanel(self)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.editor)
        split.addWidget(self.params_panel)
        split.setStretchFactor(0, 3)
        split.setSizes([720, 260])
        self.setCentralWidget(split)
        self.run_pane = RunPane(self.session, self.name, self)
        self.problems = ProblemsList(self)
        self.run_dock = self._dock("Run", self.run_pane)
        self.problems_dock = self._dock("Problems", self.problems)
        self.tabifyDockWidget(self.run_dock, self.problems_dock)
        self.run_dock.raise_()
        self.checker = LiveChecker(self.session, self)
        self.editor.sig_modified_changed.connect(lambda _m: self._update_title())
        self.editor.sig_text_changed.connect(lambda: self.checker.schedule(self.editor.text()))
        self.editor.sig_header_checked.connect(self._header_checked)
        self.checker.sig_checked.connect(self._hub_checked)
        self.checker.sig_unavailable.connect(
            lambda why: log.info("no live check from the hub: %s", why))
        self.run_pane.sig_finished.connect(self._run_finished)
        self.run_pane.sig_go_to_line.connect(self.go_to_line)
        self.problems.sig_go_to.connect(self.editor.go_to_line)
        self._build_actions()

    def _dock(self, title: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title.lower()}-dock")
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        dock.setWidget(widget)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        return dock

    def _build_actions(self) -> None:
        bar = QToolBar("Job")
        bar.setObjectName("job-toolbar")
        self.addToolBar(bar)
        self.actions_by_name: dict[str, QAction] = {}
        for key, text, keys, slot in (
                ("save", "Save", [QKeySequence(QKeySequence.StandardKey.Save)], self.save),
                ("run", "Run", [QKeySequence(k) for k in RUN_KEYS], self.run),
                ("stop", "Stop", [QKeySequence("Shift+F5")], self.run_pane.stop),
                ("debug", "Debug…", [QKeySequence("Ctrl+Shift+D")], self.debug),
                ("versions", "Versions", [], self.versions)):
            action = QAction(text, self)
            action.setShortcuts(keys)
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            if keys:
                native = keys[0].toString(QKeySequence.SequenceFormat.NativeText)
                action.setToolTip(f"{text} ({native})")
            action.triggered.connect(lambda _c=False, s=slot: s())
            for sequence in keys:  # the code has focus most of the time: keep them there
                self.editor.add_key_action(sequence, action.trigger)
            bar.addAction(action)
            self.actions_by_name[key] = action

    def _update_title(self) -> None:
        mark = " •" if self.editor.is_modified() else ""
        self.setWindowTitle(f"{self.name}{mark} — WebJobs editor")

    # -- loading -------------------------------------------------------------------------

    def load(self) -> None:
        conn, name = self.session.conn, self.name
        self.session.tasks.run(lambda: load_job(conn, name), self._while_open(self._loaded),
                               self._while_open(lambda exc: self.notify(
                                   f"Could not load {self.name}: {describe_error(exc)}", True)))

    def _loaded(self, job: LoadedJob) -> None:
        self.base_version = job.version
        self.editor.set_text(job.code)
        self.editor.set_saved()
        self.loaded = True
        self._update_title()
        self.checker.check_now(job.code)
        if self._pending_line is not None:
            self.editor.go_to_line(self._pending_line)
            self._pending_line = None
        if not self.params_panel.editor.toPlainText().strip():
            self._load_params()
        self.sig_loaded.emit()

    def _load_params(self) -> None:
        remembered = remembered_params(self.session.url, self.name)
        if remembered:
            self.params_panel.set_params(remembered,
                                         "The parameters of your last run from this console.")
            self.sig_params_loaded.emit()
            return
        conn, name = self.session.conn, self.name
        self.session.tasks.run(lambda: last_run_params(conn, name),
                               self._while_open(self._last_run_params),
                               lambda exc: log.info("no last run's parameters: %s",
                                                    describe_error(exc)))

    def _last_run_params(self, params: dict[str, Any] | None) -> None:
        if params and self.params_panel.is_empty():
            note = MASKED_NOTE if has_masked(params) else "From the job's last run."
            self.params_panel.set_params(params, note)
        self.sig_params_loaded.emit()

    def go_to_line(self, line: int) -> None:
        """Put the caret on ``line`` (1-based), once the code is there."""
        if not self.loaded:
            self._pending_line = line
            return
        self.editor.go_to_line(line)

    def load_context(self) -> None:
        """The hub's approved modules and limit maxima, for completion and header checks."""
        conn = self.session.conn
        self.session.tasks.run(lambda: hub_context(conn),
                               self._while_open(self._context_loaded), self._context_failed)

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

    # -- problems ------------------------------------------------------------------------

    def _header_checked(self, _found: list[HeaderProblem]) -> None:
        declared = self.editor.declared_secrets()
        if declared != self._declared:
            self._declared = declared
            conn, code = self.session.conn, self.editor.text()
            self.session.tasks.run(lambda: missing_secret_problems(conn, code, declared),
                                   self._while_open(self._secrets_checked),
                                   lambda exc: log.info("secrets not checked: %s",
                                                        describe_error(exc)))
        self._show_problems()

    def _secrets_checked(self, found: list[CodeProblem]) -> None:
        self._secret_problems = found
        self._show_problems()

    def _hub_checked(self, found: list[CodeProblem]) -> None:
        self._hub_problems = found
        if not any(p.source == "syntax" for p in found):
            self._drop_stale_syntax_marks()
        self._show_problems()

    def _drop_stale_syntax_marks(self) -> None:
        """A save's or a run's SyntaxError is stale once the hub finds none in the text
        as it is now; a run's other failures stay until the next run."""
        marked = self.editor.error_messages()
        if marked and all("SyntaxError" in m for m in marked):
            self.editor.clear_errors()
        self._run_problems = [p for p in self._run_problems if "SyntaxError" not in p.message]

    def _show_problems(self) -> None:
        local = _as_problems(self.editor.header_problems())
        seen = {(p.line, p.message) for p in local}
        hub = [p for p in self._hub_problems if (p.line, p.message) not in seen]
        errors = [p for p in hub if p.is_error]
        warnings = [p for p in hub if not p.is_error] + self._secret_problems
        self.editor.set_live_problems(
            [HeaderProblem(p.line, p.column, p.message) for p in errors],
            [HeaderProblem(p.line, p.column, p.message) for p in warnings])
        self.problems.set_problems(local + errors + warnings + self._run_problems)
        count_errors, count_warnings = self.problems.counts()
        self.problems_dock.setWindowTitle(
            f"Problems ({_counted(count_errors, 'error')}, {_counted(count_warnings, 'warning')})"
            if self.problems.problems else "Problems")
        self.sig_problems_changed.emit()

    # -- saving --------------------------------------------------------------------------

    def save(self, overwrite: bool = False) -> None:
        """Save, unless the job changed on the hub since it was opened (``overwrite``:
        save over whatever the hub has)."""
        if self._saving:
            return
        self._saving = True
        conn, name, text = self.session.conn, self.name, self.editor.text()
        base = None if overwrite else self.base_version
        self.session.tasks.run(lambda: save_job(conn, name, text, base),
                               self._while_open(lambda version: self._saved(text, version)),
                               self._while_open(self._save_failed))

    def _saved(self, text: str, version: int | None) -> None:
        self._saving = False
        self.base_version = version
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
        if isinstance(exc, JobChanged):
            self.notify(f"Not saved: {self.name} changed on the hub since you opened it",
                        True)
            self._ask_conflict(exc.current_version)
        else:
            if isinstance(exc, JobDoesNotParse) and exc.line:
                self.editor.clear_errors()
                self.editor.mark_error(int(exc.line), exc.column, exc.message)
            self.notify(f"Not saved: {describe_error(exc)}", True)
        self.sig_save_failed.emit(getattr(exc, "code", ""))

    def _ask_conflict(self, current: int | None) -> None:
        if self.conflict is not None:
            self.conflict.close()
        fetch = version_fetcher(self.session, self.name)
        dialog = ConflictDialog(self.name, self.base_version, current, self.editor.text(),
                                lambda n, done: fetch(n, self._while_open(done)), self)
        dialog.sig_overwrite.connect(lambda: self.save(overwrite=True))
        self.conflict = dialog
        fit_on_screen(dialog, QSize(640, 220), self)
        dialog.show()

    # -- run, debug, versions ------------------------------------------------------------

    def run_params(self) -> dict[str, Any] | None:
        """The panel's parameters, or None (said in the status bar) when they cannot run."""
        params = self.params_panel.params()
        if params is None:
            self.notify("Not run: the parameters are not a JSON object", True)
        elif has_masked(params):
            self.notify(f"Not run: {MASKED_NOTE}", True)
            return None
        return params

    def run(self) -> RunPane | None:
        params = self.run_params()
        if params is None:
            return None
        remember_params(self.session.url, self.name, params)
        self._run_problems = []
        self._show_problems()
        self.run_dock.show()
        self.run_dock.raise_()
        self.run_pane.start(self.editor.text(), params, self.editor.is_modified())
        return self.run_pane

    def _run_finished(self, _status: str) -> None:
        failure = self.run_pane.failure
        if failure is None or not failure.line:  # the hub sends a failure's line with it
            return
        self.editor.mark_error(failure.line, failure.column, failure.error)
        self._run_problems = [CodeProblem(failure.line, failure.column or 1,
                                          f"{failure.code}: {failure.error}", "error", "run")]
        self._show_problems()

    def debug_params(self) -> dict[str, Any] | None:
        params = self.run_params()
        if params is None:
            return None
        params = dict(params)
        params[DEBUG_BREAKPOINTS_KEY] = self.editor.breakpoints()
        if self.editor.is_modified():
            params[DEBUG_CODE_KEY] = self.editor.text()
        return params

    def debug(self) -> None:
        params = self.debug_params()
        if params is not None:
            self.session.nav.sig_open_debugger.emit(self.name, params)

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

    def _while_open(self, callback: Callable[[Any], object]) -> Callable[[Any], None]:
        return self._life.current().wrap(callback)

    def _keep(self, window: QWidget) -> None:
        self.windows.append(window)
        window.destroyed.connect(lambda *_: self.windows.remove(window)
                                 if window in self.windows else None)

    def _closing(self, event: QCloseEvent) -> None:
        self.run_pane.stop()
        self.checker.stop()
        self._life.supersede()
        super().closeEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.editor.is_modified() or self._close_after_save:
            self._closing(event)
            return
        answer = self.ask_unsaved(self, self.name)
        if answer == "discard":
            self._closing(event)
            return
        event.ignore()
        if answer == "save":
            self._close_after_save = True  # closes once the hub says it is saved
            self.save()


def __getattr__(name: str) -> Any:
    # The screenshot tool's screens for this window, imported only when it asks.
    if name == "SCREENSHOTS":
        from console_app.editor.shots import SCREENSHOTS
        return SCREENSHOTS
    raise AttributeError(name)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
