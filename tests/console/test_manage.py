"""The Manage page against the real hub: badges, filters, search, details, the
running indicator, the Run menu, Create, Upload, Ad-hoc and Delete."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.models.jobs import BADGES_ROLE, COL_BADGES, COL_NOW, NAME_ROLE
from console_app.pages.create_dialog import TEMPLATES, NewJob
from console_app.pages.manage import ManagePage
from console_app.pages.manage_parts import Asker
from console_app.run.dialog import RunDialog
from console_app.run.params import remembered_params
from console_app.session import HubSession
from console_app.tasks import TaskManager
from shared.errors import JobFailed
from tests.console.conftest import CONSOLE_JOBS, ended_runs, wait_recorded
from tests.hub.conftest import REPO

pytestmark = pytest.mark.usefixtures("private_settings")


def new_job(name: str | None) -> NewJob | None:
    """What the Create dialog answers when the owner types ``name`` (None: cancelled)."""
    return NewJob(name, TEMPLATES[0].body(name)) if name else None


class Answers:
    """Stands in for every dialog the page would show, and for the browser."""

    def __init__(self) -> None:
        self.opened: list[QUrl] = []
        self.params: dict[str, Any] | None = None
        self.confirm = True
        self.file: str | None = None
        self.name: str | None = None

    def asker(self) -> Asker:
        return Asker(params=lambda _n, _last, _p: self.params,
                     confirm=lambda _t, _x, _p: self.confirm,
                     pick_file=lambda _t, _p: self.file,
                     new_job=lambda _names, _p: new_job(self.name),
                     open_url=lambda url: self.opened.append(url) or True)


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def page(qtbot: QtBot, connection: HubConnection, tasks: TaskManager,
         answers: Answers) -> ManagePage:
    shown = ManagePage(HubSession(connection, tasks), asker=answers.asker())
    shown.session.nav.sig_jobs_changed.connect(shown.refresh)  # as the main window does
    qtbot.addWidget(shown)
    with qtbot.waitSignal(shown.sig_loaded, timeout=15000):
        shown.show()
    return shown


# The shared hub's fixed jobs; other tests add their own (uniquely named) as they go.
FIXED_JOBS = {p.name.removesuffix(".job.js") for p in (REPO / "jobs").glob("*.job.js")} | set(
    CONSOLE_JOBS)


def _shown(page: ManagePage) -> set[str]:
    return {page.proxy.index(r, 0).data(NAME_ROLE) for r in range(page.proxy.rowCount())}


def _visible(page: ManagePage) -> set[str]:
    """The fixed jobs the list shows, whatever other tests have saved meanwhile."""
    return _shown(page) & FIXED_JOBS


def test_list_shows_shipped_jobs_with_badges_and_the_store(page: ManagePage) -> None:
    assert {"public_ping", "vacancies", "public_deeplink", "report"} <= _visible(page)
    assert "store: files" in page.header.text()
    assert page.select("public_deeplink")
    badges = page.view.currentIndex().siblingAtColumn(COL_BADGES).data(BADGES_ROLE)
    assert [b.text for b in badges] == ["public", "page"]
    page.view.resize(900, 400)
    page.grab()  # the badge delegate paints without complaint


def test_each_filter_and_the_search(qtbot: QtBot, page: ManagePage) -> None:
    page.filter_boxes["public"].setChecked(True)
    assert "public_ping" in _visible(page) and "vacancies" not in _visible(page)
    page.filter_boxes["page"].setChecked(True)
    assert _visible(page) == {"public_deeplink", "public_page", "public_test-page"}
    total = page.model.rowCount()  # the header counts what the filters leave of the list
    assert f"· {page.proxy.rowCount()} of {total} ·" in page.header.text()
    page.filter_boxes["public"].setChecked(False)
    page.filter_boxes["page"].setChecked(False)
    assert f"· {total} ·" in page.header.text()
    page.filter_boxes["extended"].setChecked(True)
    assert _visible(page) == {"public_slow"}
    page.filter_boxes["extended"].setChecked(False)
    page.search.setText("weekly")  # report's title is "Weekly report"
    assert _visible(page) == {"report"}
    page.search.clear()
    conn = page.session.conn
    failures_before = ended_runs(conn, "public_fail")
    with pytest.raises(JobFailed):
        conn.post("/api/webjobs/public_fail", json={})
    wait_recorded(qtbot, conn, "public_fail", failures_before + 1)  # the last-run column reads it
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.refresh()
    page.filter_boxes["failed"].setChecked(True)
    assert "public_fail" in _visible(page) and "public_ping" not in _visible(page)
    page.filter_boxes["failed"].setChecked(False)
    page.filter_boxes["scheduled"].setChecked(True)
    assert "public_ping" not in _visible(page)


def test_expanding_a_row_shows_limits_source_and_schedules(
        qtbot: QtBot, page: ManagePage, connection: HubConnection) -> None:
    made = connection.post("/api/webjobs/schedules", json={
        "name": "weekly-mail", "jobName": "report", "cron": "0 6 * * 1"})
    try:
        with qtbot.waitSignal(page.sig_details_loaded, timeout=10000):
            page.expand("report")
        details = page.proxy.index(0, 0, page.view.currentIndex().siblingAtColumn(0))
        text = details.data()
        assert "Limits: runtime 10000 ms" in text and "Access: user" in text
        assert "weekly-mail" in text and "Monday" in text and "off" in text
        assert "console.log('counting')" in text
    finally:
        connection.delete(f"/api/webjobs/schedules/{made['schedule']['id']}")


def test_running_indicator_while_public_slow_runs(qtbot: QtBot, page: ManagePage,
                                                  tasks: TaskManager) -> None:
    dialog = RunDialog(page.session, "public_slow", {"ms": 8000})
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.sig_line, timeout=15000):
        pass
    row = page.model.row_of("public_slow")

    def shows_running() -> bool:
        return page.model.index(row, COL_NOW).data().startswith("running · http · ")

    qtbot.waitUntil(shows_running, timeout=10000)
    dialog.close()
    qtbot.waitUntil(lambda: page.model.index(row, COL_NOW).data() == "", timeout=15000)


def test_polling_stops_while_hidden(qtbot: QtBot, page: ManagePage) -> None:
    qtbot.waitUntil(lambda: page._poll_timer.isActive(), timeout=10000)
    page.hide()
    assert not page._poll_timer.isActive() and not page._tick_timer.isActive()
    page.poll_running()
    assert not page._polling  # a hidden page never asks


def test_run_menu_actions(qtbot: QtBot, page: ManagePage, answers: Answers) -> None:
    nav = page.session.nav
    runs: list[tuple[str, dict[str, Any]]] = []
    nav.sig_run_job.connect(lambda n, p: runs.append((n, p)))
    page.select("report")
    page.run_button.click()
    assert runs == [("report", {})]
    answers.params = {"department": 2}
    page.run_with_params("report")
    assert runs[-1] == ("report", {"department": 2})
    assert remembered_params(page.session.url, "report") == {"department": 2}
    page.run_job("report")
    assert runs[-1] == ("report", {"department": 2})
    answers.params = None  # cancelled
    page.run_with_params("report")
    assert len(runs) == 3
    page.run_job("public_test-page")  # a page job goes to the browser
    assert len(runs) == 3 and answers.opened[-1].toString().endswith(
        "/api/webjobs/public_test-page")
    with qtbot.waitSignal(nav.sig_open_debugger) as debug:
        page.debug_job("report")
    assert debug.args == ["report", {"department": 2}]
    with qtbot.waitSignal(nav.sig_open_editor) as edit:
        page.edit_job("report")
    assert edit.args == ["report"]
    with qtbot.waitSignal(nav.sig_open_history) as history:
        page.show_history("report")
    assert history.args == [{"job": "report"}]
    labels = [a.text() for a in page.run_menu.actions()]
    assert labels == ["Run with parameters…", "Open in browser", "Debug…", "Edit code",
                      "History", "Versions", "Delete"]


def test_create_upload_versions_and_delete(qtbot: QtBot, page: ManagePage,
                                           answers: Answers, tmp_path: Path,
                                           connection: HubConnection) -> None:
    name = f"made_{uuid.uuid4().hex[:6]}"
    answers.name = name
    with qtbot.waitSignal(page.session.nav.sig_open_editor, timeout=10000) as opened:
        page.create_job()
    assert opened.args == [name] and "Name: " + name in api.code(connection, name)
    qtbot.waitUntil(lambda: name in _shown(page), timeout=10000)
    upload = tmp_path / f"{name}.job.js"
    upload.write_text(TEMPLATES[0].body(name).replace("ok: true", "ok: 'uploaded'"))
    answers.file = str(upload)
    with qtbot.waitSignal(page.sig_message, timeout=10000) as note:
        page.upload_job()
    assert note.args == [f"Uploaded {name}", False]
    assert "uploaded" in api.code(connection, name)
    opened_before = len(page.dialogs)
    page.show_versions(name)  # the code is fetched first, then the dialog opens
    qtbot.waitUntil(lambda: len(page.dialogs) > opened_before, timeout=10000)
    versions = page.dialogs[-1]
    qtbot.waitUntil(lambda: versions.list.count() == 2, timeout=10000)  # type: ignore[attr-defined]
    answers.confirm = False
    page.delete_job(name)
    assert name in {j.name for j in api.available(connection).jobs}
    answers.confirm = True
    with qtbot.waitSignal(page.session.nav.sig_jobs_changed, timeout=10000):
        page.delete_job(name)
    qtbot.waitUntil(lambda: name not in _shown(page), timeout=10000)


def test_hub_failures_show_their_code(qtbot: QtBot, page: ManagePage, answers: Answers,
                                      tmp_path: Path) -> None:
    bad = tmp_path / "bad name!.job.js"
    bad.write_text("return 1")
    answers.file = str(bad)
    with qtbot.waitSignal(page.sig_message, timeout=10000) as note:
        page.upload_job()
    assert note.args[1] is True and "HUB-007" in note.args[0]
    assert page.message.isVisible()


def test_ad_hoc_runs_a_local_file_once(qtbot: QtBot, page: ManagePage, answers: Answers,
                                       tmp_path: Path, connection: HubConnection) -> None:
    script = tmp_path / "once.js"
    script.write_text("console.log('ad hoc')\nreturn { once: true }")
    answers.file = str(script)
    page.run_ad_hoc()
    dialog = page.dialogs[-1]
    assert isinstance(dialog, RunDialog)
    if dialog.running:
        with qtbot.waitSignal(dialog.sig_finished, timeout=15000):
            pass
    assert dialog.status == "success" and dialog.console.lines[0].message == "ad hoc"
    assert "once" not in {j.name for j in api.available(connection).jobs}
    dialog.close()
