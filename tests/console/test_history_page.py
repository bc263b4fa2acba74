"""The History page against a real hub: filters, search, paging, replay, run again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QDateTime
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.client.history import HistoryFilters
from console_app.pages.history import CUSTOM_RANGE, HistoryPage
from console_app.session import HubSession
from shared.errors import JobFailed
from tests.console.conftest import wait_recorded

API = "/api/webjobs"
JSON = {"Accept": "application/json"}


@pytest.fixture
def page(qtbot: QtBot, session: HubSession) -> Iterator[HistoryPage]:
    widget = HistoryPage(session)
    qtbot.addWidget(widget)
    yield widget


def save_job(conn: HubConnection, code: str) -> str:
    name = f"hist_{uuid.uuid4().hex[:10]}"
    conn.post(f"{API}/save", json={"name": name, "code": code})
    return name


def call(conn: HubConnection, name: str, params: dict[str, Any]) -> Any:
    return conn.call("POST", f"{API}/{name}", json=params, headers=JSON)


def load(qtbot: QtBot, page: HistoryPage, filters: dict[str, Any]) -> None:
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.set_filters(filters)


LOGGING_JOB = ("console.log('one')\nawait new Promise(r => setTimeout(r, 120))\n"
               "console.warn('two')\nconsole.error('three')\n"
               "return { marker: params.marker, done: true }")


def test_lists_a_jobs_runs_with_who_and_where(qtbot: QtBot, page: HistoryPage,
                                              connection: HubConnection) -> None:
    name = save_job(connection, LOGGING_JOB)
    call(connection, name, {"marker": "m1"})
    wait_recorded(qtbot, connection, name, 1)
    load(qtbot, page, {"job": name})
    assert page.model.rowCount() == 1
    row = page.model.run_at(0)
    assert row is not None and row.job_name == name and row.outcome == "success"
    assert page.model.data(page.model.index(0, 4)) == "owner (http)"
    assert page.model.data(page.model.index(0, 5)) == "test-node"
    assert name in page.scope_label.text() and page.clear_scope_button.isVisibleTo(page)


def test_search_status_and_trigger_filters(qtbot: QtBot, page: HistoryPage,
                                           connection: HubConnection) -> None:
    name = save_job(connection, "if (params.fail) throw new Error('boom ' + params.marker)\n"
                                "return params.marker")
    marker = uuid.uuid4().hex
    call(connection, name, {"marker": "plain"})
    with pytest.raises(JobFailed):
        call(connection, name, {"marker": marker, "fail": True})
    wait_recorded(qtbot, connection, name, 2)
    load(qtbot, page, {"job": name})
    assert page.model.rowCount() == 2
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.search_edit.setText(marker)  # debounced: one query after typing stops
    assert [page.model.run_at(0).outcome] == ["failed"]  # type: ignore[union-attr]
    assert page.model.rowCount() == 1
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.search_edit.clear()
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.status_box.setCurrentIndex(page.status_box.findData("success"))
    assert page.model.rowCount() == 1 and page.model.run_at(0).outcome == "success"  # type: ignore[union-attr]
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.trigger_box.setCurrentIndex(page.trigger_box.findData("schedule"))
    assert page.model.rowCount() == 0 and page.range_label.text() == "No runs"
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.time_box.setCurrentIndex(1)  # last hour
    since = page.state.filters.since
    assert since is not None
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.refresh()  # the last hour from now, not from when it was picked
    assert page.state.filters.since is not None and page.state.filters.since > since


def test_a_custom_time_range(qtbot: QtBot, page: HistoryPage,
                             connection: HubConnection) -> None:
    name = save_job(connection, "return 1")
    call(connection, name, {})
    wait_recorded(qtbot, connection, name, 1)
    load(qtbot, page, {"job": name})
    assert page.custom_range.isHidden()
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.time_box.setCurrentIndex(page.time_box.findData(CUSTOM_RANGE))
    assert not page.custom_range.isHidden()
    first = page.state.filters
    assert first.since is not None and first.until is not None
    assert first.until - first.since == 86400 and first.until % 60 == 0  # whole minutes
    assert page.model.rowCount() == 1
    # An end before the start is refused in words; the rows stay as they were.
    page.from_edit.setDateTime(page.until_edit.dateTime().addSecs(3600))
    qtbot.waitUntil(lambda: page.message.kind == "error", timeout=5000)
    assert "ends before it starts" in page.message.text()
    assert page.state.filters == first and page.model.rowCount() == 1
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.refresh()  # reloads the last good range; the fields are still wrong
    assert page.message.kind == "error" and page.model.rowCount() == 1
    # Both fields changed in a row are one query: the day before yesterday has no runs.
    now = QDateTime.currentDateTime()
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.from_edit.setDateTime(now.addDays(-2))
        page.until_edit.setDateTime(now.addDays(-1))
    assert page.model.rowCount() == 0 and page.message.kind == ""
    assert page.state.filters.until == now.addDays(-1).toSecsSinceEpoch() // 60 * 60
    load(qtbot, page, {"job": name})  # a new scope starts from "any time" again
    assert page.custom_range.isHidden() and page.state.filters.since is None
    assert page.state.filters.until is None and page.model.rowCount() == 1


def test_paging_through_runs(qtbot: QtBot, page: HistoryPage,
                             connection: HubConnection) -> None:
    name = save_job(connection, "return params.n")
    for n in range(3):
        call(connection, name, {"n": n})
    wait_recorded(qtbot, connection, name, 3)
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page._go(HistoryFilters(job=name, limit=2))
    assert page.model.rowCount() == 2 and page.next_button.isEnabled()
    assert not page.prev_button.isEnabled()
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.next_button.click()
    assert page.model.rowCount() == 1 and page.range_label.text() == "Runs 3–3"
    assert page.model.run_at(0).params == {"n": 0}  # type: ignore[union-attr]  # oldest
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.prev_button.click()
    assert page.model.rowCount() == 2


def test_click_replays_console_in_order_with_result(qtbot: QtBot, page: HistoryPage,
                                                    connection: HubConnection) -> None:
    name = save_job(connection, LOGGING_JOB)
    call(connection, name, {"marker": "replay"})
    wait_recorded(qtbot, connection, name, 1)
    load(qtbot, page, {"job": name})
    with qtbot.waitSignal(page.sig_run_shown, timeout=10000):
        page.table.selectRow(0)  # a click selects the row
    view = page.run_view
    lines = view.console_model.lines
    assert [(e.level, e.message) for e in lines] == [("log", "one"), ("warn", "two"),
                                                     ("error", "three")]
    assert lines[1].t - lines[0].t >= 100  # the timings are the recorded ones
    assert '"marker": "replay"' in view.result_edit.toPlainText()
    assert view.failure_label.text() == "" and view.console_note.text() == "3 console lines"
    assert "success" in view.facts.text()
    view.paced_box.setChecked(True)
    counts: list[int] = []
    view.player.sig_progress.connect(lambda *_: counts.append(view.console_model.rowCount()))
    with qtbot.waitSignal(view.player.sig_finished, timeout=5000):
        view.replay_button.click()
    assert counts[:3] == [1, 2, 3]  # at recorded pace, one line at a time
    assert [e.message for e in view.console_model.lines] == ["one", "two", "three"]


def test_failed_run_shows_its_code_and_message(qtbot: QtBot, page: HistoryPage,
                                               connection: HubConnection) -> None:
    load(qtbot, page, {"job": "broken_later"})
    if page.model.rowCount() == 0:
        with pytest.raises(JobFailed):
            call(connection, "broken_later", {})
        wait_recorded(qtbot, connection, "broken_later", 1)
        load(qtbot, page, {"job": "broken_later"})
    with qtbot.waitSignal(page.sig_run_shown, timeout=10000):
        page.open_row(0)
    failure = page.run_view.failure_label.text()
    assert failure.startswith("JOB-001: ") and "it broke" in failure
    assert page.model.data(page.model.index(0, 2)) == "failed · JOB-001"


def test_run_again_and_debug_ask_the_navigator(qtbot: QtBot, page: HistoryPage,
                                               session: HubSession,
                                               connection: HubConnection) -> None:
    name = save_job(connection, "return params")
    call(connection, name, {"days": 7, "who": "ann"})
    wait_recorded(qtbot, connection, name, 1)
    load(qtbot, page, {"job": name})
    with qtbot.waitSignal(page.sig_run_shown, timeout=10000):
        page.open_row(0)
    with qtbot.waitSignal(session.nav.sig_run_job, timeout=2000) as asked:
        page.run_view.run_again_button.click()
    assert asked.args == [name, {"days": 7, "who": "ann"}]
    run_id = page.model.run_at(0).run_id  # type: ignore[union-attr]
    with qtbot.waitSignal(session.nav.sig_replay_run, timeout=2000) as debug:
        page.run_view.debug_button.click()
    assert debug.args == [run_id]


def test_hub_refusal_is_a_message_not_a_crash(qtbot: QtBot, page: HistoryPage) -> None:
    page.set_filters({"schedule": "987654"})
    qtbot.waitUntil(lambda: page.message.kind == "error", timeout=10000)
    assert page.message.text().startswith("Loading history failed — SYS-404")
    assert page.message.isVisibleTo(page)
