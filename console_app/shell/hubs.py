"""The hubs the console remembers: address, how it signed in, and as whom.

:class:`HubBook` is the plain list (most recent first); :class:`RememberedHubs`
keeps it in ``QSettings`` (organisation "WebJobs"); :class:`HubListModel` shows it
in the connect dialog's address box. Tokens are never stored here: see
:mod:`console_app.client.credentials`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QSettings, Qt

from console_app.models.rows import ROOT, Index

ORGANISATION = "WebJobs"
APPLICATION = "Console"
MAX_REMEMBERED = 12


@dataclass(frozen=True)
class HubEntry:
    url: str
    user: str = ""        # who signed in last ('' when only a token was given)
    method: str = "token"  # "token" or "password": which half of the dialog to show


class HubBook:
    """Most recently used first, one entry per URL, at most ``MAX_REMEMBERED``."""

    def __init__(self, entries: list[HubEntry] | None = None) -> None:
        self.entries: list[HubEntry] = list(entries or [])

    def remember(self, entry: HubEntry) -> None:
        rest = [e for e in self.entries if e.url != entry.url]
        self.entries = [entry, *rest][:MAX_REMEMBERED]

    def forget(self, url: str) -> None:
        self.entries = [e for e in self.entries if e.url != url]

    def find(self, url: str) -> HubEntry | None:
        return next((e for e in self.entries if e.url == url), None)


class RememberedHubs:
    """A :class:`HubBook` loaded from and saved to ``settings``."""

    KEY = "hubs"

    def __init__(self, settings: QSettings | None = None) -> None:
        self._settings = settings or console_settings()
        self.book = HubBook(_entries(self._settings.value(self.KEY, "[]")))

    def remember(self, entry: HubEntry) -> None:
        self.book.remember(entry)
        self._save()

    def forget(self, url: str) -> None:
        self.book.forget(url)
        self._save()

    def _save(self) -> None:
        # JSON text, not a QVariant list: readable in the file, and typed the same on
        # every platform's settings backend.
        self._settings.setValue(self.KEY, json.dumps([asdict(e) for e in self.book.entries]))
        self._settings.sync()


def console_settings() -> QSettings:
    """The console's settings, in ``QSettings.defaultFormat()`` (tests switch it to an
    INI file under a temporary path; ``QSettings(org, app)`` would ignore that)."""
    return QSettings(QSettings.defaultFormat(), QSettings.Scope.UserScope, ORGANISATION,
                     APPLICATION)


def _entries(text: Any) -> list[HubEntry]:
    """Entries from settings, skipping anything a hand edit or older version left."""
    try:
        raw = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        raw = None
    if not isinstance(raw, list):
        return []
    found: list[HubEntry] = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("url"), str) and item["url"]:
            method = "password" if item.get("method") == "password" else "token"
            found.append(HubEntry(item["url"], str(item.get("user") or ""), method))
    return found


class HubListModel(QAbstractListModel):
    """The remembered hubs for a combo box: the URL shows, the entry rides along."""

    EntryRole = Qt.ItemDataRole.UserRole + 1

    def __init__(self, hubs: RememberedHubs) -> None:
        super().__init__()
        self._hubs = hubs

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self._hubs.book.entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._hubs.book.entries):
            return None
        entry = self._hubs.book.entries[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return entry.url
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{entry.url} — signed in as {entry.user}" if entry.user else entry.url
        if role == self.EntryRole:
            return entry
        return None

    def remember(self, entry: HubEntry) -> None:
        self.beginResetModel()
        self._hubs.remember(entry)
        self.endResetModel()

    def forget(self, url: str) -> None:
        self.beginResetModel()
        self._hubs.forget(url)
        self.endResetModel()
