"""The hub's user directory: users and passwords, users' API tokens, browser
sessions and API keys pinned to one job, in the hub database (``hub.db``).

Only digests of tokens, keys and session secrets are stored, and only Argon2id
hashes of passwords (an older scrypt hash is replaced at its next sign-in); a
plaintext secret is returned once, when it is made, and never logged. The tables
live in the hub database (``WEBHUB_DB``: SQLite by default, or PostgreSQL, MariaDB,
SQL Server over ODBC); work that must land together runs in one transaction.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hub import passwords
from hub.store.base import check_job_name
from hub.store.hubdb import HubDatabase, Tx, open_hub_database
from hub.store.identity_schema import ensure_identity_schema
from shared.errors import BadRequest, NotFound, WebJobsError

log = logging.getLogger("webhub.identity")

USER_CLASSES = ("OWNER", "USER")
DATABASE_FILE = "hub.db"
TOKEN_PREFIX = "wjt_"
KEY_PREFIX = "wjk_"
SESSION_PREFIX = "wjs_"
MIN_PASSWORD = 8
MAX_PASSWORD = 1024
MAX_LABEL = 100
TOUCH_EVERY = 60.0  # seconds between last_used / last_seen writes for one credential

_NAME_RE = re.compile(r"[A-Za-z0-9._@-]{1,64}")  # whole names only (fullmatch)
# Row ids are 64-bit integers in every database the hub uses; one past them is no row
# (and a driver would refuse to bind it).
MAX_ROW_ID = 2**63 - 1
_MAX_SECRET = 200  # longer than any secret this module makes: not worth a query
_USER_COLS = "u.id, u.name, u.user_class, u.staff_id, u.disabled"


@dataclass(frozen=True)
class User:
    id: int
    name: str
    user_class: str
    staff_id: int | None
    disabled: bool


@dataclass(frozen=True)
class TokenInfo:
    id: int
    user_name: str
    label: str
    created: float
    last_used: float | None
    revoked: bool


@dataclass(frozen=True)
class ApiKey:
    id: int
    job_name: str
    label: str
    created: float
    last_used: float | None
    revoked: bool


Row = Sequence[Any]


def _user(row: Row) -> User:
    staff = row[3]
    return User(int(row[0]), str(row[1]), str(row[2]), None if staff is None else int(staff),
                bool(row[4]))


def _token(row: Row) -> TokenInfo:
    return TokenInfo(int(row[0]), str(row[1]), str(row[2]), float(row[3]),
                     None if row[4] is None else float(row[4]), bool(row[5]))


def _key(row: Row) -> ApiKey:
    return ApiKey(int(row[0]), str(row[1]), str(row[2]), float(row[3]),
                  None if row[4] is None else float(row[4]), bool(row[5]))


def _row_id(value: int) -> bool:
    """Whether ``value`` could be a row's id (a bool is no id, though Python counts it)."""
    return type(value) is int and 1 <= value <= MAX_ROW_ID


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise BadRequest("A user name must be 1-64 characters of letters, digits, "
                         "'.', '_', '-' and '@'")
    return name


def _check_class(user_class: str) -> str:
    value = user_class.strip().upper() if isinstance(user_class, str) else ""
    if value not in USER_CLASSES:
        raise BadRequest(f"A user class must be one of {', '.join(USER_CLASSES)}, "
                         f"not '{user_class}'")
    return value


def _check_staff_id(staff_id: int | None) -> int | None:
    if staff_id is None:
        return None
    if isinstance(staff_id, bool) or not isinstance(staff_id, int) or staff_id < 0:
        raise BadRequest("A staff id must be a whole number, 0 or more")
    return staff_id


def _check_label(label: str) -> str:
    if not isinstance(label, str) or len(label) > MAX_LABEL or not label.isprintable():
        raise BadRequest(f"A label must be at most {MAX_LABEL} printable characters")
    return label.strip()


def _check_password(password: str) -> str:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise BadRequest(f"A password must be at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise BadRequest(f"A password must be at most {MAX_PASSWORD} characters")
    try:
        password.encode("utf-8")
    except UnicodeError:
        raise BadRequest("A password must be valid text") from None
    return password


def _plausible(secret: str, prefix: str) -> bool:
    return isinstance(secret, str) and secret.startswith(prefix) and len(secret) <= _MAX_SECRET


class IdentityStore:
    """Users, tokens, sessions and API keys in the hub database."""

    def __init__(self, db: HubDatabase, *, clock: Callable[[], float] = time.time) -> None:
        ensure_identity_schema(db)
        self.db = db
        self._clock = clock

    def close(self) -> None:
        self.db.close()

    # -- plumbing -------------------------------------------------------------

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(self.db.read(sql, params))

    def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement on its own (autocommit); the number of rows it changed."""
        return self.db.write(sql, params)

    def _touch(self, table: str, column: str, row_id: int, previous: float | None) -> None:
        """Record a use, at most once a minute per row, to spare writes."""
        now = self._clock()
        if previous is None or now - previous >= TOUCH_EVERY:
            self._write(f"UPDATE {table} SET {column} = ? WHERE id = ?", (now, row_id))

    @staticmethod
    def _active_user(tx: Tx, column: str, value: object) -> User:
        """The user whose ``column`` is ``value``, inside a transaction; refuses a
        missing or disabled one."""
        row = tx.read_one(f"SELECT {_USER_COLS} FROM users u WHERE u.{column} = ?", (value,))
        if row is None:
            raise NotFound(f"No user '{value}'" if column == "name" else "No such user")
        user = _user(row)
        if user.disabled:
            raise BadRequest(f"User '{user.name}' is disabled")
        return user

    # -- users ----------------------------------------------------------------

    def add_user(self, name: str, user_class: str, staff_id: int | None = None) -> User:
        name, cls, staff = _check_name(name), _check_class(user_class), _check_staff_id(staff_id)
        with self.db.transaction() as tx:
            # Names differing only in case would be easy to mistake for each other.
            clash = tx.read_one("SELECT name FROM users WHERE LOWER(name) = LOWER(?)", (name,))
            if clash is not None:
                raise BadRequest(f"A user named '{clash[0]}' already exists")
            user_id = tx.insert(
                "INSERT INTO users (name, user_class, staff_id, password_hash, disabled, created)"
                " VALUES (?, ?, ?, NULL, 0, ?)", (name, cls, staff, self._clock()))
        log.info("user %s added (%s)", name, cls)
        return User(user_id, name, cls, staff, False)

    def get_user(self, name: str) -> User | None:
        rows = self._read(f"SELECT {_USER_COLS} FROM users u WHERE u.name = ?", (name,))
        return _user(rows[0]) if rows else None

    def get_user_by_id(self, user_id: int) -> User | None:
        if not _row_id(user_id):
            return None
        rows = self._read(f"SELECT {_USER_COLS} FROM users u WHERE u.id = ?", (user_id,))
        return _user(rows[0]) if rows else None

    def list_users(self) -> list[User]:
        return [_user(r) for r in self._read(f"SELECT {_USER_COLS} FROM users u ORDER BY u.name")]

    def count_users(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM users")[0][0])

    def set_password(self, name: str, password: str) -> None:
        _check_password(password)
        if self.get_user(name) is None:
            raise NotFound(f"No user '{name}'")
        encoded = passwords.hash_password(password)  # slow: outside the lock
        if not self._write("UPDATE users SET password_hash = ? WHERE name = ?", (encoded, name)):
            raise NotFound(f"No user '{name}'")
        log.info("password of user %s set", name)

    def check_password(self, name: str, password: str) -> User | None:
        """The user, if ``password`` is theirs and they may sign in. Always spends one
        hash check, so the time taken does not tell an unknown user apart. A right
        password whose stored hash is out of date (scrypt, or Argon2id at weaker
        costs) has its hash replaced by one at today's parameters."""
        rows = self._read(f"SELECT {_USER_COLS}, u.password_hash FROM users u WHERE u.name = ?",
                          (name,))
        row = rows[0] if rows else None
        if row is None or row[4] or not row[5]:
            passwords.verify_password(password, passwords.DUMMY_HASH)
            return None
        stored = str(row[5])
        if not passwords.verify_password(password, stored):
            return None
        user = _user(row)
        if passwords.needs_rehash(stored):
            self._rehash(user, password, stored)
        return user

    def _rehash(self, user: User, password: str, stored: str) -> None:
        """Store a current hash of ``password`` in place of ``stored``. Only if the row
        still holds ``stored``: a password set meanwhile is not overwritten. Best effort:
        the password was right, so a failed write must not fail the sign-in (the next
        one tries again); the log names the error's class only, as a driver's message
        may quote the statement's values."""
        encoded = passwords.hash_password(password)  # slow: outside the lock
        try:
            changed = self._write(
                "UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?",
                (encoded, user.id, stored))
        except WebJobsError as exc:
            log.warning("password hash of user %s not upgraded: %s (%s)", user.name,
                        type(exc).__name__, exc.code)
            return
        if changed:
            log.info("password hash of user %s upgraded to Argon2id", user.name)

    def disable_user(self, name: str) -> None:
        """Disable a user: their password, tokens and sessions stop working (the
        rows stay, so the audit trail does)."""
        if not self._write("UPDATE users SET disabled = 1 WHERE name = ?", (name,)):
            raise NotFound(f"No user '{name}'")
        log.info("user %s disabled", name)

    # -- users' API tokens ----------------------------------------------------

    def issue_token(self, user_name: str, label: str = "") -> tuple[TokenInfo, str]:
        """A new token for the user: its record, and the plaintext (shown once)."""
        label = _check_label(label)
        secret = passwords.new_secret(TOKEN_PREFIX)
        now = self._clock()
        with self.db.transaction() as tx:
            user = self._active_user(tx, "name", user_name)
            token_id = tx.insert(
                "INSERT INTO api_tokens (user_id, digest, label, created, last_used, revoked)"
                " VALUES (?, ?, ?, ?, NULL, 0)",
                (user.id, passwords.secret_digest(secret), label, now))
        log.info("token %d issued to user %s", token_id, user.name)
        return TokenInfo(token_id, user.name, label, now, None, False), secret

    def user_for_token(self, token: str) -> User | None:
        if not _plausible(token, TOKEN_PREFIX):
            return None
        rows = self._read(
            f"SELECT t.id, t.last_used, {_USER_COLS} FROM api_tokens t"
            " JOIN users u ON u.id = t.user_id WHERE t.digest = ? AND t.revoked = 0",
            (passwords.secret_digest(token),))
        if not rows:
            return None
        user = _user(rows[0][2:])
        if user.disabled:
            return None
        self._touch("api_tokens", "last_used", int(rows[0][0]), rows[0][1])
        return user

    def revoke_token(self, token_id: int) -> bool:
        """Revoke a token; False when there is no token with that id."""
        if not _row_id(token_id):
            return False
        found = self._write("UPDATE api_tokens SET revoked = 1 WHERE id = ?", (token_id,)) > 0
        if found:
            log.info("token %d revoked", token_id)
        return found

    def revoke_token_secret(self, token: str) -> bool:
        """Revoke the token whose plaintext this is (a client giving up its own token);
        False when no live token has it."""
        if not _plausible(token, TOKEN_PREFIX):
            return False
        found = self._write("UPDATE api_tokens SET revoked = 1 WHERE digest = ? AND revoked = 0",
                            (passwords.secret_digest(token),)) > 0
        if found:
            log.info("a token was revoked by its holder")
        return found

    def list_tokens(self, user_name: str) -> list[TokenInfo]:
        if self.get_user(user_name) is None:
            raise NotFound(f"No user '{user_name}'")
        rows = self._read(
            "SELECT t.id, u.name, t.label, t.created, t.last_used, t.revoked FROM api_tokens t"
            " JOIN users u ON u.id = t.user_id WHERE u.name = ? ORDER BY t.id", (user_name,))
        return [_token(r) for r in rows]

    # -- browser sessions -----------------------------------------------------

    def open_session(self, user_id: int) -> str:
        """A new session for the user; the plaintext secret (for the cookie)."""
        secret = passwords.new_secret(SESSION_PREFIX)
        now = self._clock()
        with self.db.transaction() as tx:
            user = self._active_user(tx, "id", user_id)
            tx.write(
                "INSERT INTO sessions (user_id, digest, created, last_seen) VALUES (?, ?, ?, ?)",
                (user.id, passwords.secret_digest(secret), now, now))
        return secret

    def user_for_session(self, secret: str, idle_seconds: float) -> User | None:
        """The session's user; None when unknown, idle too long (the session is
        then deleted) or the user is disabled."""
        if not _plausible(secret, SESSION_PREFIX):
            return None
        rows = self._read(
            f"SELECT s.id, s.last_seen, {_USER_COLS} FROM sessions s"
            " JOIN users u ON u.id = s.user_id WHERE s.digest = ?",
            (passwords.secret_digest(secret),))
        if not rows:
            return None
        session_id, last_seen = int(rows[0][0]), float(rows[0][1])
        if self._clock() - last_seen > idle_seconds:
            self._write("DELETE FROM sessions WHERE id = ?", (session_id,))
            return None
        user = _user(rows[0][2:])
        if user.disabled:
            return None
        self._touch("sessions", "last_seen", session_id, last_seen)
        return user

    def close_session(self, secret: str) -> None:
        if isinstance(secret, str) and len(secret) <= _MAX_SECRET:
            self._write("DELETE FROM sessions WHERE digest = ?", (passwords.secret_digest(secret),))

    # -- API keys pinned to one job ---------------------------------------------

    def issue_key(self, job_name: str, label: str = "") -> tuple[ApiKey, str]:
        """A new key for the job (``Access: key``): its record and the plaintext."""
        check_job_name(job_name)
        label = _check_label(label)
        secret = passwords.new_secret(KEY_PREFIX)
        now = self._clock()
        key_id = self.db.insert(
            "INSERT INTO api_keys (job_name, digest, label, created, last_used, revoked)"
            " VALUES (?, ?, ?, ?, NULL, 0)",
            (job_name, passwords.secret_digest(secret), label, now))
        log.info("key %d issued for job %s", key_id, job_name)
        return ApiKey(key_id, job_name, label, now, None, False), secret

    def key_for_secret(self, secret: str) -> ApiKey | None:
        if not _plausible(secret, KEY_PREFIX):
            return None
        rows = self._read(
            "SELECT id, job_name, label, created, last_used, revoked FROM api_keys"
            " WHERE digest = ? AND revoked = 0", (passwords.secret_digest(secret),))
        if not rows:
            return None
        key = _key(rows[0])
        self._touch("api_keys", "last_used", key.id, key.last_used)
        return key

    def list_keys(self, job_name: str) -> list[ApiKey]:
        rows = self._read(
            "SELECT id, job_name, label, created, last_used, revoked FROM api_keys"
            " WHERE job_name = ? ORDER BY id", (job_name,))
        return [_key(r) for r in rows]

    def revoke_key(self, job_name: str, key_id: int) -> bool:
        """Revoke a job's key; False when that id is not a key of that job."""
        if not _row_id(key_id):
            return False
        found = self._write("UPDATE api_keys SET revoked = 1 WHERE id = ? AND job_name = ?",
                            (key_id, job_name)) > 0
        if found:
            log.info("key %d of job %s revoked", key_id, job_name)
        return found


def default_hub_db_url(home: Path) -> str:
    """``WEBHUB_DB``'s default: ``hub.db`` in ``WEBHUB_HOME``."""
    return f"sqlite:///{home / DATABASE_FILE}"


def open_identity_store(url: str) -> IdentityStore:
    """The identity store in the database at ``url`` (tables created on first use)."""
    return IdentityStore(open_hub_database(url))
