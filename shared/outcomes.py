"""How a run ended and what started it, as the hub records them and the console shows
them: one definition for both sides (values are the wire's strings)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["OUTCOMES", "SOURCES", "Outcome", "RunSource"]


class Outcome(StrEnum):
    SUCCESS = "success"
    FAILED = "failed"
    RUNNING = "running"           # not ended yet (or the hub ended before it could say)
    INTERRUPTED = "interrupted"   # its worker or node went away mid-run
    MISSED = "missed"             # a scheduled occurrence that never ran


class RunSource(StrEnum):
    HTTP = "http"          # a request to the job's URL
    EDITOR = "editor"      # the console's run dialog, on the saved job
    ADHOC = "adhoc"        # code sent to /execute, never saved
    SCHEDULE = "schedule"
    DEBUG = "debug"        # a step-debugger session


OUTCOMES: tuple[str, ...] = tuple(outcome.value for outcome in Outcome)
SOURCES: tuple[str, ...] = tuple(source.value for source in RunSource)
