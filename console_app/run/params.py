"""*Run with parameters…*: a small JSON dialog, the editor's parameters panel, and the
last parameters used for each job, kept per hub and job in QSettings so the next run
starts from them."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QSettings, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from console_app.history.masked import masked_places

SETTINGS_GROUP = "run-params"
PLACEHOLDER = '{"department": 1}'

def console_settings() -> QSettings:
    """The console's settings in the default format (tests point it at a tmp dir with
    ``QSettings.setDefaultFormat(IniFormat)`` and ``QSettings.setPath``)."""
    return QSettings(QSettings.defaultFormat(), QSettings.Scope.UserScope,
                     "WebJobs", "console")


def _key(hub_url: str, name: str) -> str:
    # QSettings treats '/' as a group separator, so the URL is flattened.
    return f"{SETTINGS_GROUP}/{hub_url.replace('/', '_')}/{name}"


def remembered_params(hub_url: str, name: str) -> dict[str, Any]:
    raw = console_settings().value(_key(hub_url, name), "")
    try:
        value = json.loads(str(raw)) if raw else {}
    except ValueError:
        return {}  # an unreadable entry is simply forgotten
    return value if isinstance(value, dict) else {}


def remember_params(hub_url: str, name: str, params: dict[str, Any]) -> None:
    settings = console_settings()
    settings.setValue(_key(hub_url, name), json.dumps(params))
    settings.sync()


def has_masked(value: Any) -> bool:
    """Whether a history record's params hold a masked value anywhere — a text that is
    or holds ``***`` (``"Bearer ***"`` too), as History's *Run again* asks for."""
    return bool(masked_places(value))


def parse_params(text: str) -> tuple[dict[str, Any] | None, str]:
    """(params, '') or (None, why not). Empty text is no parameters. The reason reads
    after a "Parameters: " label."""
    if not text.strip():
        return {}, ""
    try:
        value = json.loads(text)
    except ValueError as err:
        return None, f"Not JSON: {err}"
    if not isinstance(value, dict):
        return None, "Not a JSON object: write one like {\"department\": 1}"
    return value, ""


class ParamsDialog(QDialog):
    """Edit a job's parameters as a JSON object; OK stays off while the text is not one."""

    def __init__(self, name: str, params: dict[str, Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Run {name} with parameters")
        # No parameters is an empty box showing an example, as in the editor's panel.
        self.editor = QPlainTextEdit(json.dumps(params, indent=2, ensure_ascii=False)
                                     if params else "")
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setPlaceholderText(PLACEHOLDER)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)  # a long parse error must not widen the dialog
        self.problem.setStyleSheet("color: #e53935")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Run")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Parameters (JSON object; the job sees them as params):"))
        layout.addWidget(self.editor)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.editor.textChanged.connect(self._check)
        self._check()

    def params(self) -> dict[str, Any] | None:
        return parse_params(self.editor.toPlainText())[0]

    def _check(self) -> None:
        value, why = parse_params(self.editor.toPlainText())
        self.problem.setText(why)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(value is not None)


class ParamsPanel(QWidget):
    """The editor's parameters beside the code: a JSON object, checked as it is typed.
    ``params()`` is None while the text is not one (the editor then refuses to run)."""

    sig_validity_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = QPlainTextEdit()
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setPlaceholderText(PLACEHOLDER)
        self.editor.setTabChangesFocus(True)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #e53935")
        self.origin = QLabel("")  # where the values came from
        self.origin.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        title = QLabel("<b>Parameters</b> (JSON object; the job sees it as <code>params</code>)")
        title.setWordWrap(True)
        layout.addWidget(title)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.problem)
        layout.addWidget(self.origin)
        self._valid = True
        self._filled = ""   # the text set_params put there, which ``origin`` describes
        self.editor.textChanged.connect(self._check)

    def set_params(self, params: dict[str, Any], origin: str = "") -> None:
        self._filled = json.dumps(params, indent=2, ensure_ascii=False) if params else ""
        self.editor.setPlainText(self._filled)
        self.origin.setText(origin)

    def params(self) -> dict[str, Any] | None:
        return parse_params(self.editor.toPlainText())[0]

    def is_empty(self) -> bool:
        return not self.editor.toPlainText().strip()

    def _check(self) -> None:
        text = self.editor.toPlainText()
        value, why = parse_params(text)
        self.problem.setText(why)
        if text != self._filled:  # edited: where the values came from no longer holds
            self.origin.setText("")
        valid = value is not None
        if valid != self._valid:
            self._valid = valid
            self.sig_validity_changed.emit(valid)
