"""The Scheduler page and its dialog against a real hub."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.client.schedules import ScheduleDraft, ScheduleInfo, create_schedule
from console_app.history.schedule_dialog import ScheduleDialog
from console_app.models.schedules import LAST, ON
from console_app.pages.history import HistoryPage
from console_app.pages.scheduler import SchedulerPage
from console_app.session import HubSession

API = "/api/webjobs"
NEVER_SOON = "0 3 1 1 *"  # 03:00 on 1 January: an enabled test schedule never fires by itself


@pytest.fixture
def page(qtbot: QtBot, session: HubSession) -> Iterator[SchedulerPage]:
    widget = SchedulerPage(session)
    qtbot.addWidget(widget)
    widget.confirm = lambda _title, _question: True
    yield widget


@pytest.fixture
def made(connection: HubConnection) -> Iterator[ScheduleInfo]:
    """A schedule of the 'report' job, switched off, removed afterwards if still there."""
    item = create_schedule(connection, ScheduleDraft(f"s-{uuid.uuid4().hex[:8]}", "report",
                                                     NEVER_SOON, params={"days": 3}))
    yield item
    ids = {s["id"] for s in connection.get(f"{API}/schedules")["schedules"]}
    if item.schedule_id in ids:
        connection.delete(f"{API}/schedules/{item.schedule_id}")


def hub_schedule(conn: HubConnection, schedule_id: int) -> dict[str, Any] | None:
    found = [s for s in conn.get(f"{API}/schedules")["schedules"] if s["id"] == schedule_id]
    return found[0] if found else None


def loaded(qtbot: QtBot, page: SchedulerPage) -> None:
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.refresh()


def fill(qtbot: QtBot, dialog: ScheduleDialog, name: str, cron: str, zone: str = "") -> None:
    dialog.name_edit.setText(name)
    dialog.job_box.setEditText("report")
    if zone:
        dialog.zone_box.setCurrentText(zone)
    with qtbot.waitSignal(dialog.sig_cron_checked, timeout=10000) as checked:
        dialog.cron_edit.setText(cron)
    assert checked.args == [True]


def save(qtbot: QtBot, dialog: ScheduleDialog) -> ScheduleInfo:
    with qtbot.waitSignal(dialog.sig_saved, timeout=10000) as saved:
        dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    item = saved.args[0]
    assert isinstance(item, ScheduleInfo)
    return item


@pytest.mark.parametrize("tick", [False, True])
def test_add_schedule_is_off_unless_enabled_is_ticked(qtbot: QtBot, page: SchedulerPage,
                                                      connection: HubConnection,
                                                      tick: bool) -> None:
    dialog = page.open_dialog(None)
    name = f"added-{uuid.uuid4().hex[:8]}"
    fill(qtbot, dialog, name, NEVER_SOON)
    assert not dialog.enabled_box.isChecked()  # off by default
    dialog.enabled_box.setChecked(tick)
    dialog.params_edit.setPlainText('{"days": 2}')
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        item = save(qtbot, dialog)
    try:
        stored = hub_schedule(connection, item.schedule_id)
        assert stored is not None and stored["enabled"] is tick
        assert stored["params"] == '{"days":2}' and stored["name"] == name
        row = page.model.row_of(item.schedule_id)
        assert row >= 0
        assert page.model.data(page.model.index(row, 3)) == \
            "At 03:00, on day 1 of the month, in January (UTC)"  # the hub's own words
        assert (page.model.data(page.model.index(row, 5)) == "off") is not tick
        assert f"switched {'on' if tick else 'off'}" in page.message.text()
    finally:
        connection.delete(f"{API}/schedules/{item.schedule_id}")


def test_cron_validates_as_you_type(qtbot: QtBot, session: HubSession) -> None:
    dialog = ScheduleDialog(session)
    qtbot.addWidget(dialog)
    dialog.name_edit.setText("x")
    dialog.job_box.setEditText("report")
    save_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    with qtbot.waitSignal(dialog.sig_cron_checked, timeout=10000) as checked:
        dialog.cron_edit.setText("61 * * * *")
    assert checked.args == [False]
    assert dialog.cron_status.text().startswith("HUB-001: ")
    assert "minute" in dialog.cron_status.text()
    assert dialog.preview_times() == [] and not save_button.isEnabled()
    dialog.zone_box.setCurrentText("Europe/London")
    with qtbot.waitSignal(dialog.sig_cron_checked, timeout=10000) as checked:
        for text in ("3", "30 2 *", "30 2 * * 1-5"):  # typing: only the last is checked
            dialog.cron_edit.setText(text)
    assert checked.args == [True]
    assert dialog.cron_status.text() == "At 02:30, Monday through Friday (Europe/London)"
    times = dialog.preview_times()
    assert len(times) == 5
    assert all(" 02:30 " in t and t.split()[-1] in ("GMT", "BST") for t in times)
    assert all(t.split()[0] in ("Mon", "Tue", "Wed", "Thu", "Fri") for t in times)
    assert save_button.isEnabled()


def test_enable_switch_follows_the_hub(qtbot: QtBot, page: SchedulerPage,
                                       connection: HubConnection, made: ScheduleInfo) -> None:
    loaded(qtbot, page)
    index = page.model.index(page.model.row_of(made.schedule_id), ON)
    assert page.model.data(index, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    with qtbot.waitSignal(page.sig_changed, timeout=10000):
        page.model.setData(index, Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    assert page.model.data(index, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    stored = hub_schedule(connection, made.schedule_id)
    assert stored is not None and stored["enabled"] is True and stored["nextRun"] is not None
    with qtbot.waitSignal(page.sig_changed, timeout=10000):
        page.model.setData(index, Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    assert hub_schedule(connection, made.schedule_id)["enabled"] is False  # type: ignore[index]


def test_run_now_appears_in_that_schedules_history(qtbot: QtBot, page: SchedulerPage,
                                                   session: HubSession,
                                                   made: ScheduleInfo) -> None:
    loaded(qtbot, page)
    page.select(made.schedule_id)
    with qtbot.waitSignal(page.sig_ran, timeout=20000) as ran:
        page.run_button.click()
    assert ran.args == [made.schedule_id, "success"]
    assert "ran: success" in page.message.text()

    def last_run_shown() -> bool:  # the hub records Run now as the schedule's last run
        loaded(qtbot, page)
        row = page.model.row_of(made.schedule_id)
        return str(page.model.data(page.model.index(row, LAST))).startswith("success · ")
    qtbot.waitUntil(last_run_shown, timeout=10000)
    page.ask_params = lambda _item: {"days": 99}
    with qtbot.waitSignal(page.sig_ran, timeout=20000):
        page.menu_actions["params"].trigger()
    with qtbot.waitSignal(session.nav.sig_open_history, timeout=2000) as opened:
        page._clicked(page.model.index(page.model.row_of(made.schedule_id), LAST))
    assert opened.args == [{"schedule": str(made.schedule_id), "scheduleName": made.name}]
    history = HistoryPage(session)
    qtbot.addWidget(history)

    def both_recorded() -> bool:
        with qtbot.waitSignal(history.sig_loaded, timeout=10000):
            history.set_filters(opened.args[0])
        runs = [history.model.run_at(r) for r in range(history.model.rowCount())]
        return len([r for r in runs if r and r.outcome == "success"]) == 2
    qtbot.waitUntil(both_recorded, timeout=10000)
    newest = history.model.run_at(0)
    assert newest is not None and newest.source == "schedule"
    assert newest.params == {"days": 99} and newest.started_by == f"schedule {made.name}"
    assert history.model.run_at(1).params == {"days": 3}  # type: ignore[union-attr]


def test_edit_and_delete_from_the_menu(qtbot: QtBot, page: SchedulerPage,
                                       connection: HubConnection, made: ScheduleInfo) -> None:
    loaded(qtbot, page)
    page.select(made.schedule_id)
    page.menu_actions["edit"].trigger()
    dialog = page.dialog
    assert dialog is not None and dialog.name_edit.text() == made.name
    qtbot.waitUntil(lambda: dialog.check.valid, timeout=10000)  # the stored cron checks
    dialog.name_edit.setText(made.name + "-renamed")
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        save(qtbot, dialog)
    assert hub_schedule(connection, made.schedule_id)["name"] == made.name + "-renamed"  # type: ignore[index]
    page.select(made.schedule_id)
    page.confirm = lambda _t, _q: False
    page.menu_actions["delete"].trigger()
    assert hub_schedule(connection, made.schedule_id) is not None  # said no: still there
    page.confirm = lambda _t, _q: True
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.menu_actions["delete"].trigger()
    assert hub_schedule(connection, made.schedule_id) is None
    assert page.model.row_of(made.schedule_id) == -1


def test_job_filter_and_hub_failure(qtbot: QtBot, page: SchedulerPage,
                                    connection: HubConnection, made: ScheduleInfo) -> None:
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.set_job_filter("no_such_job_here")
    assert page.model.row_of(made.schedule_id) == -1
    with qtbot.waitSignal(page.sig_loaded, timeout=10000):
        page.set_job_filter("report")
    assert page.model.row_of(made.schedule_id) >= 0
    connection.delete(f"{API}/schedules/{made.schedule_id}")
    page.run_now(made)  # gone meanwhile: a message with the code, no crash
    qtbot.waitUntil(lambda: page.message.kind == "error", timeout=10000)
    assert "SYS-404" in page.message.text()
