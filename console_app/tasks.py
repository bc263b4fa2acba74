"""The one way the console does slow work: off the GUI thread, results back on it.

Every hub call goes through :class:`TaskManager`. ``run`` takes a blocking
function and calls ``on_done(result)`` or ``on_error(exc)`` later on the main
thread; ``stream`` does the same for each item of a generator and hands back a
:class:`~console_app.client.connection.CancelToken` that ends it. Results are
queued under a lock and drained by one queued signal, so callbacks run in the
order their work finished, never on a worker thread (after anki's ``taskman``).

A Qt object dies in the thread that drops the last reference to its Python
wrapper, and dying off the GUI thread crashes the process. The work functions
and callbacks often hold widgets, so a worker thread must never hold the last
reference to anything the GUI gave it: the GUI thread keeps each task's
functions in a registry until it has delivered the outcome, a worker drops its
own references before it reports, and what it reports (a result, an exception
and its traceback) is handed over in a box the GUI thread empties."""

from __future__ import annotations

import itertools
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from PySide6.QtCore import QObject, Qt, Signal

from console_app.client.connection import CancelToken

log = logging.getLogger(__name__)

T = TypeVar("T")
P = ParamSpec("P")
# Managers that were shut down: kept, so a worker still finishing is never the one
# that drops the last reference to a QObject.
_retired: list[TaskManager] = []


class Latest:
    """*Latest request wins* for one kind of call (a page's listing, a run's detail):
    each :meth:`start` supersedes the calls started before it, and the outcomes of a
    superseded call are dropped, so a slow old answer never overwrites a newer one::

        call = self._loads.start()
        tasks.run(work, call.wrap(self._loaded), call.wrap(self._failed))
    """

    def __init__(self) -> None:
        self.started = 0   # calls started so far

    def start(self) -> LatestCall:
        self.started += 1
        return LatestCall(self, self.started)

    def current(self) -> LatestCall:
        """The call started last, to tie more callbacks to it (a timer, a follow-up)."""
        return LatestCall(self, self.started)

    def supersede(self) -> None:
        """Drop the outcomes of every call started so far."""
        self.started += 1


@dataclass(frozen=True)
class LatestCall:
    owner: Latest
    number: int

    @property
    def current(self) -> bool:
        """No call of the same kind has started since this one."""
        return self.number == self.owner.started

    def wrap(self, callback: Callable[P, object]) -> Callable[P, None]:
        """``callback``, run only while this call is still the current one."""
        def call(*args: P.args, **kwargs: P.kwargs) -> None:
            if self.current:
                callback(*args, **kwargs)
        return call


def _log_error(exc: Exception) -> None:
    log.info("background task failed: %s", exc)


def _ignore(*_args: object) -> None:
    return None


@dataclass
class _Task:
    """A task's GUI-side references, alive until its outcome is delivered."""

    work: Callable[..., Any]
    on_item: Callable[[Any], object]
    on_done: Callable[..., object]
    on_error: Callable[[Exception], object]
    cancel: CancelToken | None = None
    pending: list[Any] = field(default_factory=list)  # the worker's one reference to work


@dataclass
class _Report:
    task_id: int
    kind: str        # item | done | failed
    value: Any = None


class TaskManager(QObject):
    sig_reports_pending = Signal()
    sig_busy_changed = Signal(bool)  # the status bar shows a spinner while True

    def __init__(self, max_workers: int = 6, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="hub-call")
        self._lock = threading.Lock()
        self._reports: list[_Report] = []
        self._tasks: dict[int, _Task] = {}   # touched on the GUI thread only
        self._ids = itertools.count(1)
        self._closed = False
        self.sig_reports_pending.connect(self._drain, Qt.ConnectionType.QueuedConnection)

    # -- the two ways in -------------------------------------------------------------

    def run(self, work: Callable[[], T], on_done: Callable[[T], object] | None = None,
            on_error: Callable[[Exception], object] | None = None) -> int:
        """``work()`` on a worker thread; its result or failure back on this one."""
        task = _Task(work, _ignore, on_done or _ignore, on_error or _log_error)
        return self._submit(task, _perform_call)

    def stream(self, items: Callable[[CancelToken], Iterable[T]], on_item: Callable[[T], object],
               on_done: Callable[[], object] | None = None,
               on_error: Callable[[Exception], object] | None = None) -> CancelToken:
        """Each item of ``items(cancel)`` to ``on_item`` as it comes; cancel ends it.

        After a cancel no further callback runs, not even ``on_done``."""
        cancel = CancelToken()
        task = _Task(items, on_item, on_done or _ignore, on_error or _log_error, cancel)
        self._submit(task, _perform_stream)
        return cancel

    def shutdown(self) -> None:
        """Stop taking work; outcomes still to come are never delivered (their widgets
        are gone). The registry is kept, not cleared: a worker still running must not
        be left holding the last reference to what it was given."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
        _retired.append(self)

    @property
    def busy(self) -> bool:
        return bool(self._tasks) and not self._closed

    # -- plumbing ----------------------------------------------------------------------

    def _submit(self, task: _Task, perform: Callable[..., None]) -> int:
        task_id = next(self._ids)
        was_busy = self.busy
        self._tasks[task_id] = task
        task.pending.append(task.work)
        if not was_busy:
            self.sig_busy_changed.emit(True)
        self._executor.submit(perform, weakref.ref(self), task_id, task.pending, task.cancel)
        return task_id

    def receive(self, box: list[_Report]) -> None:
        """From a worker: take the one report in ``box``, leaving the worker none."""
        with self._lock:
            self._reports.append(box.pop())
        self.sig_reports_pending.emit()

    def _drain(self) -> None:
        with self._lock:
            reports, self._reports = self._reports, []
        for report in reports:
            try:
                self._deliver(report)
            except Exception:  # one broken callback must not swallow the others
                log.exception("a console callback failed")

    def _deliver(self, report: _Report) -> None:
        task = self._tasks.get(report.task_id)
        if task is None or self._closed:
            return  # shut down meanwhile
        if report.kind != "item":
            del self._tasks[report.task_id]
            if not self._tasks:
                self.sig_busy_changed.emit(False)
        if task.cancel is not None and task.cancel.cancelled:
            return
        if report.kind == "item":
            task.on_item(report.value)
        elif report.kind == "failed":
            task.on_error(report.value)
        elif task.cancel is not None:
            task.on_done()
        else:
            task.on_done(report.value)


# -- what runs on a worker thread: no strong reference outlives the report ------------

def _report(manager: weakref.ref[TaskManager], box: list[_Report]) -> None:
    owner = manager()
    if owner is not None and not owner._closed:
        owner.receive(box)
    else:
        _retired_reports.append(box.pop())  # never dropped here: it may hold widgets


_retired_reports: list[_Report] = []


def _perform_call(manager: weakref.ref[TaskManager], task_id: int, pending: list[Any],
                  _cancel: CancelToken | None) -> None:
    work = pending.pop()
    try:
        box = [_Report(task_id, "done", work())]
    except Exception as exc:  # handed to the GUI, which shows it
        box = [_Report(task_id, "failed", exc)]
    del work  # the GUI thread's registry still holds it
    _report(manager, box)


def _perform_stream(manager: weakref.ref[TaskManager], task_id: int, pending: list[Any],
                    cancel: CancelToken) -> None:
    box: list[_Report] = []
    items: Iterator[Any] = iter(())
    try:
        items = iter(pending.pop()(cancel))
        for item in items:
            if cancel.cancelled:
                break
            box.append(_Report(task_id, "item", item))
            del item
            _report(manager, box)
        box.append(_Report(task_id, "done"))
    except Exception as exc:
        box.append(_Report(task_id, "failed", exc))
    del items  # its frame may hold what the GUI gave it; the registry holds that too
    _report(manager, box)
