"""A worker's end is seen through a pidfd (one poll), and through /proc where the
kernel has none: both call a zombie ended."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from hub.engine.pool import exit_watch, has_ended


def test_a_pidfd_poll_tells_a_live_process_from_an_ended_one() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        watch = exit_watch(child.pid)
        assert watch is not None
        fd, poll = watch
        assert poll.poll(0) == [] and not has_ended(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        # Dead but not reaped: a zombie, as a worker is until the pool's reader waits.
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        assert poll.poll(0) != [] and has_ended(child.pid)
        os.close(fd)
    finally:
        child.kill()
        child.wait()


def test_no_pidfd_means_no_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pid: int) -> int:
        raise OSError("no pidfds here")

    monkeypatch.setattr(os, "pidfd_open", refuse)
    assert exit_watch(os.getpid()) is None
