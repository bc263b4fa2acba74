"""A password hash from before Argon2id (scrypt) signs in through the real sign-in
route of a real hub, and that sign-in replaces the stored hash by an Argon2id one;
``webhub user passwd`` stores Argon2id."""

from __future__ import annotations

from collections.abc import Callable

from hub import passwords
from hub.store.identity import open_identity_store
from tests.hub.conftest import HubProcess

# Made by the hub's scrypt code from before Argon2id (hub/passwords.py at 5341d2e).
LEGACY_PASSWORD = "legacy pass 2026"
LEGACY_SCRYPT = ("scrypt$16384$8$1$50MDZBev6HRyVzW+YHNEGw==$"
                 "nC6ZOqP5MFm51jesaABdfTYuMSFw0WURUck4E5MCJWU=")


def stored_hash(hub: HubProcess, name: str) -> str:
    store = open_identity_store(f"sqlite:///{hub.home / 'hub.db'}")
    try:
        return str(store.db.read("SELECT password_hash FROM users WHERE name = ?",
                                 (name,))[0][0])
    finally:
        store.close()


def set_stored_hash(hub: HubProcess, name: str, encoded: str) -> None:
    store = open_identity_store(f"sqlite:///{hub.home / 'hub.db'}")
    try:
        assert store.db.write("UPDATE users SET password_hash = ? WHERE name = ?",
                              (encoded, name)) == 1
    finally:
        store.close()


def test_cli_passwd_stores_argon2id(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={})
    hub.add_user("ola", "OWNER", password="a fresh password")
    encoded = stored_hash(hub, "ola")
    assert encoded.startswith("$argon2id$v=19$m=47104,t=1,p=1$"), encoded
    assert not passwords.needs_rehash(encoded)


def test_scrypt_hash_signs_in_over_http_and_is_upgraded(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={})
    hub.add_user("ola", "OWNER", password="replaced below")
    set_stored_hash(hub, "ola", LEGACY_SCRYPT)
    with hub.client() as c:
        wrong = c.post("/api/auth/login", json={"name": "ola", "password": "not it at all"})
        assert wrong.status_code == 401, wrong.text
        assert stored_hash(hub, "ola") == LEGACY_SCRYPT

        signed_in = c.post("/api/auth/login", json={"name": "ola", "password": LEGACY_PASSWORD})
        assert signed_in.status_code == 200 and signed_in.json()["success"] is True, signed_in.text
        upgraded = stored_hash(hub, "ola")
        assert upgraded.startswith("$argon2id$v=19$m=47104,t=1,p=1$"), upgraded
        assert passwords.verify_password(LEGACY_PASSWORD, upgraded)

        again = c.post("/api/auth/login", json={"name": "ola", "password": LEGACY_PASSWORD})
        assert again.status_code == 200, again.text
    assert stored_hash(hub, "ola") == upgraded
    assert "password hash of user ola upgraded to Argon2id" in hub.log_text()
    assert LEGACY_PASSWORD not in hub.log_text()
