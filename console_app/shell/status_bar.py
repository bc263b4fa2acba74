"""The main window's status bar: which hub, node and job store, who is signed in,
whether the hub answers, and a busy indicator while hub calls are in flight.

The job count starts as the hub's ``/store`` said at connect; from then on it is the
Manage list's own count (:meth:`HubStatusBar.set_job_count`, called by the page each
time its list loads, found through :func:`status_bar_of`), so the two always agree."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QStatusBar, QWidget

from console_app.shell.connecting import HubInfo, describe_store
from shared.wire.health import Health
from shared.wire.store import StoreInfo

# A session made without signing in never read /store: the Manage list's count is
# still worth showing, beside a kind nobody told us.
UNKNOWN_STORE = StoreInfo(store="?", database=None, jobs=0)


class HubStatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = QLabel()
        self.hub = QLabel()
        self.node = QLabel()
        self.store = QLabel()
        self.user = QLabel()
        self._store = UNKNOWN_STORE
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # indeterminate: we never know how long a hub call takes
        self.busy.setMaximumWidth(80)
        self.busy.setMaximumHeight(12)
        self.busy.setTextVisible(False)
        self.busy.setToolTip("Talking to the hub")
        self.busy.hide()
        for widget in (self.state, self.hub, self.node, self.store, self.user):
            self.addPermanentWidget(widget)
        self.addPermanentWidget(self.busy)
        self.set_connected(True)

    def show_info(self, url: str, info: HubInfo) -> None:
        self.hub.setText(f"Hub: {url}")
        if info.health is not None:  # else the first poll fills it in
            self.update_health(info.health)
        if info.store is not None:
            self._store = info.store
            self.store.setText(f"Store: {describe_store(info.store)}")
        who = (info.user.name or info.user.kind) if info.user is not None else "?"
        self.user.setText(f"Signed in: {who}")

    def update_health(self, health: Health) -> None:
        if health.node:
            self.node.setText(f"Node: {health.node}")
        # A worker serves up to runsPerWorker runs at once: runs and workers both count.
        workers = (f"{health.runsInFlight} runs on {health.workersRunning} of "
                   f"{health.workersMax} (up to {health.runsPerWorker} each) · "
                   f"{health.workersQueued} queued")
        self.node.setToolTip(f"Workers: {workers}")

    def set_job_count(self, count: int) -> None:
        """The number of jobs the list shows now."""
        self._store = dataclasses.replace(self._store, jobs=count)
        self.store.setText(f"Store: {describe_store(self._store)}")

    def set_connected(self, connected: bool) -> None:
        self.state.setText("● Connected" if connected else "● Hub unreachable — retrying")
        self.state.setStyleSheet("color: #2e7d32;" if connected else "color: #c62828;")

    def set_busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)


def status_bar_of(widget: QWidget) -> HubStatusBar | None:
    """The hub status bar of the main window ``widget`` is in, if it is in one."""
    window = widget.window()
    bar = window.statusBar() if isinstance(window, QMainWindow) else None
    return bar if isinstance(bar, HubStatusBar) else None
