"""Issue 17, History: the details pane follows the list, the list refreshes when the page
is shown again, a schedule scope is named and does not survive plain navigation (Ctrl+3),
and *Run again* never sends a masked value back. Against a real hub."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.client.schedules import ScheduleDraft, ScheduleInfo, create_schedule
from console_app.history.masked import MaskedPlace, filled, masked_places
from console_app.pages.history import HistoryPage
from console_app.session import HubSession
from console_app.shell.connecting import read_info
from console_app.shell.main_window import MainWindow
from tests.console.conftest import wait_recorded

API = "/api/webjobs"
JSON = {"Accept": "application/json"}
NEVER_SOON = "0 3 1 1 *"


@pytest.fixture
def page(qtbot: QtBot, session: HubSession) -> Iterator[HistoryPage]:
    widget = HistoryPage(session)
    qtbot.addWidget(widget)
    yield widget


def save_job(conn: HubConnection, code: str = "return params") -> str:
    name = f"i17h_{uuid.uuid4().hex[:10]}"
    conn.post(f"{API}/save", json={"name": name, "code": code})
    return name


def call(conn: HubConnection, name: str, params: dict[str, Any]) -> Any:
    return conn.call("POST", f"{API}/{name}", json=params, headers=JSON)


def load(qtbot: QtBot, page: HistoryPage, filters: dict[str, Any]) -> None:
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.set_filters(filters)


def open_first(qtbot: QtBot, page: HistoryPage) -> None:
    with qtbot.waitSignal(page.sig_run_shown, timeout=10000):
        page.open_row(0)


def test_the_details_pane_never_shows_a_run_the_list_lost(
        qtbot: QtBot, page: HistoryPage, connection: HubConnection) -> None:
    first, second = save_job(connection), save_job(connection)
    for name in (first, second):
        call(connection, name, {"n": 1})
        wait_recorded(qtbot, connection, name, 1)
    load(qtbot, page, {"job": first})
    open_first(qtbot, page)
    assert page.run_view.detail is not None
    load(qtbot, page, {"job": second})  # the shown run is not in this list
    assert page.run_view.detail is None
    assert "Pick a run" in page.run_view.facts.text()
    open_first(qtbot, page)
    shown = page.run_view.detail
    assert shown is not None and shown.summary.job_name == second
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.refresh()  # still in the list: kept, and its row selected
    assert page.run_view.detail is shown
    assert page.table.selectionModel().selectedRows()[0].row() == 0


def test_the_list_refreshes_when_the_page_is_shown_again(
        qtbot: QtBot, page: HistoryPage, connection: HubConnection) -> None:
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.show()
    name = save_job(connection)
    page.hide()
    call(connection, name, {})
    wait_recorded(qtbot, connection, name, 1)
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.show()
    assert name in {page.model.run_at(r).job_name  # type: ignore[union-attr]
                    for r in range(page.model.rowCount())}


@pytest.fixture
def schedule(connection: HubConnection) -> Iterator[ScheduleInfo]:
    item = create_schedule(connection, ScheduleDraft(f"Nightly {uuid.uuid4().hex[:6]}",
                                                     "report", NEVER_SOON))
    yield item
    connection.delete(f"{API}/schedules/{item.schedule_id}")


def test_a_schedule_scope_is_named_and_dropped_by_ctrl_3(
        qtbot: QtBot, connection: HubConnection, session: HubSession,
        schedule: ScheduleInfo) -> None:
    session.info = read_info(connection)
    window = MainWindow(session, monitor_interval_ms=60000)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.open_history({"schedule": str(schedule.schedule_id),
                         "scheduleName": schedule.name})
    history = window.page("History")
    assert isinstance(history, HistoryPage)
    qtbot.waitUntil(lambda: history.state.page is not None, timeout=10000)
    assert history.state.filters.schedule == str(schedule.schedule_id)
    assert f"schedule <b>{schedule.name}</b>" in history.scope_label.text()
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    with qtbot.waitSignal(history.sig_loaded, timeout=10000):
        qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert history.state.filters.schedule is None and history.state.filters.job is None
    assert history.scope_label.text() == "All runs"
    window.close()


def test_masked_places_and_filling_them() -> None:
    params = {"token": "***", "days": 7, "auth": {"header": "Bearer ***"},
              "items": ["a", "***"], "plain": "no mask"}
    places = masked_places(params)
    assert [p.label for p in places] == ["token", "auth.header", "items[1]"]
    answers = {p.path: f"v{n}" for n, p in enumerate(places)}
    assert filled(params, answers) == {"token": "v0", "days": 7, "auth": {"header": "v1"},
                                       "items": ["a", "v2"], "plain": "no mask"}
    assert masked_places({"a": 1, "b": ["x"]}) == []


def test_run_again_asks_for_each_masked_value(qtbot: QtBot, page: HistoryPage,
                                              session: HubSession,
                                              connection: HubConnection) -> None:
    name = save_job(connection)
    call(connection, name, {"token": "s3cret-value", "days": 7})
    wait_recorded(qtbot, connection, name, 1)
    load(qtbot, page, {"job": name})
    open_first(qtbot, page)
    assert page.run_view.detail.summary.params["token"] == "***"  # type: ignore[union-attr]
    asked: list[list[MaskedPlace]] = []

    def answer(job: str, places: list[MaskedPlace], _parent: QWidget | None
               ) -> dict[tuple[str | int, ...], str] | None:
        asked.append(places)
        return {p.path: "typed-again" for p in places}

    page.run_view.ask_masked_values = answer
    with qtbot.waitSignal(session.nav.sig_run_job, timeout=2000) as sent:
        page.run_view.run_again_button.click()
    assert [p.label for p in asked[0]] == ["token"]
    assert sent.args == [name, {"token": "typed-again", "days": 7}]
    page.run_view.ask_masked_values = lambda _j, _p, _w: None  # the owner cancels
    with qtbot.assertNotEmitted(session.nav.sig_run_job, wait=200):
        page.run_view.run_again_button.click()
