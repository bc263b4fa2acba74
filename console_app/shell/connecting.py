"""Opening a hub: sign in if asked, then read who and where we are. Blocking, plain
Python: the connect dialog runs it through the TaskManager."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from console_app.client.connection import API, HubConnection
from console_app.client.history import get_health
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


@dataclass(frozen=True)
class HubInfo:
    """What the console read of the hub when it signed in: its health, who the token
    is (``/api/auth/me``) and where the jobs are kept (``/store``). A session made
    without signing in (a script's, a test's) has none of them; the status bar's
    first health poll fills that part in."""

    health: Health | None = None
    user: CallerView | None = None
    store: StoreInfo | None = None

    @property
    def user_name(self) -> str:
        """The signed-in user's name; empty when unknown or the caller has none."""
        return (self.user.name or "") if self.user is not None else ""


@dataclass
class Connected:
    conn: HubConnection
    token: str
    info: HubInfo = field(default_factory=HubInfo)
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
    """A signed-in connection with its :class:`HubInfo`. Raises the hub's error
    classes."""
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


def read_info(conn: HubConnection) -> HubInfo:
    """The hub's health, the caller and the store; NotSignedIn for credentials the hub
    did not take, Forbidden for a caller that is not an owner."""
    health = get_health(conn)
    user = conn.typed(CallerView, "GET", "/api/auth/me")
    if user.kind == "anonymous":
        raise NotSignedIn("The hub did not take these credentials")
    if not (user.kind == "system" or user.userClass == "OWNER"):
        raise Forbidden(f"{user.name} is not an owner: the console is for owners")
    store = conn.typed(StoreInfo, "GET", f"{API}/store")
    return HubInfo(health, user, store)


def describe_store(store: StoreInfo) -> str:
    """``files · 12 jobs`` or ``db (postgresql) · 12 jobs``."""
    kind = f"{store.store} ({store.database})" if store.database else store.store
    return f"{kind} · {store.jobs} jobs"
