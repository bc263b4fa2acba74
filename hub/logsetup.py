"""The hub's log: one handler on stderr, as text (``WEBHUB_LOG_FORMAT=text``) or one
JSON object a line (``json``, through python-json-logger), for the hub's own loggers
and uvicorn's alike (``webhub serve`` hands uvicorn no logging set-up of its own, so
its records reach this handler).

Every record says which run it is about when it is written during one: the runner
sets :func:`run_fields` around a run (a contextvar, so only that run's task and what
it starts see it), and a record may carry the fields itself (``extra=``, as the job
console lines do, which are written from the worker's reader). In text the run is
``run=<id>`` before the message, where no text inside the message can forge it.

The handler's filters, in order: the run's fields, the access log's query mask, then
:mod:`hub.secrets.logmask` (secret values, then text the stream can write on one line).

Inside :func:`one_write`, the lines the hub's handler formats are written to its stream
together when the block ends (a run's console lines, logged at its end: one write and
one flush instead of one each a line; every line is formatted and filtered as ever).
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import re
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import parse_qsl, quote, urlencode

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

from hub.secrets.logmask import CLEAN_LOG_TEXT, LOG_MASK, install_log_mask, shown_trace

__all__ = ["RUN_FIELD_NAMES", "RunFields", "configure", "hub_handler", "mask_query",
           "one_write", "run_fields", "uvicorn_options"]

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
RUN_FIELD_NAMES = ("run", "job", "ref", "caller")
# Query parameters whose value the access log never shows.
_SECRET_PARAM = re.compile(r"token|secret|passw|key|sig|auth|code|session|credential", re.I)


@dataclass(frozen=True)
class RunFields:
    run: str
    job: str
    ref: str
    caller: str


_CURRENT_RUN: ContextVar[RunFields | None] = ContextVar("webhub_run", default=None)


@contextlib.contextmanager
def run_fields(fields: RunFields) -> Iterator[None]:
    """Records written in this context (and the tasks it starts) name the run."""
    token = _CURRENT_RUN.set(fields)
    try:
        yield
    finally:
        _CURRENT_RUN.reset(token)


class _RunFieldsFilter(logging.Filter):
    """The current run's fields on a record that does not carry its own."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = _CURRENT_RUN.get()
        if fields is not None and not hasattr(record, "run"):
            for name in RUN_FIELD_NAMES:
                setattr(record, name, getattr(fields, name))
        return True


def mask_query(path: str) -> str:
    """``path`` with the value of every query parameter named like a credential as
    ``***`` (an API key or a sign-in code in a URL stays out of the access log)."""
    base, mark, query = path.partition("?")
    if not mark:
        return path
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(_SECRET_PARAM.search(name) for name, _ in pairs):
        return path
    shown = [(name, "***" if _SECRET_PARAM.search(name) else value) for name, value in pairs]
    return f"{base}?{urlencode(shown, quote_via=quote, safe='*')}"


class _AccessQueryMask(logging.Filter):
    """uvicorn's access line (client, method, path, HTTP version, status) with its
    path's credential-like query values masked."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) >= 3:
            record.args = (*args[:2], mask_query(str(args[2])), *args[3:])
        return True


class _TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)
        # The last record's time as written: the lines of one run's console share it.
        self._last_time: tuple[float, str] = (-1.0, "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        created, shown = self._last_time
        if created != record.created or datefmt is not None:
            shown = super().formatTime(record, datefmt)
            if datefmt is None:
                self._last_time = (record.created, shown)
        return shown

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        run = getattr(record, "run", None)
        if run is None:
            return line
        head = f"{record.name}: "
        at = line.find(head)
        return f"{line[:at]}{record.name} run={run}: {line[at + len(head):]}"


# The record _JsonFormatter is formatting: its formatException is handed only the
# exception, and the record's exc_text is the one the filters masked and cleaned.
_FORMATTING: ContextVar[logging.LogRecord | None] = ContextVar("webhub_json_record",
                                                               default=None)


class _JsonFormatter(JsonFormatter):
    """python-json-logger formats the traceback again from ``exc_info``: here it is the
    record's ``exc_text`` (masked and cleaned by the filters), or one made so."""

    # The last record's time as written: the lines of one run's console share it.
    _last_time: tuple[float, str] = (-1.0, "")

    def format(self, record: logging.LogRecord) -> str:
        token = _FORMATTING.set(record)
        try:
            return super().format(record)
        finally:
            _FORMATTING.reset(token)

    def formatException(self, ei: Any) -> str:  # type: ignore[override]
        record = _FORMATTING.get()
        if record is not None and record.exc_info is ei and record.exc_text is not None:
            return record.exc_text
        return shown_trace(logging.Formatter.formatException(self, ei))

    def formatStack(self, stack_info: str) -> str:  # type: ignore[override]
        return shown_trace(stack_info)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        created, shown = self._last_time
        if created != record.created:
            moment = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
            shown = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            self._last_time = (record.created, shown)
        return shown


def _json_formatter(node: str) -> logging.Formatter:
    return _JsonFormatter(
        "%(asctime)s %(levelname)s %(name)s %(message)s",
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        static_fields={"node": node} if node else None,
        # uvicorn's copy of its message with terminal colours: the message is enough.
        reserved_attrs=[*RESERVED_ATTRS, "color_message"])


def _formatter(log_format: str, node: str) -> logging.Formatter:
    return _json_formatter(node) if log_format == "json" else _TextFormatter()


class _HubHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler :func:`configure` owns (so a second call replaces it)."""

    def emit(self, record: logging.LogRecord) -> None:
        pending = _PENDING.get()
        if pending is None or pending.written:
            super().emit(record)
            return
        try:
            pending.lines.setdefault(self, []).append(
                (record, self.format(record) + self.terminator))
        except RecursionError:  # as StreamHandler.emit
            raise
        except Exception:
            self.handleError(record)

    def write_pending(self, lines: list[tuple[logging.LogRecord, str]]) -> None:
        """The lines formatted inside :func:`one_write`, in one write and one flush."""
        self.acquire()
        try:
            self.stream.write("".join(text for _, text in lines))
            self.flush()
        except RecursionError:
            raise
        except Exception:
            self.handleError(lines[-1][0])
        finally:
            self.release()


class _Pending:
    """The lines each hub handler has formatted inside one :func:`one_write` block."""

    def __init__(self) -> None:
        self.lines: dict[_HubHandler, list[tuple[logging.LogRecord, str]]] = {}
        # Once the block has written them: a task started inside it (which carries the
        # context along) writes at once from then on.
        self.written = False


_PENDING: ContextVar[_Pending | None] = ContextVar("webhub_log_pending", default=None)


@contextlib.contextmanager
def one_write() -> Iterator[None]:
    """The records this block has the hub's handlers write reach each stream in one
    write at its end, in order (only this context's: other threads and tasks write as
    they log). Nested, the outermost block writes."""
    if _PENDING.get() is not None:
        yield
        return
    pending = _Pending()
    token = _PENDING.set(pending)
    try:
        yield
    finally:
        _PENDING.reset(token)
        pending.written = True
        for handler, lines in pending.lines.items():
            handler.write_pending(lines)


def hub_handler(log_format: str = "text", node: str = "",
                stream: TextIO | None = None) -> logging.Handler:
    """The hub's handler: ``log_format`` on ``stream`` (stderr), with every filter."""
    handler = _HubHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(_formatter(log_format, node))
    for log_filter in (_RunFieldsFilter(), _AccessQueryMask(), LOG_MASK, CLEAN_LOG_TEXT):
        handler.addFilter(log_filter)
    return handler


def configure(level: str, log_format: str = "text", node: str = "") -> None:
    """The root logger writes to stderr in ``log_format`` at ``level``; uvicorn's
    loggers hand their records to it. Idempotent: a later call (once the settings
    are read) replaces the handler an earlier one made."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _HubHandler)]:
        root.removeHandler(old)
    root.addHandler(hub_handler(log_format, node))
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uvicorn_log = logging.getLogger(name)
        uvicorn_log.handlers.clear()
        uvicorn_log.propagate = True
    install_log_mask()


def uvicorn_options(access_log: bool) -> dict[str, Any]:
    """What ``uvicorn.run`` is given so its lines go through :func:`configure`'s
    handler: no logging set-up of its own, and its access log on or off."""
    return {"log_config": None, "access_log": access_log}
