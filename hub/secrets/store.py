"""Secrets on the hub database (``WEBHUB_DB``): every query about them is here.

``IQXNetWebJobSecret`` holds one row per secret: its name, the value sealed by
:class:`~hub.secrets.box.SecretBox` (never the plain value), and who changed it
last and when. ``IQXNetWebJobSecretChange`` keeps every set and delete (name, what,
who, when) so a deleted secret's history is not lost with its row. Nothing is
cached: each run reads the values afresh, so a change reaches every node that
shares the database at its next run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hub.secrets.box import SecretBox
from hub.store.dialects import Dialect
from hub.store.hubdb import Conflict, HubDatabase, Tx, seconds_of

__all__ = ["CHANGE_TABLE", "SECRET_TABLE", "SecretChange", "SecretInfo", "SecretStore"]

SECRET_TABLE = "IQXNetWebJobSecret"
CHANGE_TABLE = "IQXNetWebJobSecretChange"


@dataclass(frozen=True)
class SecretInfo:
    """A secret as listed: never its value."""

    name: str
    updated: float
    updated_by: str | None


@dataclass(frozen=True)
class SecretChange:
    name: str
    action: str          # set | delete
    at: float
    by: str | None


def _tables(d: Dialect) -> list[str]:
    return [
        d.create_table(SECRET_TABLE, """Name {varchar}(64) NOT NULL PRIMARY KEY,
            Value {text} NOT NULL,
            UpdatedAt {real} NOT NULL,
            UpdatedBy {varchar}(100)"""),
        d.create_table(CHANGE_TABLE, """{id},
            Name {varchar}(64) NOT NULL,
            Action {varchar}(16) NOT NULL,
            ChangedAt {real} NOT NULL,
            ChangedBy {varchar}(100)"""),
        d.create_index("IQXNetWebJobSecretChange_Name", CHANGE_TABLE, "Name"),
    ]


class SecretStore:
    def __init__(self, db: HubDatabase, box: SecretBox, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.box = box
        self.clock = clock

    def ensure_schema(self) -> None:
        self.db.ensure_schema_once(SECRET_TABLE, _tables)

    def list_secrets(self) -> list[SecretInfo]:
        self.ensure_schema()
        rows = self.db.read(f"SELECT Name, UpdatedAt, UpdatedBy FROM {SECRET_TABLE} "
                            "ORDER BY Name")
        return [SecretInfo(str(n), seconds_of(at), None if by is None else str(by))
                for n, at, by in rows]

    def values(self, names: Sequence[str]) -> dict[str, str]:
        """The plain values of those of ``names`` that are set (one query)."""
        self.ensure_schema()
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = self.db.read(f"SELECT Name, Value FROM {SECRET_TABLE} WHERE Name IN ({marks})",
                            wanted)
        return {str(n): self.box.open(str(n), str(v)) for n, v in rows}

    def put(self, name: str, value: str, by: str | None) -> bool:
        """Set ``name`` to ``value``; True when it is new. The INSERT comes first: an
        UPDATE of a missing row would take a gap lock (MariaDB) that two nodes
        creating one name at once deadlock on. The loser of such a race replaces."""
        self.ensure_schema()
        sealed = self.box.seal(name, value)
        for _ in range(3):
            try:
                with self.db.transaction() as tx:
                    self._insert(tx, name, sealed, by)
                return True
            except Conflict:
                pass
            with self.db.transaction() as tx:
                if self._update(tx, name, sealed, by):
                    return False
        raise Conflict(f"Secret '{name}' kept changing meanwhile; try again")

    def _insert(self, tx: Tx, name: str, sealed: str, by: str | None) -> None:
        now = self.clock()
        tx.write(f"INSERT INTO {SECRET_TABLE} (Name, Value, UpdatedAt, UpdatedBy) "
                 "VALUES (?, ?, ?, ?)", (name, sealed, now, by))
        self._note(tx, name, "set", now, by)

    def _update(self, tx: Tx, name: str, sealed: str, by: str | None) -> bool:
        now = self.clock()
        changed = tx.write(f"UPDATE {SECRET_TABLE} SET Value = ?, UpdatedAt = ?, UpdatedBy = ? "
                           "WHERE Name = ?", (sealed, now, by, name))
        if changed:
            self._note(tx, name, "set", now, by)
        return bool(changed)

    def delete(self, name: str, by: str | None) -> bool:
        """Remove ``name``; False when there was no such secret."""
        self.ensure_schema()
        with self.db.transaction() as tx:
            gone = tx.write(f"DELETE FROM {SECRET_TABLE} WHERE Name = ?", (name,))
            if gone:
                self._note(tx, name, "delete", self.clock(), by)
        return bool(gone)

    def changes(self, name: str | None = None, limit: int = 100) -> list[SecretChange]:
        """Who set or deleted secrets and when, newest first."""
        self.ensure_schema()
        where, params = (" WHERE Name = ?", [name]) if name is not None else ("", [])
        sql, args = self.db.dialect.page(
            f"SELECT Name, Action, ChangedAt, ChangedBy FROM {CHANGE_TABLE}{where} "
            "ORDER BY ChangedAt DESC, id DESC", params, limit, 0)
        return [SecretChange(str(n), str(a), seconds_of(at), None if by is None else str(by))
                for n, a, at, by in self.db.read(sql, args)]

    @staticmethod
    def _note(tx: Tx, name: str, action: str, at: float, by: str | None) -> None:
        tx.write(f"INSERT INTO {CHANGE_TABLE} (Name, Action, ChangedAt, ChangedBy) "
                 "VALUES (?, ?, ?, ?)", (name, action, at, by))
