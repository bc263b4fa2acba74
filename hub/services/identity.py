"""Sign-in: passwords checked under every defence, browser sessions, users' API tokens,
and whose session a cookie is. What ``hub.api.auth_routes`` asks of the user directory.

Async at its boundary. A password check always runs in a thread (hashing is slow on
purpose); the directory's other reads and writes run in a thread when it is a server
database (a slow or unreachable server never holds up the event loop) and inline on
the embedded SQLite file, where they take microseconds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TypeVar

from hub.auth import Identity
from hub.limiting import RequestLimit, SignInGuard
from hub.store.identity import IdentityStore, User
from shared.errors import NotSignedIn
from shared.wire.auth import IssuedToken

__all__ = ["IdentityService", "User", "on_directory"]

T = TypeVar("T")
DEFAULT_TOKEN_LABEL = "console"


async def on_directory(users: IdentityStore, work: Callable[..., T], *args: object) -> T:
    """``work(*args)`` on the user directory: in a thread for a server database,
    inline for the SQLite file."""
    if users.db.url.is_server:
        return await asyncio.to_thread(work, *args)
    return work(*args)


class IdentityService:
    def __init__(self, users: IdentityStore, identity: Identity, sign_in: SignInGuard,
                 sign_in_rate: RequestLimit) -> None:
        self.users = users
        self.identity = identity
        self.sign_in = sign_in  # the per-name throttle: its lock and its growing delay
        self.sign_in_rate = sign_in_rate  # attempts a minute per address, whatever the name

    @property
    def session_max_age_s(self) -> int:
        """How long a session cookie is kept: as long as the session may stay idle."""
        return int(self.identity.session_idle_s)

    async def verified_user(self, name: str, password: str, address: str) -> User:
        """The user whose password this is, with every sign-in defence applied: the
        per-address rate, then the throttle (its lock, its delay), which counts the
        attempt as a failure BEFORE the password is checked, so parallel guesses cannot
        all slip past the lock while their hashes run. Every password check goes
        through here, so a console asking for a token is throttled exactly like the
        sign-in page. Raises ``TooManyRequests`` or ``NotSignedIn``."""
        await self.sign_in_rate.admit(address)
        attempt = await self.sign_in.begin(name, address)
        try:
            if attempt.delay:
                await asyncio.sleep(attempt.delay)  # deliberate: repeated failures slow down
            user = await asyncio.to_thread(self.users.check_password, name, password)
        except Exception:
            await self.sign_in.take_back(attempt)  # the password was never judged
            raise
        if user is None:
            raise NotSignedIn("Wrong name or password")
        await self.sign_in.passed(attempt)
        return user

    async def open_session(self, user: User) -> str:
        """A new browser session for ``user``: the cookie's secret."""
        return await on_directory(self.users, self.users.open_session, user.id)

    async def close_session(self, secret: str) -> None:
        await on_directory(self.users, self.users.close_session, secret)

    async def session_user(self, cookies: Mapping[str, str]) -> str | None:
        """The name of the user whose live session these cookies carry, if any."""
        caller = await on_directory(self.users, self.identity.resolve, {}, cookies)
        return caller.name if caller.kind == "user" else None

    async def issue_token(self, user: User, label: str) -> IssuedToken:
        """A new API token for ``user``, listed as ``label`` (``console`` if empty)."""
        info, secret = await asyncio.to_thread(self.users.issue_token, user.name,
                                               label or DEFAULT_TOKEN_LABEL)
        return IssuedToken(token=secret, id=info.id)

    async def revoke_token_secret(self, secret: str) -> None:
        """The token whose plaintext this is stops working (its holder gives it up)."""
        await asyncio.to_thread(self.users.revoke_token_secret, secret)
