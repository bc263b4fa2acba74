"""Issue 17, wrong labels: past times never read "in 0 s", an overdue next run is due,
the run dialog's status marks are drawable, and an editor's run is "unsaved" only when
the editor says so."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics
from pytestqt.qtbot import QtBot

from console_app.client.schedules import ScheduleInfo
from console_app.history.fmt import age
from console_app.models.schedules import NEXT, ScheduleTableModel
from console_app.run.dialog import RunDialog, heading_subject, status_text
from console_app.session import HubSession
from shared.wire import decode
from shared.wire.schedules import Schedule

NOW = 1_800_000_000.0


def test_a_past_moment_never_reads_in_the_future() -> None:
    assert age(NOW - 0.4, NOW) == "just now"
    assert age(NOW, NOW) == "just now"
    assert age(NOW - 90, NOW) == "1 min ago"
    assert age(NOW + 0.3, NOW) == "in 1 s"
    assert age(NOW + 300, NOW) == "in 5 min"


def test_an_overdue_next_run_is_due_not_past() -> None:
    wire = {"id": 1, "name": "n", "jobName": "j", "cron": "* * * * *", "cronText": "",
            "timezone": "UTC", "params": "{}", "enabled": True, "nextRun": NOW - 0.5}
    model = ScheduleTableModel(clock=lambda: NOW)
    model.set_schedules([ScheduleInfo.of(decode(Schedule, wire, strict=True))])
    text = model.data(model.index(0, NEXT))
    assert text.endswith("(due now)") and "in 0 s" not in text


def test_every_status_mark_is_in_the_font(qtbot: QtBot, session: HubSession) -> None:
    dialog = RunDialog(session, "report", {})
    qtbot.addWidget(dialog)
    metrics = QFontMetrics(dialog.status_label.font())
    for status in ("running", "success", "failed", "stopped", "stopping", "error"):
        text = status_text(status, metrics)
        assert status in text
        assert all(metrics.inFontUcs4(ord(ch)) for ch in text), (status, text)
    assert all(metrics.inFontUcs4(ord(ch)) for ch in dialog.status_label.text())
    dialog.close()


def test_the_heading_says_unsaved_only_for_unsaved_text() -> None:
    assert heading_subject("report", has_source=False, unsaved=False) == "report"
    assert heading_subject("report", has_source=True, unsaved=True) == "unsaved code of report"
    saved = heading_subject("report", has_source=True, unsaved=False)
    assert "unsaved" not in saved and "report" in saved
    assert heading_subject("", has_source=True, unsaved=False) == "ad-hoc code"
    assert heading_subject("<b>", has_source=False, unsaved=False) == "&lt;b&gt;"
