"""A run's console in the hub's own log: each line as ``[WebJob:<job>] <level> <text>``
on the ``webhub.job`` logger, with the run's fields on the record (``run``, ``job``,
``ref``, ``caller``: ``run=<id>`` in the text log, keys in the JSON one).

The lines come from the engine, already masked with the run's secret values (and the
hub's log mask holds those values while the run is in flight). A watched run (a live
console: streaming, the debugger) has its lines logged as they arrive; any other run
has them logged when it ends, which is when the hub first sees them (the worker keeps
an unwatched run's console and sends it with the outcome: the cheap path).

``WEBJOB_LOG_LINES`` caps the lines one run writes here (0: none), and
:data:`RUN_CHARS` the characters of the job's text they hold; past either, one line
says how many lines were left out. A line keeps the first :data:`LINE_CHARS` characters
of the job's text and says how many more there were (the run's own console is as it
was, and history keeps its own caps): one run cannot make the log, or the event loop
writing it, carry megabytes. The job's text is made one log line whatever it holds:
control and line-separator characters as escapes, lone surrogates as U+FFFD.

The lines logged at a run's end are one batch: one record is made in full and the
others are copies of it with their own level and text (the same moment, within
microseconds of each other anyway), and the hub's handler writes them in one write
(:func:`hub.logsetup.one_write`). Each still passes every filter and the formatter.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from hub.history.record import MAX_LOG_LINES
from hub.logsetup import RunFields, one_write
from shared.ndjson import LogLine
from shared.text import clean_text

__all__ = ["JOB_LOG", "LINE_CHARS", "RUN_CHARS", "ServerConsole", "console_log_level",
           "console_log_text", "cut_console_text"]

JOB_LOG = logging.getLogger("webhub.job")
LINE_CHARS = 8 * 1024  # of a job's text in one log line
RUN_CHARS = 256 * 1024  # of a job's text in the log lines of one run

_LEVELS = {"error": logging.ERROR, "warn": logging.WARNING, "info": logging.INFO,
           "log": logging.INFO, "debug": logging.DEBUG}
# C0 and C1 controls but the tab, DEL, and the Unicode line and paragraph separators.
_LINE_BREAKERS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(char: str) -> str:
    return repr(char)[1:-1] if char.isascii() or ord(char) < 0x100 else f"\\u{ord(char):04x}"


def console_log_level(level: str) -> int:
    """The logging level of a console level (an unknown one is INFO)."""
    return _LEVELS.get(level, logging.INFO)


def console_log_text(job: str, level: str, text: str) -> str:
    """The log message for one console line: one line of writable text."""
    message = f"[WebJob:{job}] {level} {clean_text(text)}"
    return _LINE_BREAKERS.sub(lambda m: _escape(m.group()), message)


def cut_console_text(text: str, limit: int = LINE_CHARS) -> str:
    """``text``, or its first ``limit`` characters (a surrogate pair kept whole) and
    how many more there were."""
    if len(text) <= limit:
        return text
    end = limit - 1 if limit and "\ud800" <= text[limit - 1] <= "\udbff" else limit
    return f"{text[:end]}\u2026 ({len(text) - end} more characters)"


class ServerConsole:
    """One run's console lines on their way to the hub's log: at most ``cap`` of them,
    each with at most ``line_chars`` of the job's text, ``run_chars`` in all."""

    def __init__(self, cap: int, fields: RunFields, *, line_chars: int = LINE_CHARS,
                 run_chars: int = RUN_CHARS) -> None:
        self.cap = cap
        self.fields = fields
        self.line_chars = line_chars
        self.run_chars = run_chars
        self.logged = 0
        self.chars = 0  # of the job's text logged
        self.dropped = 0
        self.out_of_chars = False  # the characters ran out before the lines did
        self.watched = False
        self._extra = {"run": fields.run, "job": fields.job, "ref": fields.ref,
                       "caller": fields.caller}
        self._batching = False  # inside ended(): the lines are one batch
        self._batch: dict[str, Any] | None = None  # the batch's first record, as made

    def watching(self, on_log: Callable[[LogLine], None] | None
                 ) -> Callable[[LogLine], None] | None:
        """``on_log`` with each line logged first; ``None`` stays ``None`` (an unwatched
        run's lines are logged at its end, see :meth:`ended`)."""
        if on_log is None or self.cap <= 0:
            return on_log
        self.watched = True

        def logged_then(line: LogLine) -> None:
            self.write(line)
            on_log(line)

        return logged_then

    def write(self, line: LogLine) -> None:
        level = console_log_level(line.level)
        if self.cap <= 0 or not JOB_LOG.isEnabledFor(level):
            return
        room = min(self.line_chars, self.run_chars - self.chars)
        if self.logged >= self.cap or room <= 0:
            self.out_of_chars = self.out_of_chars or self.logged < self.cap
            self.dropped += 1
            return
        self.logged += 1
        self.chars += min(len(line.message), room)
        text = cut_console_text(line.message, room)
        JOB_LOG.handle(self._record(level, console_log_text(self.fields.job, line.level, text)))

    def _record(self, level: int, message: str) -> logging.LogRecord:
        """A record of ``message`` (no arguments: it is the text as it stands), as
        ``JOB_LOG.log`` makes it; in a batch, a copy of the batch's first one as it
        was made (before any filter saw it)."""
        first = self._batch
        if first is None:
            path, line, func, _ = JOB_LOG.findCaller()
            record = JOB_LOG.makeRecord(JOB_LOG.name, level, path, line, message, (), None,
                                        func, self._extra)
            if self._batching:
                self._batch = dict(record.__dict__)
            return record
        record = logging.LogRecord.__new__(logging.LogRecord)
        record.__dict__.update(first)
        record.levelno, record.levelname, record.msg = level, logging.getLevelName(level), message
        return record

    def ended(self, lines: Sequence[LogLine]) -> None:
        """The run is over: an unwatched run's ``lines`` logged now, then the count of
        lines past the cap, if any."""
        with one_write():
            self._batching = True
            try:
                if not self.watched:
                    for line in lines:
                        self.write(line)
            finally:
                self._batching, self._batch = False, None
            if self.dropped:
                JOB_LOG.warning(
                    "[WebJob:%s] warn %d more console lines not logged (%s); history keeps "
                    "up to %d", self.fields.job, self.dropped, self._spent(), MAX_LOG_LINES,
                    extra=self._extra)

    def _spent(self) -> str:
        if self.out_of_chars:
            return f"{self.run_chars} characters of console text a run"
        return f"WEBJOB_LOG_LINES={self.cap}"
