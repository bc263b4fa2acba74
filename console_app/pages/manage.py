"""Manage: every job on one line, with filters, search, details, the Run button and its
menu, and the Create / Upload / Ad-hoc toolbar.

The list comes from ``/available``; a live *running · scheduled · 12 s* indicator
comes from ``/running``, polled only while the page is visible and never twice at
once; between polls the ages tick locally. Runs go to the main window through
``session.nav.sig_run_job``; ad-hoc files open a :class:`RunDialog` here, since
they carry code that is not saved anywhere."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from console_app.client import jobs as api
from console_app.client.errors import describe_error
from console_app.client.jobs import JobInfo, JobList, RunningRun
from console_app.debugger.launch import debug_job
from console_app.editor.hub_versions import open_versions
from console_app.models.jobs import (
    COL_BADGES,
    COL_DESCRIPTION,
    COL_LAST_RUN,
    COL_NAME,
    COL_NOW,
    FILTER_LABELS,
    FILTERS,
    JOB_ROLE,
    NAME_ROLE,
    JobDetails,
    JobsFilterProxy,
    JobsModel,
)
from console_app.pages.deleted_jobs import DeletedJobsDialog
from console_app.pages.manage_parts import Asker, BadgeDelegate, CountHeader
from console_app.run.dialog import RunDialog
from console_app.run.params import remember_params, remembered_params
from console_app.session import HubSession
from console_app.shell.status_bar import status_bar_of
from console_app.widgets import MessageBar, UrlNote
from shared.wire.jobs import JobSummary

POLL_MS = 2000      # /running while visible: one small JSON answer
TICK_MS = 1000      # ages move on between polls without a call


class ManagePage(QWidget):
    sig_loaded = Signal()                 # a /available answer is in the model
    sig_running_polled = Signal()         # a /running answer is in the model
    sig_message = Signal(str, bool)       # text, is_error: also shown in the page's message
    sig_details_loaded = Signal(str)      # job name

    def __init__(self, session: HubSession, parent: QWidget | None = None,
                 asker: Asker | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.asker = asker or Asker()
        self.model = JobsModel(self)
        self.proxy = JobsFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.dialogs: list[QWidget] = []
        self._polling = self._loading = self._reload_pending = False
        self._last_running: set[str] = set()
        self._showing_load_error = False  # the message says a load or poll failed
        self._poll_timer = QTimer(self, singleShot=True, interval=POLL_MS)
        self._poll_timer.timeout.connect(self.poll_running)
        self._tick_timer = QTimer(self, interval=TICK_MS)
        self._tick_timer.timeout.connect(self.model.tick)
        self._build()

    # -- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        self.header = QLabel("Jobs")
        self.count_header = CountHeader(self.header, self.proxy)
        self.message = MessageBar()
        self.url_note = UrlNote()
        self.search = QLineEdit(placeholderText="Search name or description…",
                                clearButtonEnabled=True)
        self.search.textChanged.connect(self.proxy.set_search)
        self.filter_boxes: dict[str, QCheckBox] = {}
        filters = QHBoxLayout()
        for name in FILTERS:
            box = QCheckBox(FILTER_LABELS[name])
            box.toggled.connect(lambda on, n=name: self.proxy.set_filter(n, on))
            self.filter_boxes[name] = box
            filters.addWidget(box)
        filters.addStretch(1)
        filters.addWidget(self.search, 2)
        self.view = QTreeView()
        self.view.setModel(self.proxy)
        self.view.setItemDelegateForColumn(COL_BADGES, BadgeDelegate(self.view))
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(COL_NAME, Qt.SortOrder.AscendingOrder)
        self.view.setUniformRowHeights(False)
        self._size_columns()
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(
            lambda pos: self.job_menu().exec(self.view.viewport().mapToGlobal(pos)))
        self.view.expanded.connect(self._on_expanded)
        self.view.selectionModel().currentChanged.connect(lambda *_: self._update_buttons())
        layout = QVBoxLayout(self)
        layout.addLayout(self._toolbar())
        layout.addWidget(self.message)
        layout.addWidget(self.url_note)
        layout.addLayout(filters)
        layout.addWidget(self.view, 1)
        self._update_buttons()
        self._install_keys()

    def _install_keys(self) -> None:
        """Enter, double-click, Del, Ctrl+Enter, Ctrl+N… and the menu bar's *Job* menu
        (``page_menu``, shown by the main window): see :mod:`console_app.shell.job_keys`."""
        from console_app.shell.job_keys import install_job_keys

        self.page_menu = install_job_keys(self)

    def _size_columns(self) -> None:
        """Room for a name, three badges and a last run; the description takes the rest
        (widths by text, so a larger font keeps them readable)."""
        header = self.view.header()
        header.setStretchLastSection(False)
        em = self.view.fontMetrics().horizontalAdvance("M")
        # The last run's "success · 12 ms · 3 min ago" whole; badges are rarely more than
        # two; "Now" holds "running · http · 12 s" only while a run is in flight.
        for column, ems in ((COL_NAME, 15), (COL_BADGES, 14), (COL_LAST_RUN, 17), (COL_NOW, 10)):
            header.resizeSection(column, ems * em)
        header.setSectionResizeMode(COL_DESCRIPTION, QHeaderView.ResizeMode.Stretch)

    def _toolbar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.addWidget(self.header, 1)
        self.run_button = QToolButton()
        self.run_button.setText("Run")
        self.run_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.run_button.clicked.connect(lambda: self.run_job(self.current_name()))
        self.run_menu = self.job_menu()
        self.run_button.setMenu(self.run_menu)
        bar.addWidget(self.run_button)
        for text, slot in (("Create", self.create_job), ("Upload", self.upload_job),
                           ("Ad-hoc", self.run_ad_hoc), ("Deleted jobs…", self.show_deleted),
                           ("Refresh", self.refresh)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            bar.addWidget(button)
        return bar

    def job_menu(self) -> QMenu:
        """The Run button's menu (also the row's context menu), for the current job."""
        menu = QMenu(self)
        items = (("Run with parameters…", self.run_with_params),
                 ("Open in browser", self.open_in_browser), ("Debug…", self.debug_job),
                 ("Edit code", self.edit_job), ("History", self.show_history),
                 ("Versions", self.show_versions), ("Delete", self.delete_job))
        for text, slot in items:
            action = QAction(text, menu)
            action.triggered.connect(lambda _c=False, s=slot: s(self.current_name()))
            menu.addAction(action)
        return menu

    # -- selection -----------------------------------------------------------------------

    def current_name(self) -> str:
        name = self.view.currentIndex().data(NAME_ROLE)
        return str(name) if name else ""

    def current_job(self) -> JobInfo | None:
        index = self.view.currentIndex()
        if index.isValid() and index.parent().isValid():
            index = index.parent()
        job = index.sibling(index.row(), 0).data(JOB_ROLE) if index.isValid() else None
        return job if isinstance(job, JobInfo) else None

    def select(self, name: str) -> bool:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(NAME_ROLE) == name:
                self.view.setCurrentIndex(index)
                return True
        return False

    def job(self, name: str) -> JobInfo | None:
        row = self.model.row_of(name)
        return self.model.job_at(row)

    def job_names(self) -> list[str]:
        return [job.name for job in self.model.state.jobs]

    def _update_buttons(self) -> None:
        self.run_button.setEnabled(bool(self.current_name()))

    # -- loading and polling -------------------------------------------------------------

    def refresh(self) -> None:
        if self._loading:  # one /available at a time; ask again once it is in
            self._reload_pending = True
            return
        self._loading = True
        self.session.tasks.run(lambda: api.available(self.session.conn), self._loaded,
                               self._load_failed)

    def _loaded(self, found: JobList) -> None:
        self._loading = False
        self._clear_load_error()
        current = self.current_name()
        self.model.set_jobs(found)
        self.count_header.store = found.store
        self.count_header.update()
        bar = status_bar_of(self)
        if bar is not None:  # the status bar counts what this list shows
            bar.set_job_count(len(found.jobs))
        if current:
            self.select(current)
        self._update_buttons()
        self.sig_loaded.emit()
        if self._reload_pending:
            self._reload_pending = False
            self.refresh()

    def _load_failed(self, exc: Exception) -> None:
        self._loading = self._reload_pending = False
        self.show_failure(exc, "Loading the jobs", loading=True)

    def poll_running(self) -> None:
        if self._polling or not self.isVisible():
            return
        self._polling = True
        self.session.tasks.run(lambda: api.running(self.session.conn), self._got_running,
                               self._poll_failed)

    def _got_running(self, runs: list[RunningRun]) -> None:
        self._polling = False
        self._clear_load_error()
        self.model.set_running(runs)
        names = {r.job_name for r in runs}
        if names != self._last_running and self._last_running - names:
            self.refresh()  # a run ended: its last-run column has news
        self._last_running = names
        self.sig_running_polled.emit()
        self._schedule_poll()

    def _poll_failed(self, exc: Exception) -> None:
        self._polling = False
        self.show_failure(exc, "Reading the runs in flight", loading=True)
        self._schedule_poll()

    def _schedule_poll(self) -> None:
        if self.isVisible():
            self._poll_timer.start()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()  # back on the page: jobs may have come and gone meanwhile
        self._tick_timer.start()
        self.poll_running()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._poll_timer.stop()
        self._tick_timer.stop()

    # -- details -------------------------------------------------------------------------

    def _on_expanded(self, proxy_index: QModelIndex) -> None:
        self.view.setFirstColumnSpanned(0, proxy_index, True)
        name = str(proxy_index.data(NAME_ROLE) or "")
        if not name:
            return
        conn = self.session.conn

        def fetch() -> JobDetails:
            return JobDetails(api.code(conn, name), api.schedules_of(conn, name))

        def failed(exc: Exception) -> None:
            self.model.set_details(name, JobDetails(error=f"Could not load: {describe_error(exc)}"))
            self.sig_details_loaded.emit(name)

        def done(details: JobDetails) -> None:
            self.model.set_details(name, details)
            self.sig_details_loaded.emit(name)

        self.session.tasks.run(fetch, done, failed)

    def expand(self, name: str) -> None:
        if self.select(name):
            self.view.expand(self.view.currentIndex().siblingAtColumn(0))

    # -- the Run button and its menu -----------------------------------------------------

    def run_job(self, name: str) -> None:
        job = self.job(name)
        if job is None:
            return
        if job.is_page:  # a page is for a browser; the run dialog would show its HTML only
            self.open_in_browser(name)
            return
        self.session.nav.sig_run_job.emit(name, remembered_params(self.session.url, name))

    def run_with_params(self, name: str) -> None:
        if not name:
            return
        chosen = self.asker.params(name, remembered_params(self.session.url, name), self)
        if chosen is None:
            return
        remember_params(self.session.url, name, chosen)
        self.session.nav.sig_run_job.emit(name, chosen)

    def open_in_browser(self, name: str) -> None:
        """The job's page in the browser; when that cannot work (or cannot be known to,
        as root) its address stays in the page to copy."""
        if not name:
            return
        url = api.job_url(self.session.conn, name)
        if not self.asker.open_url(QUrl(url)):
            self.url_note.show_url(f"No browser could be opened for {name}. Its address:", url)
        elif self.asker.as_root():
            self.url_note.show_url(f"The console runs as root, and browsers refuse to start as "
                                   f"root: if none opened, {name}'s address is here to copy.",
                                   url)
        else:
            self.url_note.hide()

    def debug_job(self, name: str) -> None:  # a page job: the live session (attach)
        debug_job(self.session, name, self.job(name), remembered_params(self.session.url, name))

    def edit_job(self, name: str) -> None:
        if name:
            self.session.nav.sig_open_editor.emit(name)

    def show_history(self, name: str) -> None:
        if name:
            self.session.nav.sig_open_history.emit({"job": name})

    def show_versions(self, name: str) -> None:
        if not name:
            return

        def show(text: str) -> None:
            self._keep(open_versions(self.session, name, text, self, self._jobs_changed,
                                     self.show_message))

        self.session.tasks.run(lambda: api.code(self.session.conn, name), show,
                               lambda exc: self.show_failure(exc, "Opening the versions"))

    def delete_job(self, name: str) -> None:
        if not name or not self.asker.confirm(
                "Delete job", f"Delete the job '{name}'? Its saved versions are kept.", self):
            return
        self.session.tasks.run(lambda: api.delete(self.session.conn, name),
                               lambda _r: self._done(f"Deleted {name}"),
                               lambda exc: self.show_failure(exc, f"Deleting {name}"))

    # -- the toolbar ---------------------------------------------------------------------

    def create_job(self) -> None:
        new = self.asker.new_job(self.job_names(), self)
        if new is None:
            return
        name = new.name
        if self.job(name) is not None:
            self.show_message(f"A job named {name} exists already", error=True)
            return

        def created(_job: JobSummary) -> None:
            self._done(f"Created {name}")
            self.session.nav.sig_open_editor.emit(name)

        # baseVersion 0: a new job, so a job of that name saved meanwhile is not replaced.
        self.session.tasks.run(
            lambda: api.save(self.session.conn, name, new.code, base_version=0), created,
            lambda exc: self.show_failure(exc, f"Creating {name}"))

    def upload_job(self) -> None:
        chosen = self.asker.pick_file("Upload a job file", self)
        if not chosen:
            return
        path = Path(chosen)
        self.session.tasks.run(
            lambda: api.upload(self.session.conn, path),
            lambda job: self._done(f"Uploaded {job.name or path.name}"),
            lambda exc: self.show_failure(exc, f"Uploading {path.name}"))

    def run_ad_hoc(self) -> None:
        chosen = self.asker.pick_file("Run a file once, without saving it", self)
        if not chosen:
            return
        try:
            source = Path(chosen).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as err:
            self.show_failure(err, f"Reading {chosen}")
            return
        self._keep(RunDialog(self.session, "", {}, source=source)).show()

    def show_deleted(self) -> QWidget:
        """The deleted jobs with their kept versions, to restore one."""
        dialog = self._keep(DeletedJobsDialog(self.session, self))
        dialog.show()
        return dialog

    # -- plumbing ------------------------------------------------------------------------

    def _keep(self, window: QWidget) -> QWidget:
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialogs.append(window)
        window.destroyed.connect(lambda *_: self.dialogs.remove(window)
                                 if window in self.dialogs else None)
        return window

    def _done(self, message: str) -> None:
        self.show_message(message)
        self._jobs_changed()

    def _jobs_changed(self) -> None:
        # The main window answers with refresh(): one /available, not two.
        self.session.nav.sig_jobs_changed.emit()

    def show_message(self, text: str, error: bool = False) -> None:
        """A non-modal note over the list (``text`` already worded)."""
        if error:
            self.message.show_error_text(text)
        else:
            self.message.show_info(text)
        self._showing_load_error = False
        self.sig_message.emit(text, error)

    def show_failure(self, exc: Exception, doing: str, loading: bool = False) -> None:
        """``doing`` failed: the message names the failure with its code. A load or
        poll failure (``loading``) goes once the next load or poll succeeds."""
        self.message.show_error(exc, doing)
        self._showing_load_error = loading
        self.sig_message.emit(self.message.text(), True)

    def _clear_load_error(self) -> None:
        if self._showing_load_error:
            self._showing_load_error = False
            self.message.clear_message()
