"""Replaying a recorded console: all at once (the default) or at recorded pace.

The pace is kept by one single-shot QTimer re-armed for each line's wait, so the GUI
thread never sleeps and a new replay or :meth:`ReplayPlayer.stop` ends the old one."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from console_app.models.history import MAX_GAP_MS, replay_plan
from console_app.run.console import ConsoleModel
from shared.ndjson import LogLine

__all__ = ["ReplayPlayer"]


class ReplayPlayer(QObject):
    sig_finished = Signal()          # every line is in the console model
    sig_progress = Signal(int, int)  # lines shown, lines in all

    def __init__(self, console: ConsoleModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.console = console
        self._plan: list[tuple[int, LogLine]] = []
        self._next = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._step)
        self.speed = 1.0                 # 2.0 plays twice as fast as recorded

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def play(self, logs: tuple[LogLine, ...] | list[LogLine], paced: bool,
             max_gap_ms: int = MAX_GAP_MS) -> None:
        self.stop()
        self.console.clear()
        if not paced:
            self.console.extend(logs)
            self.sig_progress.emit(len(logs), len(logs))
            self.sig_finished.emit()
            return
        self._plan, self._next = replay_plan(logs, max_gap_ms), 0
        self._arm()

    def stop(self) -> None:
        self._timer.stop()
        self._plan, self._next = [], 0

    def finish_now(self) -> None:
        """Skip the waits: show the rest at once."""
        if not self._plan:
            return
        rest = [entry for _, entry in self._plan[self._next:]]
        total = len(self._plan)
        self.stop()
        self.console.extend(rest)
        self.sig_progress.emit(total, total)
        self.sig_finished.emit()

    def _arm(self) -> None:
        if self._next >= len(self._plan):
            total = len(self._plan)
            self.stop()
            self.sig_progress.emit(total, total)
            self.sig_finished.emit()
            return
        wait = self._plan[self._next][0]
        self._timer.start(max(0, int(wait / max(self.speed, 0.01))))

    def _step(self) -> None:
        self.console.append(self._plan[self._next][1])
        self._next += 1
        self.sig_progress.emit(self._next, len(self._plan))
        self._arm()
