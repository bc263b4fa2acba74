"""The secrets service: what the owner API and the CLI do, and what a run reads.

Names follow :data:`shared.header.SECRET_NAME_RE` (what a ``Secrets:`` line may
declare). A value is text of ``MIN_VALUE``..``MAX_VALUE`` characters: every value a
run is given is masked (``***``) wherever it occurs in the run's console, errors
and history, so a very short value would mask ordinary words too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hub.secrets.store import SecretStore
from hub.store.base import JobStore
from hub.store.hubdb import iso_of
from shared.errors import BadRequest, NotFound
from shared.header import SECRET_NAME_RE, SECRET_VALUE_MAX, SECRET_VALUE_MIN, parse_header
from shared.wire.secrets import (
    SecretChange,
    SecretChanges,
    SecretDeleted,
    SecretInfo,
    SecretList,
    SecretSet,
)

if TYPE_CHECKING:
    from hub.settings import Settings

__all__ = ["MAX_VALUE", "MIN_VALUE", "SecretsService", "check_secret_name",
           "secrets_service"]

log = logging.getLogger("webhub.secrets")
MIN_VALUE = SECRET_VALUE_MIN
MAX_VALUE = SECRET_VALUE_MAX


def check_secret_name(name: Any) -> str:
    if not isinstance(name, str) or not SECRET_NAME_RE.match(name):
        shown = str(name)[:64] if isinstance(name, str) else type(name).__name__
        raise BadRequest(f"'{shown}' is not a secret name: use 1 to 64 letters, digits, "
                         "'_', '.' or '-', starting with a letter or '_'")
    return name


def check_secret_value(value: Any) -> str:
    if not isinstance(value, str):
        raise BadRequest("'value' must be the secret's value, as text")
    if not MIN_VALUE <= len(value) <= MAX_VALUE:
        raise BadRequest(f"A secret's value must be {MIN_VALUE} to {MAX_VALUE} characters "
                         f"long, not {len(value)} (shorter values would be masked wherever "
                         "they happen to occur)")
    if "\x00" in value:
        raise BadRequest("A secret's value may not contain NUL characters")
    return value


def _whole_seconds(at: float) -> str:
    """``at`` as ISO 8601 UTC text, in whole seconds (as the Secrets page shows it)."""
    text = iso_of(int(at))
    assert text is not None  # iso_of gives None for None only
    return text


def secrets_service(settings: Settings, store: JobStore | None) -> SecretsService:
    """Secrets on the hub database, sealed with a key derived from WEBHUB_SECRET
    (``store``: the jobs whose headers declare secrets; None when not listing)."""
    from hub.secrets.box import SecretBox
    from hub.store.hubdb import open_hub_database

    return SecretsService(SecretStore(open_hub_database(settings.hub_db),
                                      SecretBox(settings.secret)), store)


class SecretsService:
    def __init__(self, store: SecretStore, jobs: JobStore | None) -> None:
        self.store = store
        self.jobs = jobs  # None: no job declares anything (a CLI set or delete)

    def values(self, names: Sequence[str]) -> dict[str, str]:
        """For a run: the values of those of ``names`` that are set (read afresh)."""
        return self.store.values([n for n in names if SECRET_NAME_RE.match(n)])

    def declared_by(self) -> dict[str, list[str]]:
        """Secret name -> the jobs whose header declares it."""
        found: dict[str, list[str]] = {}
        if self.jobs is None:
            return found
        for job in self.jobs.list_jobs():
            for name in parse_header(job.code, job.name).secrets:
                found.setdefault(name, []).append(job.name)
        return found

    # What the owner API and the CLI ask: async, the hub database is read in a thread
    # (a server database may be slow, and the event loop serves everyone meanwhile).
    async def listing(self) -> SecretList:
        """Every stored secret, and every declared one not set yet: never a value."""
        return await asyncio.to_thread(self._listing)

    async def set(self, name: Any, value: Any, by: str | None) -> SecretSet:
        return await asyncio.to_thread(self._set, name, value, by)

    async def delete(self, name: Any, by: str | None) -> SecretDeleted:
        return await asyncio.to_thread(self._delete, name, by)

    async def changes(self, name: Any) -> SecretChanges:
        """Who set or deleted the secret ``name`` and when, newest first (its last 100
        changes; kept after a delete, so a removed secret's story stays readable)."""
        return await asyncio.to_thread(self._changes, name)

    def _listing(self) -> SecretList:
        declared = self.declared_by()
        stored = {s.name: s for s in self.store.list_secrets()}
        out = []
        for name in sorted(set(stored) | set(declared)):
            info = stored.get(name)
            out.append(SecretInfo(
                name=name, set=info is not None,
                declaredBy=tuple(sorted(declared.get(name, []))),
                updatedAt=_whole_seconds(info.updated) if info else None,
                updatedBy=info.updated_by if info else None))
        return SecretList(secrets=tuple(out))

    def _set(self, name: Any, value: Any, by: str | None) -> SecretSet:
        name = check_secret_name(name)
        created = self.store.put(name, check_secret_value(value), by)
        log.info("secret %s %s by %s", name, "created" if created else "replaced",
                 by or "unknown")
        return SecretSet(success=True, name=name, created=created)

    def _delete(self, name: Any, by: str | None) -> SecretDeleted:
        name = check_secret_name(name)
        if not self.store.delete(name, by):
            raise NotFound(f"There is no secret named '{name}'")
        log.info("secret %s deleted by %s", name, by or "unknown")
        return SecretDeleted(success=True, name=name)

    def _changes(self, name: Any) -> SecretChanges:
        name = check_secret_name(name)
        return SecretChanges(name=name, changes=tuple(
            SecretChange(action="set" if c.action == "set" else "delete",
                         at=_whole_seconds(c.at), by=c.by)
            for c in self.store.changes(name)))
