"""Sign-in's bodies: a password for a session or an API token, and who is calling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CallerView", "IssuedToken", "SignIn", "SignedIn", "SignedInUser", "SignedOut",
           "TokenRequest", "TokenRevoked"]


@dataclass(frozen=True)
class SignIn:
    """``POST /api/auth/login``'s body, as JSON or as the sign-in page's form."""

    name: str = ""
    password: str = ""
    next: str = ""  # where the page's form goes afterwards: a path on this hub


@dataclass(frozen=True)
class SignedInUser:
    name: str
    userClass: str


@dataclass(frozen=True)
class SignedIn:
    """``POST /api/auth/login``'s JSON answer (a form post is redirected instead)."""

    success: bool
    user: SignedInUser


@dataclass(frozen=True)
class TokenRequest:
    """``POST /api/auth/token``'s body: a desktop client's name and password."""

    name: str = ""
    password: str = ""
    label: str = ""  # how the token is listed; "console" when empty


@dataclass(frozen=True)
class IssuedToken:
    token: str  # shown once: the hub keeps only its hash
    id: int  # what ``webhub token revoke`` takes


@dataclass(frozen=True)
class TokenRevoked:
    """``DELETE /api/auth/token``: the token the request was made with is gone."""

    success: bool


@dataclass(frozen=True)
class SignedOut:
    success: bool


@dataclass(frozen=True)
class CallerView:
    """``GET /api/auth/me``: who the request's credentials say is calling."""

    kind: Literal["anonymous", "user", "system", "schedule", "apikey"]
    id: int | str | None  # a user's number, "system", "key:<n>"; null for nobody
    name: str | None
    userClass: str | None  # OWNER, ... for a user; OWNER for the system token
