"""One recorded run: what it was, its console replayed, and its result or failure."""

from __future__ import annotations

import contextlib
import html
import json
import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from console_app.client.history import RunDetail
from console_app.history.fmt import OUTCOME_COLOURS, duration, local_time
from console_app.history.masked import AskMasked, ask_masked, filled, masked_places
from console_app.history.replay import ReplayPlayer
from console_app.run.console import ConsoleModel

__all__ = ["RunView", "result_text"]


def result_text(detail: RunDetail) -> str:
    """The result as the owner should read it: JSON indented, a file described."""
    if detail.result is None:
        if detail.result_size:
            kind = detail.result_format or "binary"
            return f"({kind} result of {detail.result_size} bytes: files are not kept in history)"
        return ""
    text = detail.result
    if detail.result_type == "json":
        with contextlib.suppress(ValueError):  # cut short at 64 KB: shown as it is
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    if detail.result_truncated:
        text += f"\n… (cut at 64 KB of {detail.result_size} bytes)"
    return text


def _facts(detail: RunDetail) -> str:
    run = detail.summary
    colour = OUTCOME_COLOURS.get(run.outcome, "#000000")
    status = f" · HTTP {run.http_status}" if run.http_status else ""
    version = f" · v{detail.job_version}" if detail.job_version else ""
    return (f"<b>{run.job_name}</b>{version} &nbsp;<span style='color:{colour}'><b>"
            f"{run.outcome}</b></span>{status} · {duration(run.runtime_ms)}<br>"
            f"started {local_time(run.started)} by {run.started_by} on {run.node}"
            f" · ref {run.ref} · run {run.run_id}")


def _failure(detail: RunDetail) -> str:
    run = detail.summary
    if run.outcome == "success" or (run.code is None and run.message is None):
        return ""
    limit = f" (limit: {run.limit})" if run.limit else ""
    code = f"{run.code}: " if run.code else ""
    return f"{code}{run.message or 'no message'}{limit}"


# How the hub names the job's line in a failure: "… (line 12)", "at line 12".
_LINE = re.compile(r"\bline (\d{1,7})\b")


def failure_line(text: str) -> int | None:
    """The job line a failure names, if it names one."""
    found = _LINE.search(text)
    return int(found.group(1)) if found else None


def _failure_html(text: str) -> str:
    """The failure as rich text, its line a link that opens the editor there."""
    found = _LINE.search(text)
    if found is None:
        return html.escape(text)
    return (html.escape(text[:found.start()])
            + f'<a href="line:{found.group(1)}">{html.escape(found.group(0))}</a>'
            + html.escape(text[found.end():]))


def _console_note(detail: RunDetail) -> str:
    count = len(detail.logs)
    if count == 0:
        return "No console output"
    cut = " (cut at 300 lines / 32 KB)" if detail.logs_truncated else ""
    return f"{count} console line{'s' if count != 1 else ''}{cut}"


class RunView(QWidget):
    sig_run_again = Signal(str, dict)   # job name, parameters
    sig_debug = Signal(str)             # run id
    sig_open_line = Signal(str, int)    # job name, the line its failure names

    def __init__(self, parent: QWidget | None = None,
                 ask_masked_values: AskMasked | None = None) -> None:
        super().__init__(parent)
        self.detail: RunDetail | None = None
        self.ask_masked_values = ask_masked_values or ask_masked
        self.console_model = ConsoleModel(self, time_width=7)
        self.player = ReplayPlayer(self.console_model, self)
        self._build()
        self.show_run(None)

    def _build(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.facts = QLabel()
        self.facts.setWordWrap(True)  # a long run id must not squeeze the run table
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.failure_label = QLabel()
        self.failure_label.setWordWrap(True)
        self.failure_label.setTextFormat(Qt.TextFormat.RichText)
        self.failure_label.linkActivated.connect(self._line_clicked)
        self.failure_label.setStyleSheet("color:#c62828;font-weight:bold;")
        self.params_label = QLabel()
        self.params_label.setWordWrap(True)
        self.console_note = QLabel()
        self.console_view = QListView()
        self.console_view.setModel(self.console_model)
        self.console_view.setFont(mono)
        self.result_edit = QPlainTextEdit(readOnly=True)
        self.result_edit.setFont(mono)
        self.paced_box = QCheckBox("At recorded pace")
        self.paced_box.setToolTip("Replay the console with the gaps the run had "
                                  "(gaps over 3 s are shortened)")
        self.replay_button = QPushButton("Replay console")
        self.replay_button.clicked.connect(self.replay)
        self.skip_button = QPushButton("Show all")
        self.skip_button.clicked.connect(self.player.finish_now)
        self.run_again_button = QPushButton("Run again with these parameters")
        self.run_again_button.clicked.connect(self._run_again)
        self.debug_button = QPushButton("Debug this run")
        self.debug_button.clicked.connect(self._debug)
        self._lay_out()

    def _lay_out(self) -> None:
        # Two rows, so the run view stays narrow enough for the run list beside it.
        actions = QHBoxLayout()
        for button in (self.run_again_button, self.debug_button):
            actions.addWidget(button)
        actions.addStretch(1)
        controls = QHBoxLayout()
        for control in (self.replay_button, self.paced_box, self.skip_button,
                        self.console_note):
            controls.addWidget(control)
        controls.addStretch(1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.console_view)
        split.addWidget(self.result_edit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label in (self.facts, self.failure_label, self.params_label):
            layout.addWidget(label)
        layout.addLayout(actions)
        layout.addLayout(controls)
        layout.addWidget(split, 1)

    def _line_clicked(self, link: str) -> None:
        if self.detail is not None and link.startswith("line:"):
            self.sig_open_line.emit(self.detail.summary.job_name, int(link[5:]))

    def show_run(self, detail: RunDetail | None) -> None:
        """Show ``detail`` and replay its console (paced if the box is ticked)."""
        self.detail = detail
        for button in (self.replay_button, self.run_again_button, self.debug_button,
                       self.skip_button):
            button.setEnabled(detail is not None)
        if detail is None:
            self.player.stop()
            self.console_model.clear()
            self.facts.setText("Pick a run to see its console and result.")
            for label in (self.failure_label, self.params_label, self.console_note):
                label.clear()
            self.result_edit.clear()
            self.result_edit.setPlaceholderText("")  # the last run's "no result" is not this one's
            return
        self.facts.setText(_facts(detail))
        self.failure_label.setText(_failure_html(_failure(detail)))
        self.failure_label.setVisible(bool(_failure(detail)))
        params = json.dumps(detail.summary.params, ensure_ascii=False)
        self.params_label.setText(f"Parameters: {params}")
        self.result_edit.setPlainText(result_text(detail))
        self.console_note.setText(_console_note(detail))
        self.result_edit.setPlaceholderText("No result: the run did not finish well"
                                            if _failure(detail) else "No result")
        self.replay()

    def replay(self) -> None:
        if self.detail is not None:
            logs = self.detail.logs
            self.player.play(logs, self.paced_box.isChecked())

    def _params(self) -> dict[str, Any]:
        params = self.detail.summary.params if self.detail else None
        return params if isinstance(params, dict) else {}

    def _run_again(self) -> None:
        """The recorded parameters again; a masked value is never sent as ``***``: the
        owner types each one first, or nothing runs."""
        if self.detail is None:
            return
        job, params = self.detail.summary.job_name, self._params()
        places = masked_places(params)
        if places:
            answers = self.ask_masked_values(job, places, self)
            if answers is None or any(p.path not in answers for p in places):
                return
            params = filled(params, answers)
        self.sig_run_again.emit(job, params)

    def _debug(self) -> None:
        if self.detail is not None:
            self.sig_debug.emit(self.detail.summary.run_id)
