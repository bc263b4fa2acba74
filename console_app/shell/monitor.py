"""Is the hub still there? A health poll every few seconds, never two at once.

The poll goes through a :class:`~console_app.tasks.TaskManager` like every hub
call. The main window gives the monitor a one-worker manager of its own, so polls
neither blink the busy indicator nor wait behind long runs in the shared pool."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from console_app.client.errors import describe_error
from console_app.tasks import TaskManager
from shared.wire.health import Health

Probe = Callable[[], Health]


class ConnectionMonitor(QObject):
    sig_connection_changed = Signal(bool)  # True: the hub answers again; False: it went away
    sig_health = Signal(object)            # every successful poll's /health answer: Health

    def __init__(self, probe: Probe, tasks: TaskManager, interval_ms: int = 3000,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._probe = probe
        self._tasks = tasks
        self.connected = True
        self.in_flight = False
        self.skipped = 0  # ticks that found the previous poll still waiting
        self.last_problem = ""
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.poll)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    @property
    def interval_ms(self) -> int:
        return self._timer.interval()

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    def poll(self) -> None:
        """Ask now, unless the previous answer is still awaited (a hung hub must not
        pile up requests)."""
        if self.in_flight:
            self.skipped += 1
            return
        self.in_flight = True
        self._tasks.run(self._probe, self._answered, self._failed)

    def _answered(self, health: Health) -> None:
        self.in_flight = False
        self.skipped = 0  # ticks that found the previous poll still waiting
        self.last_problem = ""
        self.sig_health.emit(health)
        self._set(True)

    def _failed(self, exc: Exception) -> None:
        self.in_flight = False
        self.last_problem = describe_error(exc)
        self._set(False)

    def _set(self, connected: bool) -> None:
        if connected != self.connected:
            self.connected = connected
            self.sig_connection_changed.emit(connected)
