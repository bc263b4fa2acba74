"""The run dialog: one run of a job, its console live, then its result or failure.

``RunDialog(session, name, params, source=None)`` runs the saved job ``name``; with
``source`` it runs that unsaved code once through ``/execute`` (ad-hoc files and the
editor's unsaved text). Console lines arrive through ``enableLogger=1`` as the job
prints them. Stop asks the hub to end the run (``POST /<jobId>/stop``, the id found
in ``/running``) and hangs up if that is not possible; the hub stops a run whose
client went away, so closing the dialog mid-run stops it too."""

from __future__ import annotations

import html
import json
import time
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFontMetrics, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from console_app.client import jobs
from console_app.client.connection import CancelToken
from console_app.client.errors import describe_error
from console_app.client.jobs import RunningRun
from console_app.run.console import ConsoleModel, console_list_view
from console_app.run.failure_text import failure_html
from console_app.run.result import ResultView, SavePicker
from console_app.session import HubSession
from console_app.shell.screens import open_editor_at
from console_app.tasks import Latest
from console_app.widgets import fit_on_screen
from shared.errors import WebJobsError, error_class_for
from shared.ndjson import Failure, LogLine, MetaData, Payload, StreamEvent

STOP_GRACE_MS = 5000   # after a stop request, hang up if the hub has not ended the stream


def pick_run(runs: list[RunningRun], name: str, source: str, started_ago_s: float
             ) -> RunningRun | None:
    """Of the runs in flight, the one this dialog started: same job and source, and
    begun closest to when the dialog started it."""
    mine = [r for r in runs if r.job_name == name and r.source == source]
    return min(mine, key=lambda r: abs(r.runtime / 1000 - started_ago_s), default=None)


# A mark is drawn only when the label's font has it: an emoji such as an hourglass is
# missing from common desktop fonts and would show as an empty box.
STATUS_MARKS = {"running": "●", "success": "✔", "failed": "✖", "stopped": "■",
                "stopping": "■", "error": "✖"}
STATUS_WORDS = {"stopping": "stopping…", "running": "running…"}


def status_text(status: str, metrics: QFontMetrics) -> str:
    """``✔ success``, or the bare word when the font cannot draw the mark."""
    word = STATUS_WORDS.get(status, status)
    mark = STATUS_MARKS.get(status, "")
    return f"{mark} {word}" if mark and metrics.inFontUcs4(ord(mark)) else word


def heading_subject(name: str, has_source: bool, unsaved: bool) -> str:
    """What runs: a saved job by name, an editor's text (``unsaved`` only when the
    editor says its text differs from the saved job), or ad-hoc code."""
    if not name:
        return "ad-hoc code"
    if not has_source:
        return html.escape(name)
    return f"{'unsaved code' if unsaved else 'the editor’s code'} of {html.escape(name)}"


class RunDialog(QDialog):
    sig_line = Signal(object)       # each LogLine, as it arrives
    sig_finished = Signal(str)      # success | failed | stopped | error

    def __init__(self, session: HubSession, name: str, params: dict[str, Any] | None = None,
                 source: str | None = None, parent: QWidget | None = None,
                 save_picker: SavePicker | None = None, from_editor: bool = False,
                 unsaved: bool = False) -> None:
        super().__init__(parent)
        self.session, self.name, self.params = session, name, dict(params or {})
        self.source, self.from_editor, self.unsaved = source, from_editor, unsaved
        self.save_picker = save_picker
        if name:  # an ad-hoc file's run is no job's last run
            self.sig_finished.connect(lambda _outcome: session.nav.sig_run_ended.emit(name))
        self.status = "idle"
        self.meta: MetaData | None = None
        self.failure: Failure | None = None
        self.result_view: ResultView | None = None
        self._cancel: CancelToken | None = None
        self._started = 0.0
        self._stop_requested = False
        self._runs = Latest()
        self.console = ConsoleModel(self)
        self._elapsed = QTimer(self)
        self._elapsed.setInterval(200)
        self._elapsed.timeout.connect(self._show_elapsed)
        self._build()
        self.start()

    # -- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        self.setWindowTitle(f"Run {self.name or 'ad-hoc code'}")
        subject = heading_subject(self.name, self.source is not None, self.unsaved)
        params = html.escape(json.dumps(self.params, ensure_ascii=False)[:200])
        self.heading = QLabel(f"<b>{subject}</b> · params {params}")
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.status_label, self.runtime_label = QLabel(), QLabel()
        self.http_label, self.ref_label = QLabel(), QLabel()
        self.ref_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.failure_label = QLabel()
        self.failure_label.setWordWrap(True)
        self.failure_label.setTextFormat(Qt.TextFormat.RichText)
        self.failure_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.failure_label.linkActivated.connect(self._line_clicked)
        self.failure_label.setStyleSheet("color: #e53935")
        self.failure_label.hide()
        self._lay_out()

    def _lay_out(self) -> None:
        facts = QGridLayout()
        for col, (title, label) in enumerate((("Status", self.status_label),
                                              ("Runtime", self.runtime_label),
                                              ("HTTP", self.http_label),
                                              ("Run", self.ref_label))):
            facts.addWidget(QLabel(f"<small>{title}</small>"), 0, col)
            facts.addWidget(label, 1, col)
        self.console_view = console_list_view(self.console)
        self.result_area = QWidget()
        QVBoxLayout(self.result_area).setContentsMargins(0, 0, 0, 0)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.console_view)
        split.addWidget(self.result_area)
        split.setStretchFactor(1, 2)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.again_button = QPushButton("Run again")
        self.again_button.clicked.connect(self.start)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.stop_button, self.again_button, close):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addLayout(facts)
        layout.addWidget(self.failure_label)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        stop_key = QShortcut(QKeySequence("Shift+F5"), self)
        stop_key.activated.connect(self.stop)
        fit_on_screen(self, QSize(820, 620), self.parentWidget())

    # -- running -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.status == "running"

    def start(self) -> None:
        if self.running:
            return
        self._reset()
        conn, params, source = self.session.conn, self.params, self.source

        def events(cancel: CancelToken) -> Iterable[StreamEvent]:
            if source is None:
                return jobs.run_stream(conn, self.name, params, cancel)
            return jobs.execute_stream(conn, source, params, cancel, self.name,
                                       self.from_editor)

        # Callbacks of an earlier run (its on_done may still be queued) must not touch
        # this one: each is tied to the run it belongs to.
        run = self._runs.start()
        self._cancel = self.session.tasks.stream(events, run.wrap(self._on_event),
                                                 run.wrap(self._on_end), run.wrap(self._on_error))

    def _reset(self) -> None:
        self.console.clear()
        self.meta = self.failure = None
        self._stop_requested = False
        self._clear_result()
        self.failure_label.hide()
        for label in (self.runtime_label, self.http_label, self.ref_label):
            label.setText("")
        self._set_status("running")
        self._started = time.monotonic()
        self._elapsed.start()

    def _set_status(self, status: str) -> None:
        self.status = status
        self.status_label.setText(status_text(status, QFontMetrics(self.status_label.font())))
        self.stop_button.setEnabled(status == "running")
        self.again_button.setEnabled(status != "running")

    def _show_elapsed(self) -> None:
        self.runtime_label.setText(f"{(time.monotonic() - self._started) * 1000:.0f} ms …")

    def _on_event(self, event: StreamEvent) -> None:
        if isinstance(event, LogLine):
            self.console.append(event)
            self.console_view.scrollToBottom()
            self.sig_line.emit(event)
        elif isinstance(event, MetaData):
            self.meta = event
        elif isinstance(event, Payload) and self.meta is not None:
            self._show_result(self.meta, event.data)
        elif isinstance(event, Failure):
            self._show_failure(event)

    def _on_end(self) -> None:
        if self.running:  # the stream closed with neither a result nor a failure
            self._finish("error", "The hub ended the answer without a result")

    def _on_error(self, exc: Exception) -> None:
        if not self.running:
            return
        if isinstance(exc, WebJobsError):
            self._show_failure(Failure(error=exc.message, code=exc.code, ref=exc.ref))
        else:
            self._finish("error", f"Unexpected failure: {describe_error(exc)}")

    def _show_result(self, meta: MetaData, data: bytes) -> None:
        self._elapsed.stop()
        self.runtime_label.setText(f"{meta.runtime} ms")
        self.http_label.setText(str(meta.status))
        self.ref_label.setText(meta.jobId)
        self.result_view = ResultView(meta, data, self.name, self.save_picker)
        layout = self.result_area.layout()
        if layout is not None:
            layout.addWidget(self.result_view)
        self._set_status("success")
        self.sig_finished.emit("success")

    def _line_clicked(self, link: str) -> None:
        if link.startswith("line:") and self.name:
            open_editor_at(self.session, self.name, int(link[5:]))

    def _show_failure(self, failure: Failure) -> None:
        self.failure = failure
        self._elapsed.stop()
        if failure.runtime is not None:
            self.runtime_label.setText(f"{failure.runtime} ms")
        cls = error_class_for(failure.code)
        self.http_label.setText("—" if cls is WebJobsError else str(cls.http_status))
        self.ref_label.setText(f"ref {failure.ref}" if failure.ref else "")
        # A saved job's line is a link that opens its editor there.
        linked = bool(self.name) and self.source is None
        self.failure_label.setText(failure_html(failure, linked))
        self.failure_label.show()
        outcome = "stopped" if self._stop_requested else "failed"
        self._set_status(outcome)
        self.sig_finished.emit(outcome)

    def _finish(self, status: str, message: str) -> None:
        self._elapsed.stop()
        self.failure_label.setText(message)
        self.failure_label.show()
        self._set_status(status)
        self.sig_finished.emit(status)

    def _clear_result(self) -> None:
        if self.result_view is not None:
            self.result_view.setParent(None)
            self.result_view.deleteLater()
            self.result_view = None

    # -- stopping ------------------------------------------------------------------------

    def stop(self) -> None:
        if not self.running or self._stop_requested:
            return
        self._stop_requested = True
        self.stop_button.setEnabled(False)
        self.status_label.setText(status_text("stopping", QFontMetrics(self.status_label.font())))
        conn = self.session.conn
        name = self.name if self.source is None or self.name else "adhoc"
        origin = "http" if self.source is None else ("editor" if self.from_editor else "adhoc")
        started = self._started

        def find_and_stop() -> bool:
            found = pick_run(jobs.running(conn), name, origin, time.monotonic() - started)
            return found is not None and jobs.stop(conn, found.job_id)

        self.session.tasks.run(find_and_stop, self._after_stop_request,
                               lambda _exc: self._hang_up())

    def _after_stop_request(self, stopped: bool) -> None:
        if not stopped:
            self._hang_up()
            return
        # The hub answers the stream with JOB-001 "Stopped"; if that never comes, hang up.
        # A later "Run again" must not be hung up on.
        QTimer.singleShot(STOP_GRACE_MS, self, self._runs.current().wrap(self._hang_up))

    def _hang_up(self) -> None:
        if not self.running:
            return
        if self._cancel is not None:
            self._cancel.cancel()
        self._finish("stopped", "Stopped: the console hung up, so the hub ends the run")

    def _abandon(self) -> None:
        """The dialog goes away mid-run: hang up, and the hub stops the run."""
        if self._cancel is not None and self.running:
            self._cancel.cancel()
            self._elapsed.stop()
            self._set_status("stopped")

    def done(self, result: int) -> None:  # Close, Esc, or the window's close box
        self._abandon()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:
        # A dialog closed while hidden never reaches done(): hang up here as well.
        self._abandon()
        super().closeEvent(event)
