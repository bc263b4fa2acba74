"""Deleted jobs: the jobs the hub keeps the versions of after a delete, and Restore.

Opened from Manage (*Deleted jobs…*). The list is ``GET /deleted``; *Restore* makes the
last saved version the job again (``POST /deleted/<name>/restore``), after which the
job list everywhere is told (``nav.sig_jobs_changed``) and this list reloads. A job
of that name created meanwhile is the hub's ``HUB-009``, shown in the window."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from console_app.client import jobs as api
from console_app.client.jobs import DeletedJob
from console_app.history.fmt import age, local_time
from console_app.models.rows import Index, RowsModel
from console_app.session import HubSession
from console_app.tasks import Latest
from console_app.widgets import MessageBar, fit_on_screen, row_table
from shared.wire.jobs import JobSummary

__all__ = ["DeletedJobsDialog", "DeletedJobsModel"]

COLUMNS = ("Name", "Deleted", "By", "Last version")
JOB_ROLE = Qt.ItemDataRole.UserRole + 1    # the DeletedJob of the row


def deleted_when(job: DeletedJob, now: float) -> str:
    if job.deleted_at is None:  # deleted before the hub recorded deletions
        return "earlier (not recorded)"
    return f"{local_time(job.deleted_at)} ({age(job.deleted_at, now)})"


class DeletedJobsModel(RowsModel):
    COLUMNS = COLUMNS

    def __init__(self, parent: Any = None, clock: Callable[[], float] = time.time) -> None:
        super().__init__(parent=parent)
        self._clock = clock

    def set_jobs(self, jobs: list[DeletedJob]) -> None:
        self.reset_rows(sorted(jobs, key=lambda j: -(j.deleted_at or 0)))

    def job_at(self, row: int) -> DeletedJob | None:
        found: DeletedJob | None = self.row_item(row)
        return found

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        job = self.job_at(index.row()) if index.isValid() else None
        if job is None:
            return None
        if role == JOB_ROLE:
            return job
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return (job.name, deleted_when(job, self._clock()), job.deleted_by or "—",
                f"v{job.last_version}")[index.column()]


class DeletedJobsDialog(QDialog):
    sig_loaded = Signal()
    sig_restored = Signal(str)   # the job's name

    def __init__(self, session: HubSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setWindowTitle("Deleted jobs")
        self.model = DeletedJobsModel(self)
        self._loads = Latest()
        self.message = MessageBar()
        self.intro = QLabel("A deleted job keeps its saved versions. Restore makes the "
                            "last one the job again.")
        self.intro.setWordWrap(True)
        self.table = row_table(self.model)
        self.table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update())
        self.table.doubleClicked.connect(lambda _i: self.restore_selected())
        self.restore_button = QPushButton("Restore")
        self.restore_button.clicked.connect(self.restore_selected)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.restore_button, refresh, close):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        for widget in (self.intro, self.message):
            layout.addWidget(widget)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        fit_on_screen(self, QSize(640, 420), parent)
        self._update()
        self.refresh()

    def refresh(self) -> None:
        call, conn = self._loads.start(), self.session.conn
        self.session.tasks.run(lambda: api.deleted_jobs(conn), call.wrap(self._loaded),
                               call.wrap(lambda exc: self.message.show_error(
                                   exc, "Listing the deleted jobs")))

    def _loaded(self, jobs: list[DeletedJob]) -> None:
        if self.message.kind == "error":
            self.message.clear_message()
        self.model.set_jobs(jobs)
        if not jobs and self.message.kind != "info":  # a restore's note stays
            self.message.show_info("No deleted job has versions to restore.")
        self._update()
        self.sig_loaded.emit()

    def selected(self) -> DeletedJob | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.job_at(rows[0].row()) if rows else None

    def select(self, name: str) -> bool:
        for row in range(self.model.rowCount()):
            job = self.model.job_at(row)
            if job is not None and job.name == name:
                self.table.selectRow(row)
                return True
        return False

    def _update(self) -> None:
        self.restore_button.setEnabled(self.selected() is not None)

    def restore_selected(self) -> None:
        job = self.selected()
        if job is None:
            return
        conn, name = self.session.conn, job.name
        self.restore_button.setEnabled(False)

        def restored(_job: JobSummary) -> None:
            self.message.show_info(f"Restored {name} (version {job.last_version}).")
            self.session.nav.sig_jobs_changed.emit()
            self.sig_restored.emit(name)
            self.refresh()

        def failed(exc: Exception) -> None:
            self.message.show_error(exc, f"Restoring {name}")
            self._update()

        self.session.tasks.run(lambda: api.restore_deleted(conn, name), restored, failed)
