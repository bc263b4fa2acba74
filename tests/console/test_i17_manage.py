"""Issue 17, Manage in the real main window against a real hub: the status bar's job
count is the list's after upload, delete, refresh and reconnect; a browser that cannot
be opened leaves the address to copy."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.pages.create_dialog import TEMPLATES
from console_app.pages.deleted_jobs import DeletedJobsDialog
from console_app.pages.manage import ManagePage
from console_app.pages.manage_parts import Asker
from console_app.session import HubSession
from console_app.shell.connecting import read_info
from console_app.shell.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def window(qtbot: QtBot, connection: HubConnection, session: HubSession
           ) -> Iterator[MainWindow]:
    session.info = read_info(connection)
    win = MainWindow(session, monitor_interval_ms=60000)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


def loaded_manage(qtbot: QtBot, window: MainWindow) -> ManagePage:
    manage = window.page("Manage")
    assert isinstance(manage, ManagePage)
    qtbot.waitUntil(lambda: manage.model.rowCount() > 0, timeout=15000)
    return manage


def counted(window: MainWindow, manage: ManagePage) -> bool:
    return window.status.store.text().endswith(f" · {manage.model.rowCount()} jobs")


def test_the_status_bar_counts_the_list(qtbot: QtBot, window: MainWindow,
                                        connection: HubConnection, tmp_path: Path) -> None:
    manage = loaded_manage(qtbot, window)
    assert counted(window, manage)
    name = f"i17m_{uuid.uuid4().hex[:8]}"
    upload = tmp_path / f"{name}.job.js"
    upload.write_text(TEMPLATES[0].body(name))
    manage.asker = Asker(pick_file=lambda _t, _p: str(upload), confirm=lambda *_a: True)
    before = manage.model.rowCount()
    manage.upload_job()
    qtbot.waitUntil(lambda: manage.model.rowCount() == before + 1, timeout=10000)
    assert counted(window, manage)

    manage.delete_job(name)
    qtbot.waitUntil(lambda: manage.model.rowCount() == before, timeout=10000)
    assert counted(window, manage)

    behind = f"i17m_{uuid.uuid4().hex[:8]}"  # saved by someone else: F5 shows it
    api.save(connection, behind, TEMPLATES[0].body(behind))
    with qtbot.waitSignal(manage.sig_loaded, timeout=10000):
        window.refresh_current()
    assert manage.model.rowCount() == before + 1 and counted(window, manage)

    window.show_page("Metrics")  # away from the list while the hub comes back
    api.delete(connection, behind)
    window._connection_changed(False)
    window._connection_changed(True)
    with qtbot.waitSignal(manage.sig_loaded, timeout=10000):
        window.show_page("Manage")
    assert manage.model.rowCount() == before and counted(window, manage)


def test_a_browser_that_cannot_open_leaves_the_address_to_copy(
        qtbot: QtBot, window: MainWindow) -> None:
    manage = loaded_manage(qtbot, window)
    tried: list[QUrl] = []
    manage.asker = Asker(open_url=lambda url: tried.append(url) or False)
    manage.open_in_browser("public_ping")
    assert tried and tried[0].toString().endswith("/public_ping")
    note = manage.url_note
    assert note.isVisibleTo(manage) and note.url_edit.text() == tried[0].toString()
    note.copy_button.click()
    clipboard = QGuiApplication.clipboard()
    assert clipboard is not None and clipboard.text() == tried[0].toString()
    manage.asker = Asker(open_url=lambda _url: True, as_root=lambda: True)
    manage.open_in_browser("public_ping")  # as root a browser may refuse silently
    assert note.isVisibleTo(manage) and "root" in note.text_label.text()
    manage.asker = Asker(open_url=lambda _url: True, as_root=lambda: False)
    manage.open_in_browser("public_ping")
    assert not note.isVisibleTo(manage)


def test_deleted_jobs_are_listed_and_restored(qtbot: QtBot, window: MainWindow,
                                              connection: HubConnection) -> None:
    manage = loaded_manage(qtbot, window)
    name = f"i17d_{uuid.uuid4().hex[:8]}"
    api.save(connection, name, TEMPLATES[0].body(name))
    api.save(connection, name, TEMPLATES[0].body(name).replace("ok: true", "ok: 'second'"))
    api.delete(connection, name)
    dialog = manage.show_deleted()
    assert isinstance(dialog, DeletedJobsDialog)
    qtbot.waitUntil(lambda: dialog.select(name), timeout=10000)
    row = dialog.table.selectionModel().selectedRows()[0].row()
    shown = [dialog.model.index(row, c).data() for c in range(4)]
    assert shown[0] == name and shown[1].endswith(("(just now)", " ago)"))
    assert shown[2] == "owner" and shown[3] == "v2"
    with qtbot.waitSignal(dialog.sig_restored, timeout=10000):
        dialog.restore_button.click()
    assert "second" in api.code(connection, name)
    qtbot.waitUntil(lambda: manage.job(name) is not None, timeout=10000)  # the list knows
    qtbot.waitUntil(lambda: not dialog.select(name), timeout=10000)
    assert f"Restored {name}" in dialog.message.text() and counted(window, manage)
    api.save(connection, name, TEMPLATES[0].body(name))
    api.delete(connection, name)
    api.save(connection, name, TEMPLATES[0].body(name))  # a new job took the name meanwhile
    with qtbot.waitSignal(dialog.sig_loaded, timeout=10000):
        dialog.refresh()
    assert not dialog.select(name)  # the hub lists only names no job has now
    dialog.close()


def test_a_run_shorter_than_the_poll_brings_its_last_run_up_to_date(
        qtbot: QtBot, window: MainWindow, connection: HubConnection) -> None:
    """The page polls /running every 2 s and never sees a 10 ms run in flight: the run
    dialog's end is what brings the list up to date."""
    manage = loaded_manage(qtbot, window)
    name = f"i17q_{uuid.uuid4().hex[:8]}"
    api.save(connection, name, TEMPLATES[0].body(name))
    with qtbot.waitSignal(manage.sig_loaded, timeout=10000):
        window.refresh_current()
    job = manage.job(name)
    assert job is not None and job.last_run is None
    with qtbot.waitSignal(window.session.nav.sig_run_ended, timeout=20000):
        window.session.nav.sig_run_job.emit(name, {})
    qtbot.waitUntil(lambda: (found := manage.job(name)) is not None
                    and found.last_run is not None, timeout=10000)
