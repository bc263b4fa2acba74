"""The user directory (hub.store.identity): one suite against every hub database
(embedded SQLite, PostgreSQL and MariaDB through ODBC), plus SQLite file details."""

from __future__ import annotations

import logging
import sqlite3
import stat
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import argon2
import pytest

from hub import passwords
from hub.store.hubdb import open_hub_database
from hub.store.identity import IdentityStore, open_identity_store
from hub.store.identity_schema import SCHEMA_VERSION
from shared.errors import BadJobName, BadRequest, NotFound, StoreUnavailable
from tests.servers import HUB_BACKENDS, fresh_database


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "hub.db"


@pytest.fixture(params=HUB_BACKENDS)
def hub_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def store(hub_url: str, clock: Clock) -> Iterator[IdentityStore]:
    users = IdentityStore(open_hub_database(hub_url), clock=clock)
    yield users
    users.close()


def raw_rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(str(path))
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


def db_rows(store: IdentityStore, sql: str) -> list[tuple[object, ...]]:
    return [tuple(float(v) if isinstance(v, float) else v for v in row)
            for row in store.db.read(sql)]


# -- secrets (password hashing itself: tests/hub/test_passwords.py) ---------------


def test_secrets_and_digests() -> None:
    one, two = passwords.new_secret("wjt_"), passwords.new_secret("wjt_")
    assert one.startswith("wjt_") and len(one) > 40 and one != two
    digest = passwords.secret_digest(one)
    assert len(digest) == 64 and int(digest, 16) >= 0 and one not in digest


# -- database -------------------------------------------------------------------


def test_open_database_settings_and_schema(db_path: Path) -> None:
    db = open_hub_database(f"sqlite:///{db_path}")
    IdentityStore(db)
    conn = sqlite3.connect(str(db_path))
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        with db.transaction() as tx:
            assert tx.read("PRAGMA foreign_keys") == [(1,)]
            assert tx.read("PRAGMA busy_timeout") == [(5000,)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"schema_version", "users", "api_tokens", "sessions", "api_keys"} <= tables
    finally:
        conn.close()
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
    db.close()
    IdentityStore(open_hub_database(f"sqlite:///{db_path}")).close()  # idempotent
    assert raw_rows(db_path, "SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


# -- users ----------------------------------------------------------------------


def test_add_get_list_count_users(store: IdentityStore) -> None:
    ann = store.add_user("ann", "owner", staff_id=7)
    bob = store.add_user("bob.smith@example.org", "USER")
    assert (ann.name, ann.user_class, ann.staff_id, ann.disabled) == ("ann", "OWNER", 7, False)
    assert bob.staff_id is None and bob.user_class == "USER"
    assert store.get_user("ann") == ann
    assert store.get_user_by_id(bob.id) == bob
    assert store.get_user("nobody") is None and store.get_user_by_id(999) is None
    assert store.list_users() == [ann, bob]
    assert store.count_users() == 2


@pytest.mark.parametrize(("name", "user_class", "staff_id", "says"), [
    ("", "USER", None, "user name"),
    ("a" * 65, "USER", None, "user name"),
    ("ann smith", "USER", None, "user name"),
    ("ann/../x", "USER", None, "user name"),
    ("ann", "ADMIN", None, "class"),
    ("ann", "", None, "class"),
    ("ann", "USER", -1, "staff id"),
])
def test_add_user_refuses_bad_input(store: IdentityStore, name: str, user_class: str,
                                    staff_id: int | None, says: str) -> None:
    with pytest.raises(BadRequest, match=says):
        store.add_user(name, user_class, staff_id)
    assert store.count_users() == 0


def test_add_user_refuses_duplicates_even_by_case(store: IdentityStore) -> None:
    store.add_user("ann", "USER")
    for name in ("ann", "ANN"):
        with pytest.raises(BadRequest, match="already exists"):
            store.add_user(name, "OWNER")
    assert store.count_users() == 1


def test_set_and_check_password(store: IdentityStore) -> None:
    ann = store.add_user("ann", "USER")
    assert store.check_password("ann", "anything-at-all") is None  # no password yet
    with pytest.raises(BadRequest, match="at least 8"):
        store.set_password("ann", "short")
    with pytest.raises(NotFound):
        store.set_password("nobody", "long enough")
    store.set_password("ann", "long enough")
    assert store.check_password("ann", "long enough") == ann
    assert store.check_password("ann", "long enougH") is None
    assert store.check_password("nobody", "long enough") is None
    store.set_password("ann", "another one")
    assert store.check_password("ann", "long enough") is None
    assert store.check_password("ann", "another one") == ann


@pytest.mark.parametrize("case", ["unknown", "disabled", "no password", "wrong", "right"])
def test_check_password_always_spends_one_verify(store: IdentityStore, case: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    store.add_user("ann", "USER")
    if case != "no password":
        store.set_password("ann", "the password")
    if case == "disabled":
        store.disable_user("ann")
    calls: list[str] = []
    real = passwords.verify_password

    def counting(pw: str, encoded: str) -> bool:
        calls.append(encoded)
        return real(pw, encoded)

    monkeypatch.setattr(passwords, "verify_password", counting)
    name = "nobody" if case == "unknown" else "ann"
    given = "the passworX" if case == "wrong" else "the password"
    result = store.check_password(name, given)
    assert (result is not None) == (case == "right")
    assert len(calls) == 1
    if case in ("unknown", "disabled", "no password"):
        assert calls == [passwords.DUMMY_HASH]


# Made by the hub's scrypt code from before Argon2id (see tests/hub/test_passwords.py).
LEGACY_PASSWORD = "legacy pass 2026"
LEGACY_SCRYPT = ("scrypt$16384$8$1$50MDZBev6HRyVzW+YHNEGw==$"
                 "nC6ZOqP5MFm51jesaABdfTYuMSFw0WURUck4E5MCJWU=")


def stored_hash(store: IdentityStore, name: str) -> str:
    return str(store.db.read("SELECT password_hash FROM users WHERE name = ?", (name,))[0][0])


def test_set_password_stores_argon2id(store: IdentityStore) -> None:
    store.add_user("ann", "USER")
    store.set_password("ann", "the password")
    assert stored_hash(store, "ann").startswith("$argon2id$v=19$m=47104,t=1,p=1$")


def test_old_scrypt_hash_is_upgraded_on_sign_in(store: IdentityStore) -> None:
    ann = store.add_user("ann", "USER")
    store.db.write("UPDATE users SET password_hash = ? WHERE name = ?", (LEGACY_SCRYPT, "ann"))
    assert store.check_password("ann", LEGACY_PASSWORD + "!") is None
    assert stored_hash(store, "ann") == LEGACY_SCRYPT  # a wrong password upgrades nothing
    assert store.check_password("ann", LEGACY_PASSWORD) == ann
    upgraded = stored_hash(store, "ann")
    assert upgraded.startswith("$argon2id$") and not passwords.needs_rehash(upgraded)
    assert store.check_password("ann", LEGACY_PASSWORD) == ann
    assert stored_hash(store, "ann") == upgraded  # current: left alone


def test_weaker_argon2id_is_upgraded_on_sign_in(store: IdentityStore) -> None:
    weak = argon2.PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1).hash("pw 12345")
    ann = store.add_user("ann", "USER")
    store.db.write("UPDATE users SET password_hash = ? WHERE name = ?", (weak, "ann"))
    assert store.check_password("ann", "pw 12345") == ann
    assert stored_hash(store, "ann").startswith("$argon2id$v=19$m=47104,t=1,p=1$")


def test_upgrade_does_not_overwrite_a_password_set_meanwhile(
        store: IdentityStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The upgrade hashes outside any lock; if the password changes in that window the
    new password wins."""
    ann = store.add_user("ann", "USER")
    store.db.write("UPDATE users SET password_hash = ? WHERE name = ?", (LEGACY_SCRYPT, "ann"))
    real_hash = passwords.hash_password

    def hash_while_password_changes(pw: str) -> str:
        monkeypatch.setattr(passwords, "hash_password", real_hash)
        store.set_password("ann", "changed meanwhile")
        return real_hash(pw)

    monkeypatch.setattr(passwords, "hash_password", hash_while_password_changes)
    assert store.check_password("ann", LEGACY_PASSWORD) == ann
    assert store.check_password("ann", "changed meanwhile") == ann
    assert store.check_password("ann", LEGACY_PASSWORD) is None


@pytest.mark.expected_warning
def test_a_failed_upgrade_still_signs_in_and_logs_no_secret(
        store: IdentityStore, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    ann = store.add_user("ann", "USER")
    store.db.write("UPDATE users SET password_hash = ? WHERE name = ?", (LEGACY_SCRYPT, "ann"))
    refused: list[str] = []

    def unreachable(sql: str, params: Sequence[Any] = ()) -> int:
        refused.append(str(params[0]))
        # a driver's message may quote the values, the new hash among them
        raise StoreUnavailable(f"connection lost sending {sql} with {params}")

    monkeypatch.setattr(store, "_write", unreachable)
    with caplog.at_level(logging.INFO, logger="webhub.identity"):
        assert store.check_password("ann", LEGACY_PASSWORD) == ann
    assert len(refused) == 1 and refused[0].startswith("$argon2id$")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        "password hash of user ann not upgraded: StoreUnavailable (SYS-503)"]
    for secret in (LEGACY_PASSWORD, LEGACY_SCRYPT, refused[0], refused[0][-20:]):
        assert secret not in caplog.text
    monkeypatch.undo()
    assert stored_hash(store, "ann") == LEGACY_SCRYPT  # the next sign-in tries again
    assert store.check_password("ann", LEGACY_PASSWORD) == ann
    assert stored_hash(store, "ann").startswith("$argon2id$")


def test_disable_user(store: IdentityStore) -> None:
    ann = store.add_user("ann", "USER")
    store.set_password("ann", "the password")
    _, token = store.issue_token("ann")
    session = store.open_session(ann.id)
    store.disable_user("ann")
    user = store.get_user("ann")
    assert user is not None and user.disabled
    assert store.check_password("ann", "the password") is None
    assert store.user_for_token(token) is None
    assert store.user_for_session(session, 3600) is None
    assert [t.revoked for t in store.list_tokens("ann")] == [False]  # rows kept, not revoked
    with pytest.raises(BadRequest, match="disabled"):
        store.issue_token("ann")
    with pytest.raises(BadRequest, match="disabled"):
        store.open_session(ann.id)
    with pytest.raises(NotFound):
        store.disable_user("nobody")


# -- tokens ---------------------------------------------------------------------


def test_tokens(store: IdentityStore, clock: Clock) -> None:
    ann = store.add_user("ann", "OWNER")
    info, token = store.issue_token("ann", "laptop")
    assert token.startswith("wjt_")
    assert (info.user_name, info.label, info.created, info.last_used, info.revoked) == \
        ("ann", "laptop", clock.now, None, False)
    assert store.user_for_token(token) == ann
    assert store.user_for_token(token + "x") is None
    assert store.user_for_token("wjk_" + token[4:]) is None
    assert store.user_for_token("") is None
    other_info, other = store.issue_token("ann")
    assert other != token and other_info.id != info.id and other_info.label == ""
    assert [t.id for t in store.list_tokens("ann")] == [info.id, other_info.id]
    assert store.revoke_token(info.id) is True
    assert store.revoke_token(info.id) is True  # still a token, still revoked
    assert store.revoke_token(12345) is False
    assert store.user_for_token(token) is None
    assert store.user_for_token(other) == ann
    assert [t.revoked for t in store.list_tokens("ann")] == [True, False]
    with pytest.raises(NotFound):
        store.issue_token("nobody")
    with pytest.raises(NotFound):
        store.list_tokens("nobody")
    with pytest.raises(BadRequest, match="label"):
        store.issue_token("ann", "x" * 101)


def test_token_last_used_is_throttled(store: IdentityStore, clock: Clock) -> None:
    store.add_user("ann", "USER")
    _, token = store.issue_token("ann")
    start = clock.now
    store.user_for_token(token)
    assert store.list_tokens("ann")[0].last_used == start
    clock.now += 30
    store.user_for_token(token)
    assert store.list_tokens("ann")[0].last_used == start
    clock.now += 31
    store.user_for_token(token)
    assert store.list_tokens("ann")[0].last_used == start + 61


# -- sessions -------------------------------------------------------------------


def test_sessions(store: IdentityStore) -> None:
    ann = store.add_user("ann", "USER")
    secret = store.open_session(ann.id)
    assert store.user_for_session(secret, 600) == ann
    assert store.user_for_session(secret + "x", 600) is None
    assert store.user_for_session("", 600) is None
    store.close_session(secret)
    assert store.user_for_session(secret, 600) is None
    store.close_session(secret)  # twice is fine
    store.close_session("not a session")
    with pytest.raises(NotFound):
        store.open_session(999)


def test_session_idle_expiry_and_touch(store: IdentityStore, clock: Clock) -> None:
    ann = store.add_user("ann", "USER")
    secret = store.open_session(ann.id)
    start = clock.now
    clock.now += 500
    assert store.user_for_session(secret, 600) == ann  # touched: last_seen = start + 500
    assert db_rows(store, "SELECT last_seen FROM sessions") == [(start + 500,)]
    clock.now += 30
    assert store.user_for_session(secret, 600) == ann  # within a minute: no write
    assert db_rows(store, "SELECT last_seen FROM sessions") == [(start + 500,)]
    clock.now += 571  # 601 s idle since the last touch
    assert store.user_for_session(secret, 600) is None
    assert db_rows(store, "SELECT COUNT(*) FROM sessions") == [(0,)]
    clock.now += 1
    assert store.user_for_session(secret, 10**9) is None  # deleted, not just refused


# -- API keys -------------------------------------------------------------------


def test_api_keys(store: IdentityStore, clock: Clock) -> None:
    key, secret = store.issue_key("report", "zapier")
    assert secret.startswith("wjk_")
    assert (key.job_name, key.label, key.created, key.last_used, key.revoked) == \
        ("report", "zapier", clock.now, None, False)
    found = store.key_for_secret(secret)
    assert found is not None and found.id == key.id and found.job_name == "report"
    assert store.list_keys("report")[0].last_used == clock.now
    clock.now += 10
    store.key_for_secret(secret)
    assert store.list_keys("report")[0].last_used == clock.now - 10  # throttled
    assert store.key_for_secret(secret + "x") is None
    assert store.key_for_secret("wjt_" + secret[4:]) is None
    other, _ = store.issue_key("other")
    assert [k.id for k in store.list_keys("report")] == [key.id]
    assert store.list_keys("nothing") == []
    assert store.revoke_key("report", other.id) is False  # not a key of that job
    assert store.revoke_key("report", 999) is False
    assert store.revoke_key("report", key.id) is True
    assert store.key_for_secret(secret) is None
    assert store.list_keys("report")[0].revoked is True
    with pytest.raises(BadJobName):
        store.issue_key("../etc")


# -- storage --------------------------------------------------------------------


def test_only_digests_and_hashes_are_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_identity_store(f"sqlite:///{home / 'hub.db'}")
    ann = store.add_user("ann", "OWNER")
    store.set_password("ann", "plaintext-password-123")
    _, token = store.issue_token("ann", "t")
    session = store.open_session(ann.id)
    _, key = store.issue_key("report")
    store.user_for_token(token)
    store.user_for_session(session, 60)
    store.key_for_secret(key)
    plaintexts = [token, session, key, "plaintext-password-123"]
    dumps = [repr(raw_rows(home / "hub.db", f"SELECT * FROM {t}"))
             for t in ("users", "api_tokens", "sessions", "api_keys")]
    files = list(home.glob("hub.db*"))
    assert files  # the database, and its WAL while open
    blobs = [f.read_bytes() for f in files]
    for secret in plaintexts:
        assert not any(secret in dump for dump in dumps)
        assert not any(secret.encode() in blob for blob in blobs)
        assert not any(secret[4:12].encode() in blob for blob in blobs)
    assert passwords.secret_digest(token) in dumps[1]
    store.close()
    for secret in plaintexts:
        assert secret.encode() not in (home / "hub.db").read_bytes()


def test_reopening_keeps_data(hub_url: str) -> None:
    store = open_identity_store(hub_url)
    ann = store.add_user("ann", "OWNER", 3)
    store.set_password("ann", "the password")
    info, token = store.issue_token("ann")
    session = store.open_session(ann.id)
    _, key = store.issue_key("report")
    store.close()
    again = open_identity_store(hub_url)
    try:
        assert again.list_users() == [ann]
        assert again.check_password("ann", "the password") == ann
        assert again.user_for_token(token) == ann
        assert again.user_for_session(session, 3600) == ann
        assert again.key_for_secret(key) is not None
        assert again.list_tokens("ann")[0].id == info.id
    finally:
        again.close()


def test_two_threads_share_one_store(store: IdentityStore) -> None:
    store.add_user("ann", "USER")
    errors: list[BaseException] = []

    def work(tag: str) -> None:
        try:
            for i in range(40):
                user = store.add_user(f"{tag}{i}", "USER")
                _, token = store.issue_token(user.name)
                assert store.user_for_token(token) == user
                secret = store.open_session(user.id)
                assert store.user_for_session(secret, 60) == user
                _, key = store.issue_key(f"job_{tag}")
                assert store.key_for_secret(key) is not None
                store.list_users()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(tag,)) for tag in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.count_users() == 81


def test_a_second_connection_sees_writes(hub_url: str) -> None:
    """The CLI (or another node) writes with its own connections while the hub holds
    some open."""
    hub_side = IdentityStore(open_hub_database(hub_url))
    cli_side = IdentityStore(open_hub_database(hub_url))
    try:
        cli_side.add_user("ann", "USER")
        _, token = cli_side.issue_token("ann")
        found = hub_side.user_for_token(token)
        assert found is not None and found.name == "ann"
        cli_side.disable_user("ann")
        assert hub_side.user_for_token(token) is None
    finally:
        hub_side.close()
        cli_side.close()
