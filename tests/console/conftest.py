"""Console tests: Qt offscreen, against a real hub process with the shipped jobs.

``console_hub`` is one shared hub for the console suite, with an owner (name
``owner``, password ``owner-pass``) and a user, and a few extra jobs that the
screens need (a slow one to stop, a failing one, a scheduled one)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# A console screen that calls the hub on the GUI thread fails its test
# (console_app/client/gui_guard.py).
os.environ["WEBJOBS_CONSOLE_CHECK_THREADS"] = "1"

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.session import HubSession
from console_app.tasks import TaskManager
from tests.hub.conftest import EXTRA_JOBS, HubProcess, assert_clean_log, launch_hub

OWNER_PASSWORD = "owner-pass"

CONSOLE_JOBS = {
    **EXTRA_JOBS,
    "report": "/*\nName: Weekly report\nDescription: Counts and lists\n*/\n"
              "console.log('counting')\nconsole.warn('half way')\n"
              "return { count: 3, items: ['a', 'b', 'c'], nested: { ok: true } }",
    "broken_later": "/*\nName: Breaks on purpose\n*/\nthrow new Error('it broke')",
}


@dataclass
class ConsoleHub:
    process: HubProcess
    owner_token: str
    user_token: str

    @property
    def url(self) -> str:
        return self.process.url

    def owner(self) -> HubConnection:
        return HubConnection(self.url, self.owner_token)


@pytest.fixture(scope="session")
def console_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleHub]:
    process = launch_hub(tmp_path_factory.mktemp("console-hub"), jobs=CONSOLE_JOBS)
    owner = process.add_user("owner", "OWNER", password=OWNER_PASSWORD)
    user = process.add_user("someone", "USER")
    yield ConsoleHub(process, owner, user)
    process.stop()
    assert_clean_log(process)


@pytest.fixture
def connection(console_hub: ConsoleHub) -> Iterator[HubConnection]:
    conn = console_hub.owner()
    yield conn
    conn.close()


@pytest.fixture
def tasks(qtbot: object) -> Iterator[TaskManager]:
    manager = TaskManager()
    yield manager
    manager.shutdown()


@pytest.fixture
def session(connection: HubConnection, tasks: TaskManager) -> HubSession:
    return HubSession(connection, tasks)


def ended_runs(conn: HubConnection, job: str) -> int:
    """How many of ``job``'s runs history holds as ended."""
    runs = conn.get("/api/webjobs/history", job=job, limit=500)["runs"]
    return len([r for r in runs if r["outcome"] != "running"])


def wait_recorded(qtbot: QtBot, conn: HubConnection, job: str, count: int) -> None:
    """History is written in the background: wait until ``count`` runs have ended."""
    qtbot.waitUntil(lambda: ended_runs(conn, job) >= count, timeout=10000)


@pytest.fixture
def private_settings(tmp_path: Path) -> Iterator[Path]:
    """QSettings in ``tmp_path`` for the test, never the real user's; the default
    format is put back afterwards, so later tests are not left on a deleted folder."""
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path))
    yield tmp_path
    QSettings.setDefaultFormat(QSettings.Format.NativeFormat)
