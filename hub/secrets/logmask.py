"""No secret value in the hub's log: a logging filter on the hub's handlers that
masks the values of the secrets of every run in flight on this node. And no text
the log cannot write: :class:`CleanLogText`, on the same handlers, writes a lone
surrogate in a message, its arguments or a traceback as U+FFFD (a stream that
encodes strictly would otherwise print "--- Logging error ---" instead of the line,
and the usual one an escape that is not the text).

A run holds its values (:meth:`LogMask.hold`) from before it starts until its last
log line is written; the filter masks whatever a log line would show of them (its
message, traceback and stack), whichever module logs it (a driver's error message
that quotes a value, say). A formatter that writes a traceback itself rather than the
record's ``exc_text`` must pass it through :func:`shown_trace`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator

from hub.engine.redaction import NO_SECRETS, Redactor
from shared.text import clean_text

__all__ = ["CLEAN_LOG_TEXT", "LOG_MASK", "CleanLogText", "LogMask", "install_log_mask",
           "shown_trace"]


# Every C0 and C1 control but the tab, and DEL.
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _shown_controls(text: str) -> str:
    """Control characters as escapes (``\\n``, ``\\x1b``): a message is one line, and a
    path or id from outside could otherwise forge log lines or drive a terminal."""
    return _CONTROLS.sub(lambda m: repr(m.group())[1:-1], text)


class CleanLogText(logging.Filter):
    """A record's text as UTF-8 can carry it, its message on one line; text that is
    already clean costs one check of the formatted message. Tracebacks keep their
    lines (only their text is cleaned)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report
            return True
        cleaned = clean_text(message)
        if _CONTROLS.search(cleaned):
            cleaned = _shown_controls(cleaned)
        if cleaned is not message:
            record.msg, record.args = cleaned, None
        if record.exc_text is not None:
            record.exc_text = clean_text(record.exc_text)
        elif record.exc_info and record.exc_info[1] is not None:
            # Left for the formatter when clean (it writes the same text).
            trace = logging.Formatter().formatException(record.exc_info)
            cleaned = clean_text(trace)
            if cleaned is not trace:
                record.exc_text = cleaned
        if record.stack_info:
            record.stack_info = clean_text(record.stack_info)
        return True


class LogMask(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._held: Counter[str] = Counter()
        self._redactor = NO_SECRETS

    @contextlib.contextmanager
    def hold(self, values: Iterable[str]) -> Iterator[None]:
        held = [v for v in values if v]
        if not held:
            yield
            return
        self._change(held, 1)
        try:
            yield
        finally:
            self._change(held, -1)

    def _change(self, values: list[str], step: int) -> None:
        with self._lock:
            for value in values:
                self._held[value] += step
                if self._held[value] <= 0:
                    del self._held[value]
            self._redactor = Redactor(self._held) if self._held else NO_SECRETS

    def filter(self, record: logging.LogRecord) -> bool:
        redactor = self._redactor
        if not redactor:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report
            return True
        masked = redactor.text(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_text is not None:  # another handler's formatter got there first
            record.exc_text = redactor.text(record.exc_text)
        elif record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redactor.text(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redactor.text(record.stack_info)
        return True

    def masked(self, text: str) -> str:
        """``text`` with the values held now masked."""
        return self._redactor.text(text)


LOG_MASK = LogMask()
CLEAN_LOG_TEXT = CleanLogText()


def shown_trace(text: str) -> str:
    """A traceback or stack as the filters leave a record's: the values held now
    masked, its text cleaned (its lines kept)."""
    return clean_text(LOG_MASK.masked(text))


def install_log_mask() -> None:
    """Put the mask and the text filter, in that order, on every handler of the root
    and uvicorn loggers (idempotent)."""
    for name in (None, "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            for log_filter in (LOG_MASK, CLEAN_LOG_TEXT):
                if log_filter not in handler.filters:
                    handler.addFilter(log_filter)
