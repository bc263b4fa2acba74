"""API keys pinned to one job (``Access: key``): what owners issue, list and revoke.

Async at its boundary: the keys live in the user directory, read as
:func:`hub.services.identity.on_directory` says."""

from __future__ import annotations

from dataclasses import asdict

from hub.services.identity import on_directory
from hub.services.runs import JobRunner
from hub.store.identity import IdentityStore
from shared.errors import BadRequest, NotFound
from shared.wire.keys import ApiKeyInfo, IssuedKey, KeyList, KeyRevoked

__all__ = ["MAX_LABEL", "KeyService"]

MAX_LABEL = 100  # characters of a key's label


def _key_id(raw: str) -> int | None:
    """A key id from the path; None for anything no key can have (digits only, and
    short: ``int`` alone would take ' 2', '+2' or '٢', and a huge one no database binds)."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        return None
    return int(raw)


class KeyService:
    def __init__(self, users: IdentityStore, runner: JobRunner) -> None:
        self.users = users
        self.runner = runner  # to check a job exists before its keys are read

    async def job_must_exist(self, name: str) -> None:
        await self.runner.load(name)  # HUB-007 for a bad name, SYS-404 for none

    async def issue(self, job: str, label: str) -> IssuedKey:
        """A new key for ``job``, whose route checked it exists before reading the
        body: its secret is shown once."""
        if len(label) > MAX_LABEL:
            raise BadRequest(f"'label' must be text of at most {MAX_LABEL} characters")
        key, secret = await on_directory(self.users, self.users.issue_key, job, label)
        return IssuedKey(success=True, key=secret, **asdict(key))

    async def listing(self, job: str) -> KeyList:
        """``job``'s keys (which must exist), never their secrets."""
        await self.job_must_exist(job)
        keys = await on_directory(self.users, self.users.list_keys, job)
        return KeyList(keys=tuple(ApiKeyInfo(**asdict(k)) for k in keys))

    async def revoke(self, job: str, raw_id: str) -> KeyRevoked:
        """Revoke ``job``'s key ``raw_id`` (as the path gives it); SYS-404 if none."""
        number = _key_id(raw_id)
        if number is None or not await on_directory(self.users, self.users.revoke_key, job, number):
            raise NotFound(f"Job '{job}' has no key {raw_id[:40]}")
        return KeyRevoked(success=True)
