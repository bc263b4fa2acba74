"""The jobs' bodies: the job list, a save and its checks, runs in flight, deleted jobs,
a stop. A run's own answer is the job's, not a shape here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shared.wire.history import JobStats
from shared.wire.schedules import JobScheduleRef

__all__ = ["AvailableJob", "CheckAnswer", "CheckRequest", "CheckedProblem", "DeletedJobInfo",
           "DeletedJobs", "JobDeletedAnswer", "JobLimits", "JobList", "JobSaved",
           "JobSummary", "PassedOn", "RunInFlight", "RunningList",
           "SaveRequest", "StoppedHere"]


@dataclass(frozen=True)
class JobLimits:
    """A job's resolved limits, or the hub's maxima (``WEBJOB_MAX_*``)."""

    runtimeMs: int
    memoryMb: int
    cpuMs: int


@dataclass(frozen=True)
class JobSummary:
    """A job as a save, an upload or a restore answers it (and ``/available`` lists it)."""

    name: str
    title: str  # the header's Name, else the job's name
    description: str | None
    author: str | None
    version: str | None  # the header's Version text, not a saved version
    lastUpdated: str | None
    access: str  # public | user | owner
    mode: str  # job | page
    secrets: tuple[str, ...]  # the header's Secrets
    limits: JobLimits
    extended: bool  # it asks for more than a default limit
    warnings: tuple[str, ...]
    store: str  # files | db
    modified: float  # epoch seconds
    currentVersion: int | None  # what a save sends back as baseVersion; null: not known


@dataclass(frozen=True)
class AvailableJob(JobSummary):
    """One job of ``GET /available``."""

    stats: JobStats  # from the run history (shared.wire.history)
    schedules: tuple[JobScheduleRef, ...]
    scheduled: bool  # one of its schedules is enabled


@dataclass(frozen=True)
class JobList:
    """``GET /available``: the jobs, where they are kept, and what the editor checks
    and completes against (the approved ``require()`` modules and the limit maxima).
    An older hub sends neither: absent, they are null and the editor goes without."""

    jobs: tuple[AvailableJob, ...]
    store: str
    modules: tuple[str, ...] | None = None
    maxima: JobLimits | None = None


@dataclass(frozen=True)
class RunInFlight:
    jobId: str
    jobName: str
    source: str  # http | editor | adhoc | schedule | debug
    runtime: int  # ms at the moment of asking
    node: str


@dataclass(frozen=True)
class RunningList:
    """``GET /running``: this node's runs, then the other live nodes'."""

    running: tuple[RunInFlight, ...]


@dataclass(frozen=True)
class SaveRequest:
    """``POST /save``'s body. ``baseVersion``: the version the editor opened (0 for a
    new job); null or absent saves over whatever is there."""

    name: str
    code: str
    baseVersion: int | None = None


@dataclass(frozen=True)
class JobSaved:
    """A save, an upload or a restore: the job as it is now."""

    success: bool
    job: JobSummary


@dataclass(frozen=True)
class CheckRequest:
    """``POST /check``'s body: the code to check, nothing saved."""

    code: str


@dataclass(frozen=True)
class CheckedProblem:
    """One problem of a check; 1-based line and column."""

    line: int
    column: int
    message: str
    severity: Literal["error", "warning"]
    source: Literal["syntax", "header", "strict"]


@dataclass(frozen=True)
class CheckAnswer:
    """``ok``: it parses (a save would not be refused for its syntax); problems in line
    order."""

    ok: bool
    problems: tuple[CheckedProblem, ...]


@dataclass(frozen=True)
class DeletedJobInfo:
    name: str
    deletedAt: float | None  # epoch seconds; null: deleted before deletions were recorded
    deletedBy: str | None
    lastVersion: int


@dataclass(frozen=True)
class DeletedJobs:
    """``GET /deleted``: newest deletion first."""

    jobs: tuple[DeletedJobInfo, ...]


@dataclass(frozen=True)
class JobDeletedAnswer:
    success: bool


@dataclass(frozen=True)
class StoppedHere:
    """``POST /{jobId}/stop`` on the node that runs it: the run is stopped."""

    success: bool
    stopped: Literal[True]
    node: str


@dataclass(frozen=True)
class PassedOn:
    """The stop was passed on to the node that runs it; the run ends shortly."""

    success: bool
    stopped: Literal[False]
    passedOn: bool
    node: str
