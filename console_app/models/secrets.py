"""Secrets page state and its Qt adapter.

The state is the hub's listing (:class:`~console_app.client.secrets.SecretInfo`),
which has no value in it, so no role of :class:`SecretTableModel` can ever serve
one. A declared name with no value gets the *missing* badge (a job that reads it
throws); a value no job declares gets *unused* (nothing can read it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from console_app.client.secrets import SecretChange, SecretInfo
from console_app.history.fmt import age, local_time
from console_app.models.rows import Index, RowsModel

__all__ = ["BADGE_COLOURS", "COLUMNS", "Roles", "SecretTableModel", "badge_of", "changes_text",
           "summary"]

COLUMNS = ("Secret", "Status", "Declared by", "Updated")
NAME, STATUS, DECLARED, UPDATED = range(len(COLUMNS))

# Red for missing: a run of a declaring job fails; grey for unused: nothing breaks.
BADGE_COLOURS = {"missing": "#c62828", "set": "#2e7d32", "unused": "#757575",
                 "not set": "#757575"}


class Roles:
    SECRET = Qt.ItemDataRole.UserRole + 1        # the SecretInfo of the row
    NAME = Qt.ItemDataRole.UserRole + 2
    IS_SET = Qt.ItemDataRole.UserRole + 3
    MISSING = Qt.ItemDataRole.UserRole + 4       # declared by a job but not set
    BADGE = Qt.ItemDataRole.UserRole + 5         # 'missing' | 'unused' | 'set' | 'not set'
    BADGE_COLOUR = Qt.ItemDataRole.UserRole + 6
    DECLARED_BY = Qt.ItemDataRole.UserRole + 7   # list of job names


def badge_of(item: SecretInfo) -> str:
    if item.missing:
        return "missing"
    if item.unused:
        return "unused"
    return "set" if item.is_set else "not set"


def summary(items: list[SecretInfo]) -> str:
    """'4 secrets · 1 missing' for the page header."""
    stored = sum(1 for s in items if s.is_set)
    missing = sum(1 for s in items if s.missing)
    words = f"{stored} secret{'s' if stored != 1 else ''} set"
    return f"{words} · {missing} missing" if missing else words


def _updated(item: SecretInfo, now: float) -> str:
    if item.updated_at is None:
        return "never set" if not item.is_set else "—"
    who = f" by {item.updated_by}" if item.updated_by else ""
    return f"{local_time(item.updated_at)}{who} ({age(item.updated_at, now)})"


def _status_tip(item: SecretInfo) -> str:
    if item.missing:
        return ("Declared by a job but not set: secrets.get throws when it runs. "
                "Set it to fix.")
    if item.unused:
        return "Set, but no job's 'Secrets:' line declares it, so no job can read it."
    return "Set; declaring jobs read it with secrets.get."


class SecretTableModel(RowsModel):
    COLUMNS = COLUMNS

    def __init__(self, clock: Callable[[], float] = time.time, parent: Any = None) -> None:
        super().__init__(parent=parent)
        self._clock = clock

    def set_secrets(self, items: list[SecretInfo]) -> None:
        # Missing ones first: they are what breaks runs and what the owner came for.
        self.reset_rows(sorted(items, key=lambda s: (not s.missing, s.name.lower(), s.name)))

    def secrets(self) -> list[SecretInfo]:
        return list(self._rows)

    def secret_at(self, row: int) -> SecretInfo | None:
        found: SecretInfo | None = self.row_item(row)
        return found

    def row_of(self, name: str) -> int:
        return next((r for r, s in enumerate(self._rows) if s.name == name), -1)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.secret_at(index.row()) if index.isValid() else None
        if item is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(item, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(item, column)
        if role == Qt.ItemDataRole.ForegroundRole and column == STATUS:
            return QColor(BADGE_COLOURS[badge_of(item)])
        return {Roles.SECRET: item, Roles.NAME: item.name, Roles.IS_SET: item.is_set,
                Roles.MISSING: item.missing, Roles.BADGE: badge_of(item),
                Roles.BADGE_COLOUR: BADGE_COLOURS[badge_of(item)],
                Roles.DECLARED_BY: list(item.declared_by)}.get(role)

    def _text(self, item: SecretInfo, column: int) -> str:
        texts = {NAME: item.name, STATUS: badge_of(item),
                 DECLARED: ", ".join(item.declared_by) or "no job",
                 UPDATED: _updated(item, self._clock())}
        return texts[column]

    def _tip(self, item: SecretInfo, column: int) -> str | None:
        if column == STATUS:
            return _status_tip(item)
        if column == DECLARED and item.declared_by:
            return "Jobs whose header has 'Secrets: " + item.name + "'"
        return None


def changes_text(name: str, changes: list[SecretChange]) -> str:
    """The selected secret's story in one line: who set or deleted it, and when."""
    if not changes:
        return f"No recorded changes to {name}."
    told = [f"{'set' if c.action == 'set' else 'deleted'} by {c.by or 'unknown'} "
            f"{local_time(c.at)}" for c in changes[:10]]
    more = f" (and {len(changes) - 10} earlier)" if len(changes) > 10 else ""
    return f"Changes to {name}, newest first: " + " · ".join(told) + more
