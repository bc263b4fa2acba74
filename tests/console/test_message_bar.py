"""The message bar: a note that something went well goes by itself; an error stays."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from console_app.widgets import INFO_SHOWN_MS, MessageBar


def test_an_info_note_goes_by_itself_and_an_error_stays(qtbot: QtBot) -> None:
    bar = MessageBar()
    qtbot.addWidget(bar)
    assert INFO_SHOWN_MS >= 3000  # long enough to be read
    bar._info_timer.setInterval(50)
    bar.show_info("Saved the schedule 'nightly'.")
    assert bar.isVisibleTo(None) and bar.kind == "info"
    qtbot.waitUntil(lambda: bar.isHidden() and bar.kind == "", timeout=5000)
    bar.show_info("Saved.")
    bar.show_error_text("The hub refused it")  # an error replacing the note stays
    assert bar.kind == "error" and not bar.isHidden() and not bar._info_timer.isActive()
