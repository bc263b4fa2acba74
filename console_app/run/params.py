"""*Run with parameters…*: a small JSON dialog, and the last parameters used for each
job, kept per hub and job in QSettings so the next run starts from them."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

SETTINGS_GROUP = "run-params"


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
        self.editor = QPlainTextEdit(json.dumps(params, indent=2, ensure_ascii=False))
        self.problem = QLabel("")
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
