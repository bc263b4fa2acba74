"""The job list: plain-Python state, a thin two-level Qt model over it, and a filter proxy.

Top rows are jobs; each has one child row, its details (limits, access, source head,
schedules), shown when the view expands it. Everything a view paints comes from
``data()`` roles, so the model is testable without a view. Time is injected
(``clock``: wall seconds, ``mono``: monotonic seconds) so ages tick in tests too."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor

from console_app.client.jobs import JobInfo, JobList, RunningRun
from console_app.history.fmt import OUTCOME_COLOURS, age, duration, elapsed
from console_app.models.rows import ROOT, Index, column_header
from shared.wire.schedules import Schedule

COLUMNS = ("Name", "Badges", "Description", "Last run", "Now")
COL_NAME, COL_BADGES, COL_DESCRIPTION, COL_LAST_RUN, COL_NOW = range(len(COLUMNS))

JOB_ROLE = Qt.ItemDataRole.UserRole + 1        # the JobInfo
NAME_ROLE = Qt.ItemDataRole.UserRole + 2       # the job's name (job and details rows)
BADGES_ROLE = Qt.ItemDataRole.UserRole + 3     # list[Badge], for the badge delegate
RUNNING_ROLE = Qt.ItemDataRole.UserRole + 4    # "running · scheduled · 12 s" or ""
OUTCOME_ROLE = Qt.ItemDataRole.UserRole + 5    # last run's outcome or ""
DETAILS_ROLE = Qt.ItemDataRole.UserRole + 6    # True on a details (child) row

FILTERS = ("public", "page", "scheduled", "extended", "failed")
FILTER_LABELS = {"public": "Public", "page": "Pages", "scheduled": "Scheduled",
                 "extended": "Extended limits", "failed": "Last run failed"}
SOURCE_WORDS = {"schedule": "scheduled", "http": "http", "editor": "editor",
                "adhoc": "ad hoc", "debug": "debugging"}
SOURCE_LINES = 12


@dataclass(frozen=True)
class Badge:
    """``kind`` picks the colour: public, page, extended, scheduled, schedule-off, key."""

    text: str
    kind: str


def badges_of(job: JobInfo) -> list[Badge]:
    found = []
    if job.access == "public":
        found.append(Badge("public", "public"))
    if job.is_page:
        found.append(Badge("page", "page"))
    if job.extended:
        found.append(Badge("extended", "extended"))
    if job.scheduled:
        found.append(Badge("scheduled", "scheduled"))
    elif job.has_schedules:  # schedules exist, none switched on
        found.append(Badge("schedule off", "schedule-off"))
    if job.access == "key":
        found.append(Badge("key", "key"))
    return found


def last_run_text(job: JobInfo, now: float) -> str:
    run = job.last_run
    if run is None:
        return "never run"
    took = f" · {duration(run.runtime)}" if run.runtime is not None else ""  # as History writes it
    return f"{run.outcome}{took} · {age(run.started, now)}"


def matches(job: JobInfo, filters: Iterable[str], search: str) -> bool:
    """Every ticked filter must hold and the search must be in name, title or description."""
    tests: dict[str, Callable[[JobInfo], bool]] = {
        "public": lambda j: j.access == "public", "page": lambda j: j.is_page,
        "scheduled": lambda j: j.scheduled, "extended": lambda j: j.extended,
        "failed": lambda j: j.last_run is not None and j.last_run.outcome == "failed"}
    if not all(tests[f](job) for f in filters):
        return False
    needle = search.strip().lower()
    return not needle or any(needle in text.lower()
                             for text in (job.name, job.title, job.description))


@dataclass
class JobDetails:
    """What expanding a row fetches; None while still loading."""

    source: str | None = None
    schedules: list[Schedule] | None = None
    error: str | None = None


def details_text(job: JobInfo, details: JobDetails | None) -> str:
    limits = job.limits
    lines = [f"Limits: runtime {limits.runtimeMs} ms · memory {limits.memoryMb} MB · "
             f"CPU {limits.cpuMs} ms"
             + (" (extended)" if job.extended else ""),
             f"Access: {job.access} · mode: {job.mode} · {job.runs} runs, "
             f"{job.failures} failed"]
    lines += [f"Warning: {w}" for w in job.warnings]
    if details is None or details.error:
        lines.append(details.error if details and details.error else "Loading source…")
        return "\n".join(lines)
    if details.schedules is not None:
        lines.append("Schedules: " + ("none" if not details.schedules else ""))
        lines += [f"  {'on ' if s.enabled else 'off'}  {s.name}: {s.cronText or s.cron}"
                  for s in details.schedules]
    if details.source is not None:
        head = details.source.splitlines()[:SOURCE_LINES]
        lines.append("Source:")
        lines += [f"  {line}" for line in head]
    return "\n".join(lines)


@dataclass
class JobsState:
    """The list as plain data: jobs, runs in flight (with when they were seen) and details."""

    jobs: list[JobInfo] = field(default_factory=list)
    store: str = ""
    running: dict[str, list[tuple[RunningRun, float]]] = field(default_factory=dict)
    details: dict[str, JobDetails] = field(default_factory=dict)

    def running_text(self, name: str, mono_now: float) -> str:
        runs = self.running.get(name)
        if not runs:
            return ""
        # The longest run in flight; its age keeps ticking from when /running said it.
        run, seen = max(runs, key=lambda r: r[0].runtime + (mono_now - r[1]) * 1000)
        age = (run.runtime / 1000) + (mono_now - seen)
        more = f" (+{len(runs) - 1})" if len(runs) > 1 else ""
        return f"running · {SOURCE_WORDS.get(run.source, run.source)} · {elapsed(age)}{more}"


class JobsModel(QAbstractItemModel):
    """Two levels: job rows (internal id 0) and one details row under each
    (internal id = the job's row + 1)."""

    def __init__(self, parent: QObject | None = None, clock: Callable[[], float] = time.time,
                 mono: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self.state = JobsState()
        self._clock, self._mono = clock, mono

    # -- updates -------------------------------------------------------------------------

    def set_jobs(self, found: JobList) -> None:
        same = [j.name for j in found.jobs] == [j.name for j in self.state.jobs]
        if same and self.state.jobs:
            # Same rows: keep the view's expanded rows and selection.
            self.state.jobs, self.state.store = list(found.jobs), found.store
            self._changed_columns(0, len(COLUMNS) - 1)
            return
        self.beginResetModel()
        self.state.jobs, self.state.store = list(found.jobs), found.store
        names = {j.name for j in found.jobs}
        self.state.details = {k: v for k, v in self.state.details.items() if k in names}
        self.endResetModel()

    def set_running(self, runs: list[RunningRun]) -> None:
        seen = self._mono()
        by_name: dict[str, list[tuple[RunningRun, float]]] = {}
        for run in runs:
            by_name.setdefault(run.job_name, []).append((run, seen))
        self.state.running = by_name
        self._changed_columns(COL_NOW, COL_NOW)

    def tick(self) -> None:
        """Ages move on without asking the hub."""
        self._changed_columns(COL_LAST_RUN, COL_NOW)

    def set_details(self, name: str, details: JobDetails) -> None:
        self.state.details[name] = details
        row = self.row_of(name)
        if row >= 0:
            child = self.index(0, 0, self.index(row, 0))
            self.dataChanged.emit(child, child, [Qt.ItemDataRole.DisplayRole])

    def _changed_columns(self, first: int, last: int) -> None:
        if self.state.jobs:
            self.dataChanged.emit(self.index(0, first),
                                  self.index(len(self.state.jobs) - 1, last))

    # -- lookups -------------------------------------------------------------------------

    def job_at(self, row: int) -> JobInfo | None:
        return self.state.jobs[row] if 0 <= row < len(self.state.jobs) else None

    def row_of(self, name: str) -> int:
        return next((i for i, j in enumerate(self.state.jobs) if j.name == name), -1)

    # -- QAbstractItemModel --------------------------------------------------------------

    def index(self, row: int, column: int, parent: Index = ROOT) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0)
        return self.createIndex(row, column, parent.row() + 1)

    def parent(self, child: Index = ROOT) -> QModelIndex:  # type: ignore[override]
        if not child.isValid() or child.internalId() == 0:
            return QModelIndex()
        return self.createIndex(child.internalId() - 1, 0, 0)

    def rowCount(self, parent: Index = ROOT) -> int:
        if not parent.isValid():
            return len(self.state.jobs)
        if parent.internalId() == 0 and parent.column() == 0:
            return 1
        return 0

    def columnCount(self, parent: Index = ROOT) -> int:
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() != 0:
            return self._details_data(index, role)
        job = self.job_at(index.row())
        if job is None:
            return None
        return self._job_data(job, index.column(), role)

    def _details_data(self, index: Index, role: int) -> Any:
        job = self.job_at(index.internalId() - 1)
        if job is None:
            return None
        if role == DETAILS_ROLE:
            return True
        if role == NAME_ROLE:
            return job.name
        if role == Qt.ItemDataRole.DisplayRole and index.column() == 0:
            return details_text(job, self.state.details.get(job.name))
        return None

    def _job_data(self, job: JobInfo, column: int, role: int) -> Any:
        simple = {JOB_ROLE: job, NAME_ROLE: job.name, DETAILS_ROLE: False,
                  BADGES_ROLE: badges_of(job),
                  RUNNING_ROLE: self.state.running_text(job.name, self._mono()),
                  OUTCOME_ROLE: job.last_run.outcome if job.last_run else ""}
        if role in simple:
            return simple[role]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(job, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(job, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == COL_LAST_RUN and job.last_run:
            colour = OUTCOME_COLOURS.get(job.last_run.outcome)
            return QColor(colour) if colour else None
        return None

    def _display(self, job: JobInfo, column: int) -> str:
        if column == COL_NAME:
            return job.name
        if column == COL_BADGES:  # painted by the badge delegate; text for plain views
            return " ".join(b.text for b in badges_of(job))
        if column == COL_DESCRIPTION:
            return job.description or job.title
        if column == COL_LAST_RUN:
            return last_run_text(job, self._clock())
        return self.state.running_text(job.name, self._mono())

    def _tooltip(self, job: JobInfo, column: int) -> str | None:
        if column == COL_NAME and job.title:
            return job.title
        if column == COL_DESCRIPTION and job.warnings:
            return "\n".join(job.warnings)
        return None


class JobsFilterProxy(QSortFilterProxyModel):
    """The Manage page's filters (all must hold) and search box, over :class:`JobsModel`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._filters: frozenset[str] = frozenset()
        self._search = ""

    @property
    def filters(self) -> frozenset[str]:
        return self._filters

    def set_filter(self, name: str, on: bool) -> None:
        if name not in FILTERS:
            raise ValueError(f"no filter {name!r}")
        self._refilter(lambda: setattr(self, "_filters", self._filters | {name} if on
                                       else self._filters - {name}))

    def set_search(self, text: str) -> None:
        self._refilter(lambda: setattr(self, "_search", text))

    def _refilter(self, change: Callable[[], None]) -> None:
        self.beginFilterChange()
        change()
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        if source_parent.isValid():
            return True  # a details row follows its job
        model = self.sourceModel()
        job = model.job_at(source_row) if isinstance(model, JobsModel) else None
        return job is not None and matches(job, self._filters, self._search)
