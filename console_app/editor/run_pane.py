"""The editor's docked run pane: the text in the editor run once through ``/execute``,
its console live beside its result, without leaving the editor.

A failure that names a line is a link: clicking it puts the editor's caret there
(``sig_go_to_line``). Stop hangs up, and the hub stops a run whose client went away."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
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
from console_app.run.console import ConsoleModel, console_list_view
from console_app.run.failure_text import failure_html
from console_app.run.result import ResultView
from console_app.session import HubSession
from console_app.tasks import Latest
from shared.errors import WebJobsError
from shared.ndjson import Failure, LogLine, MetaData, Payload, StreamEvent

__all__ = ["RunPane", "run_heading"]

_STATUS_TEXT = {"idle": "Not run yet — Ctrl+Enter or F5 runs the code in the editor",
                "running": "Running…", "success": "✔ Succeeded", "failed": "✖ Failed",
                "stopped": "■ Stopped", "error": "✖ Could not run"}


def run_heading(name: str, unsaved: bool) -> str:
    """What a run is of: the saved code, or the editor's changes not yet saved."""
    return f"{name} (with unsaved changes)" if unsaved else f"{name} (as saved)"


class RunPane(QWidget):
    sig_finished = Signal(str)      # success | failed | stopped | error
    sig_go_to_line = Signal(int)    # a failure's line link was clicked

    def __init__(self, session: HubSession, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.name = session, name
        self.sig_finished.connect(lambda _outcome: session.nav.sig_run_ended.emit(self.name))
        self.status = "idle"
        self.meta: MetaData | None = None
        self.failure: Failure | None = None
        self.result_view: ResultView | None = None
        self.heading_text = ""
        self._cancel: CancelToken | None = None
        self._runs = Latest()
        self._started = 0.0
        self.console = ConsoleModel(self)
        self._elapsed = QTimer(self, interval=200)
        self._elapsed.timeout.connect(self._show_elapsed)
        self._build()
        self._set_status("idle")

    def _build(self) -> None:
        self.status_label, self.runtime_label = QLabel(), QLabel()
        self.failure_label = QLabel()
        self.failure_label.setWordWrap(True)
        self.failure_label.setTextFormat(Qt.TextFormat.RichText)
        self.failure_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.failure_label.linkActivated.connect(self._link)
        self.failure_label.hide()
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.console_view = console_list_view(self.console)
        self.result_area = QWidget()
        QVBoxLayout(self.result_area).setContentsMargins(0, 0, 0, 0)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.console_view)
        split.addWidget(self.result_area)
        split.setSizes([500, 400])
        top = QHBoxLayout()
        top.addWidget(self.status_label)
        top.addWidget(self.runtime_label)
        top.addStretch(1)
        top.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.failure_label)
        layout.addWidget(split, 1)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def start(self, source: str, params: dict[str, Any], unsaved: bool) -> None:
        """Run ``source`` once, as the editor's run of this job (history says so)."""
        self.stop()
        self._reset(run_heading(self.name, unsaved))
        conn, name = self.session.conn, self.name

        def events(cancel: CancelToken) -> Iterable[StreamEvent]:
            return jobs.execute_stream(conn, source, params, cancel, name, True)

        run = self._runs.start()
        self._cancel = self.session.tasks.stream(events, run.wrap(self._on_event),
                                                 run.wrap(self._on_end), run.wrap(self._on_error))

    def _reset(self, heading: str) -> None:
        self.heading_text = heading
        self.console.clear()
        self.meta = self.failure = None
        if self.result_view is not None:
            self.result_view.setParent(None)
            self.result_view.deleteLater()
            self.result_view = None
        self.failure_label.hide()
        self.runtime_label.setText("")
        self._started = time.monotonic()
        self._set_status("running")
        self._elapsed.start()

    def _set_status(self, status: str) -> None:
        self.status = status
        text = _STATUS_TEXT.get(status, status)
        self.status_label.setText(f"{text} · {self.heading_text}" if self.heading_text
                                  else text)
        self.stop_button.setEnabled(status == "running")

    def _show_elapsed(self) -> None:
        self.runtime_label.setText(f"{(time.monotonic() - self._started) * 1000:.0f} ms …")

    def _on_event(self, event: StreamEvent) -> None:
        if isinstance(event, LogLine):
            self.console.append(event)
            self.console_view.scrollToBottom()
        elif isinstance(event, MetaData):
            self.meta = event
        elif isinstance(event, Payload) and self.meta is not None:
            self._show_result(self.meta, event.data)
        elif isinstance(event, Failure):
            self._show_failure(event)

    def _on_end(self) -> None:
        if self.running:
            self._finish("error", "The hub ended the answer without a result")

    def _on_error(self, exc: Exception) -> None:
        if not self.running:
            return
        if isinstance(exc, WebJobsError):
            self._show_failure(Failure(error=exc.message, code=exc.code, ref=exc.ref))
        else:
            self._finish("error", f"Could not run: {describe_error(exc)}")

    def _show_result(self, meta: MetaData, data: bytes) -> None:
        self._elapsed.stop()
        self.runtime_label.setText(f"{meta.runtime} ms · HTTP {meta.status}")
        self.result_view = ResultView(meta, data, self.name)
        layout = self.result_area.layout()
        if layout is not None:
            layout.addWidget(self.result_view)
        self._set_status("success")
        self.sig_finished.emit("success")

    def _show_failure(self, failure: Failure) -> None:
        self.failure = failure
        self._elapsed.stop()
        if failure.runtime is not None:
            self.runtime_label.setText(f"{failure.runtime} ms")
        self.failure_label.setText(failure_html(failure, linked=True))
        self.failure_label.show()
        self._set_status("failed")
        self.sig_finished.emit("failed")

    def _finish(self, status: str, message: str) -> None:
        self._elapsed.stop()
        self.failure_label.setText(_escape(message))
        self.failure_label.show()
        self._set_status(status)
        self.sig_finished.emit(status)

    def _link(self, href: str) -> None:
        if href.startswith("line:") and href[5:].isdigit():
            self.sig_go_to_line.emit(int(href[5:]))

    def stop(self) -> None:
        """Hang up on a run in flight; the hub ends it."""
        if not self.running:
            return
        self._runs.supersede()
        if self._cancel is not None:
            self._cancel.cancel()
        self._finish("stopped", "Stopped: the console hung up, so the hub ended the run")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
