"""Who is calling, and may they run this job. The only module that reads identity.

A request's caller is exactly one of: the hub's system token, a user's API token
(bearer), a browser session (cookie), an API key pinned to one job (``X-Api-Key``
or bearer), or nobody. Credentials that are presented but do not check out are
refused (401), never quietly treated as nobody; a stale session cookie is the
one exception, so an old cookie never breaks a public page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hub.abuse import equal_secrets
from shared.errors import Forbidden, NotSignedIn

# Request headers a job never sees: credentials stay with the hub.
WITHHELD_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization", "x-api-key"})
SESSION_COOKIE = "webhub_session"
DEBUG_COOKIE = "webhub_debug"  # tags a browser tab a debugger is attached to
# The cookies the hub reads: a job's answer may not set them (hub.services.answer_rules).
HUB_COOKIES = frozenset({SESSION_COOKIE, DEBUG_COOKIE})
KEY_PREFIX = "wjk_"


@dataclass(frozen=True)
class Caller:
    kind: str                    # anonymous, user, system, schedule, apikey
    id: Any = None
    name: str | None = None
    user_class: str | None = None
    via: str | None = None       # token, session, key, system: how it was proven
    key_job: str | None = None   # for an API key: the one job it opens
    staff_id: int | None = None

    def as_job_view(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "name": self.name, "userClass": self.user_class}

    @property
    def is_owner(self) -> bool:
        return self.kind == "system" or (self.kind == "user" and self.user_class == "OWNER")


ANONYMOUS = Caller("anonymous")
SYSTEM = Caller("system", id="system", name="system", user_class="OWNER", via="system")
SCHEDULER = Caller("schedule", id="system", name="scheduler", user_class="OWNER", via="system")


class _User(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def user_class(self) -> str: ...
    @property
    def staff_id(self) -> int | None: ...


class _Key(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def job_name(self) -> str: ...
    @property
    def label(self) -> str: ...


class Directory(Protocol):
    """What identity needs of the user directory (``hub.store.identity``)."""

    def user_for_token(self, token: str) -> _User | None: ...
    def user_for_session(self, secret: str, idle_seconds: float) -> _User | None: ...
    def key_for_secret(self, secret: str) -> _Key | None: ...


def _user_caller(user: _User, via: str) -> Caller:
    return Caller("user", id=user.id, name=user.name, user_class=user.user_class, via=via,
                  staff_id=user.staff_id)


def _key_caller(key: _Key) -> Caller:
    return Caller("apikey", id=f"key:{key.id}", name=key.label or f"key {key.id}", via="key",
                  key_job=key.job_name)


def _bearer(headers: Mapping[str, str]) -> str | None:
    """The bearer token, if any. Another scheme (say Basic, added by a proxy in front
    of the hub) is not the hub's credential and is left alone."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    if not token.strip():
        raise NotSignedIn("The bearer token is empty")
    return token.strip()


class Identity:
    def __init__(self, directory: Directory, system_token: str, session_idle_s: float) -> None:
        self.directory = directory
        self.system_token = system_token
        self.session_idle_s = session_idle_s

    def resolve(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> Caller:
        api_key = headers.get("x-api-key", "").strip()
        if api_key:
            return self._key(api_key)
        token = _bearer(headers)
        if token is not None:
            return self._token(token)
        secret = cookies.get(SESSION_COOKIE, "")
        if secret:
            user = self.directory.user_for_session(secret, self.session_idle_s)
            if user is not None:
                return _user_caller(user, "session")
        return ANONYMOUS

    def _token(self, token: str) -> Caller:
        if equal_secrets(token, self.system_token):
            return SYSTEM
        if token.startswith(KEY_PREFIX):
            return self._key(token)
        user = self.directory.user_for_token(token)
        if user is None:
            raise NotSignedIn("The token is not valid: unknown, revoked, or its user is disabled")
        return _user_caller(user, "token")

    def _key(self, secret: str) -> Caller:
        key = self.directory.key_for_secret(secret)
        if key is None:
            raise NotSignedIn("The API key is not valid: unknown or revoked")
        return _key_caller(key)


def check_job_access(caller: Caller, job_name: str, access: str) -> None:
    """Raise unless ``caller`` may run ``job_name`` whose header says ``Access: access``.
    (An unreadable level was already turned into ``owner`` by the header parser.)"""
    if access == "public" or caller.kind in ("system", "schedule"):
        return
    if caller.kind == "anonymous":
        raise NotSignedIn("Sign in to run this job")
    if caller.kind == "apikey":
        if caller.key_job == job_name:
            return
        raise Forbidden("This API key opens another job")
    if access == "user" or caller.is_owner:
        return
    raise Forbidden("You may not run this job")


def check_owner(caller: Caller) -> None:
    """The management API is for owners (and the system token)."""
    if caller.kind == "anonymous":
        raise NotSignedIn("Sign in as an owner to manage jobs")
    if not caller.is_owner:
        raise Forbidden("Only owners may manage jobs")


def is_cross_site(headers: Mapping[str, str], own_origin: str) -> bool:
    """Whether a browser sent this request for a page of another site. ``Sec-Fetch-Site``
    is believed first (``same-site`` counts as another site: a sibling subdomain is not
    the hub); without it, an ``Origin`` that is not the hub's. Without either, nothing
    says so (a script, or an old browser's plain GET)."""
    fetch_site = headers.get("sec-fetch-site", "").strip().lower()
    if fetch_site:
        return fetch_site not in ("same-origin", "none")
    origin = headers.get("origin", "").strip()
    return bool(origin) and origin != own_origin


def _visits_page(method: str, headers: Mapping[str, str]) -> bool:
    """A top-level navigation: a link followed, a URL typed, not a form or a fetch."""
    return (method == "GET" and headers.get("sec-fetch-mode", "").lower() == "navigate"
            and headers.get("sec-fetch-dest", "").lower() == "document")


def run_caller(caller: Caller, method: str, headers: Mapping[str, str], own_origin: str,
               page_job: bool) -> Caller:
    """Who runs a job for this request. The session cookie is ambient (the browser sends
    it whichever page asks), so a request another site made carries no identity:
    the caller is nobody, and a job that is not public refuses them. A link from
    another site to a ``Mode: page`` job, followed as a page visit, keeps its caller
    (an emailed link to a page must work). Tokens and keys are never ambient."""
    if caller.via != "session" or not is_cross_site(headers, own_origin):
        return caller
    if page_job and _visits_page(method, headers):
        return caller
    return ANONYMOUS


def check_same_origin(caller: Caller, method: str, headers: Mapping[str, str],
                      own_origin: str) -> None:
    """A state-changing request proven only by the session cookie must come from
    the hub's own pages: a hostile page cannot drive a signed-in owner's browser.
    Token callers are not browsers, so they are not asked."""
    if caller.via != "session" or method in ("GET", "HEAD", "OPTIONS"):
        return
    fetch_site = headers.get("sec-fetch-site", "")
    origin = headers.get("origin", "")
    # A browser that says where the request comes from is believed first.
    same = fetch_site in ("same-origin", "none") if fetch_site else origin == own_origin
    if same and origin in ("", own_origin):
        return
    raise Forbidden("Cross-site request refused: send it from the hub's own pages")
