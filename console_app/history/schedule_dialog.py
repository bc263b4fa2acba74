"""Add or edit a schedule. The cron field is checked as you type: after a short pause
the hub's ``POST /schedules/preview`` says what it means in words and the next five
fire times, shown in the chosen zone; a bad expression shows the hub's message. The
hub is the one judge of cron here, so the console never disagrees with what it saves."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import available_timezones

from PySide6.QtCore import QSize, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from console_app.client.connection import HubConnection
from console_app.client.errors import describe_error
from console_app.client.jobs import available
from console_app.client.schedules import (
    CATCH_UP_MODES,
    OVERLAP_MODES,
    CronPreview,
    ScheduleDraft,
    ScheduleInfo,
    create_schedule,
    preview_cron,
    update_schedule,
)
from console_app.history.fmt import zoned_time
from console_app.models.schedules import CronCheck
from console_app.run.params import parse_params
from console_app.session import HubSession
from console_app.widgets import fit_on_screen

__all__ = ["CHECK_DELAY_MS", "ScheduleDialog"]

CHECK_DELAY_MS = 400
HUB_DEFAULT_ZONE = "(hub default)"


def _job_names(conn: HubConnection) -> list[str]:
    return sorted(job.name for job in available(conn).jobs)


class ScheduleDialog(QDialog):
    sig_saved = Signal(object)          # the ScheduleInfo the hub saved
    sig_cron_checked = Signal(bool)     # the cron field's check came back: valid?

    def __init__(self, session: HubSession, existing: ScheduleInfo | None = None,
                 job: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.existing = existing
        self.check = CronCheck()
        self.saved: ScheduleInfo | None = None
        self.setWindowTitle("Edit schedule" if existing else "Add schedule")
        self.setMinimumWidth(460)
        self._timer = QTimer(self, singleShot=True, interval=CHECK_DELAY_MS)
        self._timer.timeout.connect(self._check_now)
        self._build()
        self._fill(existing, job)
        fit_on_screen(self, self.sizeHint().expandedTo(QSize(460, 0)), parent)
        conn = session.conn
        session.tasks.run(lambda: _job_names(conn), self._got_jobs, lambda _e: None)

    def _build(self) -> None:
        self.name_edit = QLineEdit()
        self.job_box = QComboBox(editable=True)
        self.cron_edit = QLineEdit(
            placeholderText="minute hour day month weekday, e.g. 30 2 * * 1-5")
        self.cron_status = QLabel()
        self.cron_status.setWordWrap(True)
        self.preview_label = QLabel()
        # Room for all five times from the start, so the dialog does not jump as you type.
        self.preview_label.setMinimumHeight(self.fontMetrics().lineSpacing() * 5 + 4)
        self.zone_box = QComboBox(editable=True)
        self.zone_box.addItem(HUB_DEFAULT_ZONE, "")
        for zone in sorted(available_timezones()):
            self.zone_box.addItem(zone, zone)
        self.params_edit = QPlainTextEdit(placeholderText="{}")
        self.params_edit.setMaximumHeight(80)
        self.enabled_box = QCheckBox("Enabled")
        self.catch_up_box = QComboBox()
        self.catch_up_box.addItems(list(CATCH_UP_MODES))
        self.overlap_box = QComboBox()
        self.overlap_box.addItems(list(OVERLAP_MODES))
        self.retries_spin = QSpinBox(minimum=0, maximum=10)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color:#c62828;")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self._lay_out()

    def _lay_out(self) -> None:
        form = QFormLayout()
        for label, widget in (("Name", self.name_edit), ("Job", self.job_box),
                              ("Cron", self.cron_edit), ("", self.cron_status),
                              ("Next five", self.preview_label), ("Time zone", self.zone_box),
                              ("Parameters (JSON)", self.params_edit), ("", self.enabled_box),
                              ("Missed runs", self.catch_up_box),
                              ("While still running", self.overlap_box),
                              ("Retries", self.retries_spin)):
            form.addRow(label, widget)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.cron_edit.textChanged.connect(lambda _t: self._cron_typed())
        self.zone_box.currentTextChanged.connect(lambda _t: self._cron_typed())
        self.name_edit.textChanged.connect(lambda _t: self._update_save())
        self.job_box.currentTextChanged.connect(lambda _t: self._update_save())

    def _fill(self, existing: ScheduleInfo | None, job: str) -> None:
        if existing is None:
            self.job_box.setEditText(job)
            self._update_save()
            return
        self.name_edit.setText(existing.name)
        self.job_box.setEditText(existing.job_name)
        self.zone_box.setCurrentText(existing.timezone)
        self.params_edit.setPlainText(json.dumps(existing.params_dict(), indent=1))
        self.enabled_box.setChecked(existing.enabled)
        self.catch_up_box.setCurrentText(existing.catch_up)
        self.overlap_box.setCurrentText(existing.overlap)
        self.retries_spin.setValue(existing.max_retries)
        self.cron_edit.setText(existing.cron)

    def _got_jobs(self, names: list[str]) -> None:
        typed = self.job_box.currentText()
        self.job_box.clear()
        self.job_box.addItems(names)
        self.job_box.setEditText(typed)

    # -- the cron check ----------------------------------------------------------------

    def zone(self) -> str:
        text = self.zone_box.currentText().strip()
        return "" if text == HUB_DEFAULT_ZONE else text

    def _cron_typed(self) -> None:
        self.check.ask()  # what is shown now is out of date until the hub answers
        self.cron_status.setText("Checking…" if self.cron_edit.text().strip() else "")
        self.preview_label.clear()
        self._update_save()
        self._timer.start()

    def _check_now(self) -> None:
        cron, zone = self.cron_edit.text().strip(), self.zone()
        if not cron:
            return
        seq, conn = self.check.ask(), self.session.conn
        self.session.tasks.run(lambda: preview_cron(conn, cron, zone),
                               lambda p: self._previewed(seq, p),
                               lambda exc: self._refused(seq, exc))

    def _previewed(self, seq: int, preview: CronPreview) -> None:
        if not self.check.answered(seq, preview):
            return
        self.cron_status.setStyleSheet("color:#2e7d32;")
        self.cron_status.setText(preview.cron_text)
        self.preview_label.setText("\n".join(zoned_time(t, preview.timezone)
                                             for t in preview.next_times))
        self._update_save()
        self.sig_cron_checked.emit(True)

    def _refused(self, seq: int, exc: Exception) -> None:
        if not self.check.refused(seq, describe_error(exc)):
            return
        self.cron_status.setStyleSheet("color:#c62828;")
        self.cron_status.setText(self.check.error or "")
        self.preview_label.clear()
        self._update_save()
        self.sig_cron_checked.emit(False)

    def preview_times(self) -> list[str]:
        text = self.preview_label.text()
        return text.split("\n") if text else []

    # -- saving ------------------------------------------------------------------------

    def _update_save(self) -> None:
        ready = (self.check.valid and bool(self.name_edit.text().strip())
                 and bool(self.job_box.currentText().strip()))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(ready)

    def _params(self) -> dict[str, Any] | None:
        value, why = parse_params(self.params_edit.toPlainText())
        if value is None:
            self.error_label.setText(f"Parameters: {why}")
        return value

    def draft(self) -> ScheduleDraft | None:
        params = self._params()
        if params is None:
            return None
        return ScheduleDraft(
            name=self.name_edit.text().strip(), job_name=self.job_box.currentText().strip(),
            cron=self.cron_edit.text().strip(), timezone=self.zone(), params=params,
            enabled=self.enabled_box.isChecked(), catch_up=self.catch_up_box.currentText(),
            overlap=self.overlap_box.currentText(), max_retries=self.retries_spin.value())

    def save(self) -> None:
        draft = self.draft()
        if draft is None:
            return
        self.error_label.clear()
        conn, existing = self.session.conn, self.existing
        if existing is None:
            def work() -> ScheduleInfo:
                return create_schedule(conn, draft)
        else:
            def work() -> ScheduleInfo:
                return update_schedule(conn, existing.schedule_id, draft.fields())
        self.buttons.setEnabled(False)
        self.session.tasks.run(work, self._saved, self._save_failed)

    def _saved(self, info: ScheduleInfo) -> None:
        self.saved = info
        self.sig_saved.emit(info)
        self.accept()

    def _save_failed(self, exc: Exception) -> None:
        self.buttons.setEnabled(True)
        self.error_label.setText(describe_error(exc))
