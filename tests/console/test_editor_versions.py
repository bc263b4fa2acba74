"""VersionsDialog, offscreen, with a fake fetch that answers when the test says."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable

from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from console_app.client.errors import HubUnreachable
from console_app.editor import VersionsDialog
from console_app.editor.versions import describe_version
from shared.wire import decode
from shared.wire.store import VersionInfo, VersionList

VERSIONS = decode(VersionList, {"versions": [  # as GET /api/webjobs/<name>/versions answers
    {"version": 3, "saved": 1_760_000_300.0, "savedBy": "ann", "size": 40, "current": True},
    {"version": 2, "saved": 1_760_000_200.0, "savedBy": "bob", "size": 2048, "current": False},
    {"version": 1, "saved": 1_760_000_100.0, "savedBy": None, "size": 20, "current": False},
]}, strict=True).versions  # newest first
CODE = {1: "return 1\n", 2: "const a = 2\nreturn a\n", 3: "const a = 3\nreturn a\n"}


class FakeFetch:
    """Holds each request until ``answer`` is called, like a slow hub would."""

    def __init__(self) -> None:
        self.pending: dict[int, Callable[[str | Exception], None]] = {}
        self.calls: list[int] = []

    def __call__(self, version: int, on_done: Callable[[str | Exception], None]) -> None:
        self.calls.append(version)
        self.pending[version] = on_done

    def answer(self, version: int, result: str | Exception | None = None) -> None:
        self.pending.pop(version)(CODE[version] if result is None else result)


def _dialog(qtbot: QtBot, fetch: FakeFetch, current: str) -> VersionsDialog:
    dialog = VersionsDialog(VERSIONS, fetch, current, job_name="lookup")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_lists_versions_newest_first(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, FakeFetch(), "x")
    texts = [dialog.list.item(i).text() for i in range(dialog.list.count())]
    assert texts[0].startswith("v3 ·") and texts[0].endswith("current") and "by ann" in texts[0]
    assert "2.0 KB" in texts[1] and texts[2].startswith("v1 ·")
    assert not dialog.restore_button.isEnabled()
    assert describe_version(VersionInfo(7, 0, None, 12, False)) == "v7 · ? · 12 B"


def test_diff_against_the_editor_text_with_colours(qtbot: QtBot) -> None:
    fetch = FakeFetch()
    dialog = _dialog(qtbot, fetch, "const a = 4\nreturn a\n")
    dialog.select_version(2)
    assert fetch.calls == [2] and "Loading" in dialog.status.text()
    fetch.answer(2)
    kinds = [(line.kind, line.text) for line in dialog.diff_lines()]
    assert ("remove", "-const a = 2") in kinds and ("add", "+const a = 4") in kinds
    assert kinds[0] == ("file", "--- version 2")
    document = dialog.diff_view.document()
    backgrounds = {document.findBlockByNumber(i).text(): document.findBlockByNumber(i)
                   .blockFormat().background().color() for i in range(document.blockCount())}
    assert backgrounds["-const a = 2"] == QColor("#ffebe9")
    assert backgrounds["+const a = 4"] == QColor("#e6ffec")
    assert "+1 −1" in dialog.status.text()
    dialog.set_current_text("const a = 2\nreturn a\n")
    assert dialog.diff_lines() == [] and "same" in dialog.status.text()


def test_fetches_once_and_ignores_a_late_answer(qtbot: QtBot) -> None:
    fetch = FakeFetch()
    dialog = _dialog(qtbot, fetch, "return 1\n")
    dialog.select_version(3)
    dialog.select_version(1)
    fetch.answer(1)
    assert "same" in dialog.status.text()
    fetch.answer(3)  # arrives after the owner moved on: cached, not shown
    assert dialog.diff_lines() == [] and dialog.selected_version() == 1
    dialog.select_version(3)
    assert fetch.calls == [3, 1]
    assert any(line.text == "+return 1" for line in dialog.diff_lines())


def test_a_failed_fetch_is_reported(qtbot: QtBot) -> None:
    fetch = FakeFetch()
    dialog = _dialog(qtbot, fetch, "x")
    dialog.select_version(2)
    fetch.answer(2, HubUnreachable("hub went away"))  # what the client raises
    assert "Could not load version 2: CONSOLE-001: hub went away" in dialog.status.text()


def test_restore_emits_the_version_and_closes(qtbot: QtBot) -> None:
    fetch = FakeFetch()
    dialog = _dialog(qtbot, fetch, "x")
    dialog.select_version(2)
    assert dialog.restore_button.isEnabled()
    with qtbot.waitSignal(dialog.sig_restore_requested) as blocker:
        dialog.restore_button.click()
    assert blocker.args == [2]
    assert not dialog.isVisible()
