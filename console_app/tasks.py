"""The one way the console does slow work: off the GUI thread, results back on it.

Every hub call goes through :class:`TaskManager`. ``run`` takes a blocking
function and calls ``on_done(result)`` or ``on_error(exc)`` later on the main
thread; ``stream`` does the same for each item of a generator and hands back a
:class:`~console_app.client.connection.CancelToken` that ends it. Callbacks are
queued under a lock and drained by one queued signal, so they run in the order
their work finished, never on a worker thread (after anki's ``taskman``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from PySide6.QtCore import QObject, Qt, Signal

from console_app.client.connection import CancelToken

log = logging.getLogger(__name__)

T = TypeVar("T")
Closure = Callable[[], object]


def _log_error(exc: Exception) -> None:
    log.info("background task failed: %s", exc)


class TaskManager(QObject):
    sig_closures_pending = Signal()
    sig_busy_changed = Signal(bool)  # the status bar shows a spinner while True

    def __init__(self, max_workers: int = 6, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="hub-call")
        self._lock = threading.Lock()
        self._closures: list[Closure] = []
        self._in_flight = 0
        self._closed = False
        self.sig_closures_pending.connect(self._drain, Qt.ConnectionType.QueuedConnection)

    # -- the two ways in -------------------------------------------------------------

    def run(self, work: Callable[[], T], on_done: Callable[[T], object] | None = None,
            on_error: Callable[[Exception], object] | None = None) -> Future[None]:
        """``work()`` on a worker thread; its result or failure back on this one."""
        done, failed = on_done or (lambda _r: None), on_error or _log_error

        def task() -> None:
            try:
                result = work()
            except Exception as exc:  # handed to the GUI, which shows it
                # Bound now: Python unbinds ``exc`` when the except block ends.
                self._post(lambda err=exc: failed(err))  # type: ignore[misc]
            else:
                self._post(lambda: done(result))

        return self._submit(task)

    def stream(self, items: Callable[[CancelToken], Iterable[T]], on_item: Callable[[T], object],
               on_done: Callable[[], object] | None = None,
               on_error: Callable[[Exception], object] | None = None) -> CancelToken:
        """Each item of ``items(cancel)`` to ``on_item`` as it comes; cancel ends it.

        After a cancel no further callback runs, not even ``on_done``."""
        cancel = CancelToken()
        finished, failed = on_done or (lambda: None), on_error or _log_error

        def guarded(fn: Callable[[], object]) -> Closure:
            def call() -> None:
                if not cancel.cancelled:
                    fn()
            return call

        def task() -> None:
            try:
                for item in items(cancel):
                    if cancel.cancelled:
                        return
                    self._post(guarded(lambda item=item: on_item(item)))  # type: ignore[misc]
            except Exception as exc:
                self._post(guarded(lambda err=exc: failed(err)))  # type: ignore[misc]
            else:
                self._post(guarded(finished))

        self._submit(task)
        return cancel

    def shutdown(self) -> None:
        """Stop taking work; callbacks still queued are dropped (their widgets are gone)."""
        with self._lock:
            self._closed = True
            self._closures.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)

    @property
    def busy(self) -> bool:
        return self._in_flight > 0

    # -- plumbing ----------------------------------------------------------------------

    def _submit(self, task: Closure) -> Future[None]:
        self._count(+1)

        def counted() -> None:
            try:
                task()
            finally:
                self._post(lambda: self._count(-1))

        return self._executor.submit(counted)

    def _count(self, delta: int) -> None:
        was = self._in_flight > 0
        self._in_flight += delta
        if (self._in_flight > 0) != was:
            self.sig_busy_changed.emit(self._in_flight > 0)

    def _post(self, closure: Closure) -> None:
        with self._lock:
            if self._closed:
                return
            self._closures.append(closure)
        self.sig_closures_pending.emit()

    def _drain(self) -> None:
        with self._lock:
            closures, self._closures = self._closures, []
        for closure in closures:
            try:
                closure()
            except Exception:  # one broken callback must not swallow the others
                log.exception("a console callback failed")
