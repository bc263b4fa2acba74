"""Opening a hub: sign in if asked, then read who and where we are. Blocking, plain
Python: the connect dialog runs it through the TaskManager."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from console_app.client.connection import API, HubConnection
from shared import wire
from shared.errors import BadRequest, Forbidden, NotSignedIn
from shared.wire.auth import CallerView, IssuedToken, TokenRequest, TokenRevoked
from shared.wire.health import Health
from shared.wire.store import StoreInfo


@dataclass(frozen=True)
class Credentials:
    token: str = ""
    name: str = ""
    password: str = ""

    @property
    def by_password(self) -> bool:
        return bool(self.name)


REVOKE_TIMEOUT_S = 3.0  # at quit the console waits this long, at most, for the hub
# DELETE with a token revokes that very token: whoever holds it may give it up.
REVOKE_PATH = "/api/auth/token"


@dataclass
class Connected:
    conn: HubConnection
    token: str
    info: dict[str, Any] = field(default_factory=dict)
    minted: bool = False  # the hub issued the token for this sign-in (name and password)
    kept: bool = False    # the token was stored in the vault for the next start

    @property
    def revoke_at_close(self) -> bool:
        """A token minted for this sign-in and kept nowhere is useless once the
        console lets go of it: left on the hub it would only be a spare credential."""
        return self.minted and not self.kept


def normalise_url(text: str) -> str:
    """``host:8700`` → ``http://host:8700``; trailing slashes dropped."""
    url = text.strip().rstrip("/")
    if not url:
        raise BadRequest("Enter the hub's address, e.g. http://127.0.0.1:8700")
    if "://" not in url:
        url = f"http://{url}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadRequest(f"Not a hub address: {text.strip()}")
    return url


def token_label() -> str:
    """What the hub lists the console's token as (``webhub user list``)."""
    return f"console on {socket.gethostname()}"[:60]


def open_hub(url: str, creds: Credentials, timeout: float = 30.0) -> Connected:
    """A signed-in connection with ``info`` = health plus ``user`` (/api/auth/me) and
    ``store`` (/api/webjobs/store). Raises the hub's error classes."""
    url = normalise_url(url)
    token = creds.token.strip()
    if creds.by_password:
        asked = TokenRequest(name=creds.name.strip(), password=creds.password,
                             label=token_label())
        with HubConnection(url, timeout=timeout) as anonymous:
            token = anonymous.typed(IssuedToken, "POST", "/api/auth/token",
                                    json=wire.encode(asked)).token
    if not token:
        raise BadRequest("Enter a token, or a name and password")
    conn = HubConnection(url, token, timeout=timeout)
    try:
        info = read_info(conn)
    except BaseException:
        conn.close()
        raise
    return Connected(conn, token, info, minted=creds.by_password)


def revoke_token(url: str, token: str, timeout: float = REVOKE_TIMEOUT_S) -> None:
    """Ask the hub to revoke ``token`` (authenticated by that token). Raises the
    hub's error classes, or HubUnreachable."""
    with HubConnection(url, token, timeout=timeout) as conn:
        conn.typed(TokenRevoked, "DELETE", REVOKE_PATH)


def read_info(conn: HubConnection) -> dict[str, Any]:
    """The status bar's view: the health's fields, ``user`` and ``store`` (each read
    as its ``shared.wire`` shape, kept as plain values for the screens)."""
    health = conn.typed(Health, "GET", f"{API}/health")
    user = conn.typed(CallerView, "GET", "/api/auth/me")
    if user.kind == "anonymous":
        raise NotSignedIn("The hub did not take these credentials")
    if not (user.kind == "system" or user.userClass == "OWNER"):
        raise Forbidden(f"{user.name} is not an owner: the console is for owners")
    store = conn.typed(StoreInfo, "GET", f"{API}/store")
    return {**wire.encode(health), "user": wire.encode(user), "store": wire.encode(store)}


def describe_store(store: dict[str, Any]) -> str:
    """``files · 12 jobs`` or ``db (postgresql) · 12 jobs``."""
    kind = str(store.get("store", "?"))
    if store.get("database"):
        kind += f" ({store['database']})"
    jobs = store.get("jobs")
    return f"{kind} · {jobs} jobs" if jobs is not None else kind
