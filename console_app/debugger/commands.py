"""Debugger commands one after another, in the order the owner gave them.

``TaskManager.run`` spreads calls over several worker threads, so two commands sent
back to back may reach the hub in either order: a breakpoint set just before
Continue could arrive after it, and the run would sail past. Commands to one session
therefore go through this queue: the next is sent when the previous has answered."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from console_app.tasks import TaskManager

__all__ = ["CommandQueue"]

Done = Callable[[Any], None]
Failed = Callable[[Exception], None]


class CommandQueue:
    def __init__(self, tasks: TaskManager, on_error: Failed) -> None:
        self._tasks = tasks
        self._on_error = on_error
        self._waiting: deque[tuple[Callable[[], Any], Done | None, Failed | None]] = deque()
        self._busy = False

    def send(self, work: Callable[[], Any], on_done: Done | None = None,
             on_error: Failed | None = None) -> None:
        """Queue ``work`` (a blocking hub call); its answer goes to ``on_done``."""
        self._waiting.append((work, on_done, on_error))
        self._next()

    @property
    def busy(self) -> bool:
        return self._busy or bool(self._waiting)

    def _next(self) -> None:
        if self._busy or not self._waiting:
            return
        work, done, failed = self._waiting.popleft()
        self._busy = True

        def finished(result: Any) -> None:
            self._busy = False
            try:
                if done is not None:
                    done(result)
            finally:
                self._next()

        def errored(exc: Exception) -> None:
            self._busy = False
            try:
                (failed or self._on_error)(exc)
            finally:
                self._next()

        self._tasks.run(work, finished, errored)
