"""SIGTERM (what ``make run`` and service managers send) quits the console even when it
comes before the event loop runs: the first window is shown before ``exec()``."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from console_app.app import quit_on_interrupt

GIVE_UP_MS = 5000  # a lost quit leaves the loop running: end it, failed, after this


@pytest.fixture
def own_handlers() -> Iterator[None]:
    """The console's handlers for the test only; pytest's come back after."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_before_the_loop_runs_still_quits(qapp: QApplication, own_handlers: None,
                                                   sig: signal.Signals) -> None:
    keep_alive = quit_on_interrupt(qapp)
    give_up = QTimer()
    give_up.setSingleShot(True)
    give_up.timeout.connect(lambda: qapp.exit(1))
    give_up.start(GIVE_UP_MS)
    try:
        os.kill(os.getpid(), sig)  # handled here, before exec(): the loop is not running
        assert qapp.exec() == 0
    finally:
        give_up.stop()
        keep_alive.stop()
