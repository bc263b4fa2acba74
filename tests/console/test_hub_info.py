"""The connect-time HubInfo as the status bar shows it, signed in or not."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from console_app.shell.connecting import HubInfo, describe_store
from console_app.shell.status_bar import HubStatusBar
from shared.wire.auth import CallerView
from shared.wire.health import Health
from shared.wire.store import StoreInfo

HEALTH = Health(ok=True, node="node-a", workersRunning=1, workersQueued=2, workersMax=4,
                workers=4, idle=3, starting=0)
OWNER = CallerView(kind="user", id=1, name="owner", userClass="OWNER")
DB_STORE = StoreInfo(store="db", database="postgresql", jobs=12)


def test_a_store_is_described_by_its_kind_database_and_jobs() -> None:
    assert describe_store(DB_STORE) == "db (postgresql) · 12 jobs"
    assert describe_store(StoreInfo(store="files", database=None, jobs=0)) == "files · 0 jobs"


def test_the_user_name_is_empty_when_unknown() -> None:
    assert HubInfo(user=OWNER).user_name == "owner"
    assert HubInfo().user_name == ""
    system = CallerView(kind="system", id="system", name=None, userClass="OWNER")
    assert HubInfo(user=system).user_name == ""


def test_the_status_bar_shows_what_was_read_at_connect(qtbot: QtBot) -> None:
    bar = HubStatusBar()
    qtbot.addWidget(bar)
    bar.show_info("http://hub:8700", HubInfo(HEALTH, OWNER, DB_STORE))
    assert bar.hub.text() == "Hub: http://hub:8700" and bar.node.text() == "Node: node-a"
    assert bar.store.text() == "Store: db (postgresql) · 12 jobs"
    assert bar.user.text() == "Signed in: owner"
    bar.set_job_count(13)
    assert bar.store.text() == "Store: db (postgresql) · 13 jobs"


def test_a_session_not_signed_in_shows_what_it_can(qtbot: QtBot) -> None:
    bar = HubStatusBar()
    qtbot.addWidget(bar)
    bar.show_info("http://hub:8700", HubInfo())
    assert bar.user.text() == "Signed in: ?" and bar.node.text() == ""
    bar.set_job_count(3)
    assert bar.store.text() == "Store: ? · 3 jobs"
    system = CallerView(kind="system", id="system", name=None, userClass="OWNER")
    bar.show_info("http://hub:8700", HubInfo(user=system))
    assert bar.user.text() == "Signed in: system"
