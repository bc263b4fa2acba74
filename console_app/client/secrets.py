"""Typed calls for the Secrets page: names, declaring jobs and who changed them.

Blocking, like every client call (go through ``session.tasks``). Nothing here ever
reads a value back: the hub's listing has none, :class:`SecretInfo` has no field for
one, and :func:`set_secret` returns only whether the name was new. The checks below
mirror the hub's (``hub.services.secrets``), which stays the judge: they only let the
dialog say what is wrong before anything is sent."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from console_app.client.connection import API, HubConnection
from shared import wire
from shared.header import SECRET_NAME_RE, SECRET_VALUE_MAX, SECRET_VALUE_MIN
from shared.wire import secrets as wire_secrets

__all__ = [
    "MAX_VALUE", "MIN_VALUE", "SecretChange", "SecretInfo", "delete_secret", "list_secrets",
    "name_problem", "secret_changes", "set_secret", "value_problem",
]

# The hub's own limits (shared.header): it refuses anything outside them.
MIN_VALUE = SECRET_VALUE_MIN
MAX_VALUE = SECRET_VALUE_MAX


def _epoch(iso: Any) -> float | None:
    """The hub's ``2025-01-02T03:04:05Z`` as seconds; anything else as unknown."""
    if not isinstance(iso, str) or not iso:
        return None
    try:
        when = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


@dataclass(frozen=True)
class SecretInfo:
    """One name as ``GET /secrets`` lists it: a stored secret, a declared one, or both."""

    name: str
    is_set: bool
    declared_by: tuple[str, ...] = ()
    updated_at: float | None = None      # epoch seconds; None while not set
    updated_by: str | None = None

    @property
    def missing(self) -> bool:
        """A job declares it but it has no value: that job's ``secrets.get`` throws."""
        return not self.is_set and bool(self.declared_by)

    @property
    def unused(self) -> bool:
        """Set, but no job's header declares it (so no job can read it)."""
        return self.is_set and not self.declared_by

    @classmethod
    def from_wire(cls, info: wire_secrets.SecretInfo) -> SecretInfo:
        return cls(name=info.name, is_set=info.set, declared_by=info.declaredBy,
                   updated_at=_epoch(info.updatedAt), updated_by=info.updatedBy)


def name_problem(name: str) -> str | None:
    """Why the hub would refuse ``name`` as a secret's name, or None."""
    if SECRET_NAME_RE.match(name):
        return None
    return ("Use 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or '_' "
            "(the names a job's 'Secrets:' line can declare)")


def value_problem(value: str) -> str | None:
    """Why the hub would refuse ``value``, or None. Never quotes the value."""
    if not MIN_VALUE <= len(value) <= MAX_VALUE:
        return (f"A value must be {MIN_VALUE} to {MAX_VALUE} characters long "
                f"(now {len(value)}); shorter ones would be masked wherever they occur")
    if "\x00" in value:
        return "A value may not contain NUL characters"
    return None


def _path(name: str) -> str:
    return f"{API}/secrets/{quote(name, safe='')}"


def list_secrets(conn: HubConnection) -> list[SecretInfo]:
    """Every stored secret and every declared-but-unset one, sorted by name."""
    answer = conn.typed(wire_secrets.SecretList, "GET", f"{API}/secrets")
    return [SecretInfo.from_wire(s) for s in answer.secrets]


@dataclass(frozen=True)
class SecretChange:
    """One set or delete of a secret: what, when and by whom (never the value)."""

    action: str                  # set | delete
    at: float | None
    by: str | None


def secret_changes(conn: HubConnection, name: str) -> list[SecretChange]:
    """The last changes to ``name``, newest first (kept after a delete)."""
    answer = conn.typed(wire_secrets.SecretChanges, "GET", _path(name) + "/changes")
    return [SecretChange(c.action, _epoch(c.at), c.by) for c in answer.changes]


def set_secret(conn: HubConnection, name: str, value: str) -> bool:
    """Set or replace ``name``; True when it was new. Nothing of the value comes back."""
    body = wire.encode(wire_secrets.SecretValue(value))
    return conn.typed(wire_secrets.SecretSet, "PUT", _path(name), json=body).created


def delete_secret(conn: HubConnection, name: str) -> None:
    """Remove ``name``; a name that is not set raises NotFound."""
    conn.typed(wire_secrets.SecretDeleted, "DELETE", _path(name))
