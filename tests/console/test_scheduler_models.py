"""The Scheduler's table model and cron-check state, without views."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester

from console_app.client.schedules import CronPreview, ScheduleDraft, ScheduleInfo, schedule_body
from console_app.models.schedules import LAST, NEXT, ON, WHEN, CronCheck, Roles, ScheduleTableModel
from shared.wire import decode
from shared.wire.schedules import Schedule

NOW = 1_800_000_000.0
WIRE = {"id": 3, "name": "nightly", "jobName": "report", "cron": "30 2 * * 1-5",
        "cronText": "At 02:30, Monday through Friday (UTC)", "timezone": "UTC",
        "params": '{"days":7}', "enabled": True, "catchUp": "skip", "overlap": "skip",
        "maxRetries": 2, "lastRun": {"when": NOW - 7200, "outcome": "failed"},
        "nextRun": NOW + 300, "running": False}


def info(**changes: object) -> ScheduleInfo:
    return ScheduleInfo.of(decode(Schedule, {**WIRE, **changes}, strict=True))


def test_schedule_from_wire_and_draft_to_wire() -> None:
    item = info()
    assert item.params_dict() == {"days": 7} and item.last_outcome == "failed"
    assert info(params="not json").params_dict() == {}
    body = schedule_body(ScheduleDraft("n", "report", "* * * * *").fields())
    assert body["enabled"] is False and "timezone" not in body and body["params"] == {}
    assert schedule_body(ScheduleDraft("n", "j", "@daily", timezone="Europe/Paris").fields())[
        "timezone"] == "Europe/Paris"


def test_table_model_shows_words_switch_and_times(qtmodeltester: ModelTester) -> None:
    model = ScheduleTableModel(clock=lambda: NOW)
    model.set_schedules([info(), info(id=4, name="off one", enabled=False, lastRun=None,
                                      nextRun=None)])
    qtmodeltester.check(model)
    first = model.row_of(3)
    assert model.data(model.index(first, ON), Qt.ItemDataRole.CheckStateRole) == \
        Qt.CheckState.Checked
    assert model.data(model.index(first, WHEN)) == "At 02:30, Monday through Friday (UTC)"
    assert model.data(model.index(first, LAST)) == "failed · 2 h ago"
    assert model.data(model.index(first, LAST), Roles.BADGE_COLOUR) == "#c62828"
    assert "in 5 min" in model.data(model.index(first, NEXT))
    other = model.row_of(4)
    assert model.data(model.index(other, NEXT)) == "off"
    assert model.data(model.index(other, LAST)) == "never"
    assert model.flags(model.index(other, ON)) & Qt.ItemFlag.ItemIsUserCheckable


def test_ticking_asks_the_hub_and_waits_for_its_answer() -> None:
    asked: list[tuple[int, bool]] = []
    model = ScheduleTableModel(on_toggle=lambda sid, on: asked.append((sid, on)),
                               clock=lambda: NOW)
    model.set_schedules([info(enabled=False)])
    index = model.index(0, ON)
    assert model.setData(index, Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole) is False
    assert asked == [(3, True)]
    assert model.data(index, Roles.ENABLED) is False  # unchanged until the hub answers
    changed: list[int] = []
    model.dataChanged.connect(lambda top, _b, _r: changed.append(top.row()))
    model.replace(info(enabled=True))
    assert model.data(index, Roles.ENABLED) is True and changed == [0]


def test_cron_check_drops_stale_answers() -> None:
    check = CronCheck()
    old = check.ask()
    new = check.ask()
    preview = CronPreview("Every minute (UTC)", "UTC", ("2026-01-01T00:00:00Z",))
    assert not check.answered(old, preview) and not check.valid
    assert check.refused(new, "HUB-001: bad") and check.error == "HUB-001: bad"
    latest = check.ask()
    assert check.answered(latest, preview) and check.valid and check.error is None
