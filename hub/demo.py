"""The demo owner that ``make run`` creates on a hub's first start."""

from __future__ import annotations

import secrets

from hub.store.identity import IdentityStore

DEMO_OWNER = "owner"


def ensure_demo_owner(users: IdentityStore, base_url: str) -> str | None:
    """Create an OWNER with a password and a token when the directory is empty;
    return the sign-in details to print once, or None when users exist."""
    if users.count_users():
        return None
    password = secrets.token_urlsafe(12)
    users.add_user(DEMO_OWNER, "OWNER")
    users.set_password(DEMO_OWNER, password)
    _, token = users.issue_token(DEMO_OWNER, "demo")
    return (f"Demo owner created (shown once):\n"
            f"  sign in at {base_url}/login as '{DEMO_OWNER}' with password {password}\n"
            f"  or use the API token: {token}")
