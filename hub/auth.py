"""Who is calling, and may they run this job. The only module that reads identity.

Today a caller is the hub's system token (``WEBHUB_SYSTEM_TOKEN`` as a bearer
token) or nobody; users, sessions and API keys arrive with the identity issue
as new branches of ``resolve_caller``.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shared.errors import Forbidden, NotSignedIn

# Request headers a job never sees: credentials stay with the hub.
WITHHELD_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization", "x-api-key"})


@dataclass(frozen=True)
class Caller:
    kind: str            # anonymous, user, system, schedule, apikey
    id: str | None = None
    name: str | None = None
    user_class: str | None = None

    def as_job_view(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "name": self.name, "userClass": self.user_class}

    @property
    def is_owner(self) -> bool:
        return self.kind == "system" or self.user_class == "OWNER"


ANONYMOUS = Caller("anonymous")
SYSTEM = Caller("system", id="system", name="system", user_class="OWNER")


def _bearer(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def resolve_caller(headers: Mapping[str, str], system_token: str | None) -> Caller:
    token = _bearer(headers)
    if token and system_token and hmac.compare_digest(token.encode(), system_token.encode()):
        return SYSTEM
    return ANONYMOUS


def check_job_access(caller: Caller, access: str) -> None:
    """Raise unless ``caller`` may run a job whose header says ``Access: access``."""
    if access == "public" or caller.kind in ("system", "schedule"):
        return
    if caller.kind == "anonymous":
        raise NotSignedIn("Sign in to run this job")
    if access == "user" or caller.is_owner:
        return
    raise Forbidden("You may not run this job")


def check_owner(caller: Caller) -> None:
    """The management API is for owners (and the system token)."""
    if caller.kind == "anonymous":
        raise NotSignedIn("Sign in as an owner to manage jobs")
    if not caller.is_owner:
        raise Forbidden("Only owners may manage jobs")
