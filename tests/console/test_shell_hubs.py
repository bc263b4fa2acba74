"""Remembered hubs: most recent first, kept in QSettings, shown through a list model."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.modeltest import ModelTester

from console_app.shell.hubs import (
    MAX_REMEMBERED,
    HubBook,
    HubEntry,
    HubListModel,
    RememberedHubs,
)


def _settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "console.ini"), QSettings.Format.IniFormat)


def test_the_book_keeps_one_entry_per_hub_newest_first() -> None:
    book = HubBook()
    for n in range(MAX_REMEMBERED + 3):
        book.remember(HubEntry(f"http://h{n}"))
    book.remember(HubEntry("http://h5", "ann", "password"))
    assert len(book.entries) == MAX_REMEMBERED
    assert book.entries[0] == HubEntry("http://h5", "ann", "password")
    assert [e.url for e in book.entries].count("http://h5") == 1
    book.forget("http://h5")
    assert book.find("http://h5") is None


def test_hubs_survive_a_restart_and_bad_entries_are_skipped(tmp_path: Path) -> None:
    hubs = RememberedHubs(_settings(tmp_path))
    hubs.remember(HubEntry("http://one", "ann", "password"))
    hubs.remember(HubEntry("http://two"))
    settings = _settings(tmp_path)
    saved = json.loads(settings.value("hubs"))
    settings.setValue("hubs", json.dumps([*saved, {"url": 3}, "junk", {"user": "x"}]))
    settings.sync()
    again = RememberedHubs(_settings(tmp_path))
    assert again.book.entries == [HubEntry("http://two"), HubEntry("http://one", "ann",
                                                                   "password")]
    settings.setValue("hubs", "{broken")
    assert RememberedHubs(settings).book.entries == []


def test_the_list_model(tmp_path: Path, qtmodeltester: ModelTester) -> None:
    hubs = RememberedHubs(_settings(tmp_path))
    model = HubListModel(hubs)
    model.remember(HubEntry("http://one", "ann", "password"))
    model.remember(HubEntry("http://two"))
    qtmodeltester.check(model)
    assert model.rowCount() == 2
    first = model.index(0, 0)
    assert model.data(first) == "http://two"
    assert model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole) == (
        "http://one — signed in as ann")
    assert model.data(model.index(1, 0), HubListModel.EntryRole).method == "password"
    model.forget("http://two")
    assert model.rowCount() == 1 and hubs.book.entries[0].url == "http://one"
