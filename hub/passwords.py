"""Password hashing (Argon2id) and the random secrets behind tokens, keys and sessions.

Passwords are low-entropy, so they get a slow, salted, memory-hard hash, stored as
the standard PHC string ``$argon2id$v=19$m=47104,t=1,p=1$<salt>$<hash>``. Hashes
made before Argon2id, ``scrypt$<n>$<r>$<p>$<salt b64>$<hash b64>``, still verify,
and ``needs_rehash`` says a stored hash should be replaced at the next sign-in.
Tokens, API keys and session secrets are 256 random bits, so a fast SHA-256 digest
is enough to store them safely. Nothing here logs or keeps a plaintext.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets

import argon2
from argon2.exceptions import InvalidHashError, VerificationError
from argon2.low_level import Type, verify_secret

# OWASP Password Storage Cheat Sheet, Argon2id: m=47104 KiB (46 MiB), t=1, p=1 is the
# first of its equally strong configurations. Of them it is the most memory-hard, so
# the one that costs a GPU or ASIC attacker most, and one verify stays well inside what
# a person signing in notices.
ARGON2_MEMORY_KIB = 47104
ARGON2_TIME_COST = 1
ARGON2_PARALLELISM = 1
SALT_BYTES = 16
HASH_BYTES = 32

_HASHER = argon2.PasswordHasher(time_cost=ARGON2_TIME_COST, memory_cost=ARGON2_MEMORY_KIB,
                                parallelism=ARGON2_PARALLELISM, hash_len=HASH_BYTES,
                                salt_len=SALT_BYTES, type=Type.ID)

# Bounds on the parameters a stored hash may ask for, so a tampered row can make
# verify_password neither very slow nor eat memory: it just fails. Argon2's cost is
# about memory x passes, so that product is bounded too: at most 4x today's.
_MAX_ARGON2_MEMORY_KIB = 128 * 1024
_MAX_ARGON2_TIME = 16
_MAX_ARGON2_PARALLELISM = 16
_MAX_ARGON2_WORK = 4 * ARGON2_MEMORY_KIB * ARGON2_TIME_COST
_ARGON2_RE = re.compile(
    r"\$argon2id\$v=19\$m=([1-9][0-9]{0,9}),t=([1-9][0-9]{0,9}),p=([1-9][0-9]{0,9})"
    r"\$([A-Za-z0-9+/]{11,88})\$([A-Za-z0-9+/]{22,88})")

SCRYPT_SCHEME = "scrypt"
# The same for the old scrypt hashes. The hub wrote N=2^14, r=8, p=1 (16 MiB);
# scrypt's work is about N x r x p and its memory 128 x N x r bytes, so each is bounded
# at 4x that, and a tampered row asking for more (say 2^20, 7, 16: 896 MiB) just fails.
_SCRYPT_WORK_TODAY = 2**14 * 8 * 1
_MAX_SCRYPT_WORK = 4 * _SCRYPT_WORK_TODAY
_MAX_SCRYPT_MEMORY = 4 * 128 * 2**14 * 8
_MAX_R = 32
_MAX_P = 16


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: str) -> bytes:
    """Standard base64, with or without its ``=`` padding (PHC strings leave it off)."""
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded.encode("ascii"), validate=True)


def hash_password(pw: str) -> str:
    """The Argon2id PHC string for ``pw``, with a fresh random salt."""
    return _HASHER.hash(pw)


def needs_rehash(encoded: str) -> bool:
    """Whether ``encoded`` is not an Argon2id hash with today's parameters (an old
    scrypt hash, or Argon2id at other costs), so it should be replaced."""
    if not isinstance(encoded, str) or not encoded.startswith("$argon2id$"):
        return True
    try:
        return _HASHER.check_needs_rehash(encoded)
    except (InvalidHashError, ValueError):
        return True


def _argon2_bounded(encoded: str) -> bool:
    """Whether ``encoded`` is a well-formed Argon2id string whose costs are in bounds."""
    match = _ARGON2_RE.fullmatch(encoded)
    if match is None:
        return False
    m, t, p = (int(match.group(i)) for i in (1, 2, 3))
    if not (8 * p <= m <= _MAX_ARGON2_MEMORY_KIB and t <= _MAX_ARGON2_TIME
            and p <= _MAX_ARGON2_PARALLELISM and m * t <= _MAX_ARGON2_WORK):
        return False
    try:
        salt, digest = _unb64(match.group(4)), _unb64(match.group(5))
    except (ValueError, binascii.Error):
        return False
    return len(salt) >= 8 and 16 <= len(digest) <= 64


def _verify_argon2(pw: str, encoded: str) -> bool:
    if not _argon2_bounded(encoded):
        return False
    try:
        return verify_secret(encoded.encode("ascii"), pw.encode("utf-8"), Type.ID)
    except (VerificationError, InvalidHashError, ValueError, MemoryError):
        return False


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    # OpenSSL's own count: 128 x r x (N + 2) for V, 128 x r x p for B, and some slack.
    maxmem = 128 * r * (n + 2 + p) + 1024 * 1024
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p,
                          maxmem=maxmem, dklen=dklen)


def _parse_scrypt(encoded: str) -> tuple[int, int, int, bytes, bytes] | None:
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != SCRYPT_SCHEME:
        return None
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, expected = _unb64(parts[4]), _unb64(parts[5])
    except (ValueError, binascii.Error, UnicodeError):
        return None
    if not (n > 1 and n & (n - 1) == 0 and 0 < r <= _MAX_R and 0 < p <= _MAX_P
            and n * r * p <= _MAX_SCRYPT_WORK and 128 * n * r <= _MAX_SCRYPT_MEMORY):
        return None
    if not salt or not 16 <= len(expected) <= 64:
        return None
    return n, r, p, salt, expected


def _verify_scrypt(pw: str, encoded: str) -> bool:
    parsed = _parse_scrypt(encoded)
    if parsed is None:
        return False
    n, r, p, salt, expected = parsed
    try:
        actual = _scrypt(pw, salt, n, r, p, len(expected))
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(actual, expected)


def verify_password(pw: str, encoded: str) -> bool:
    """Whether ``pw`` matches ``encoded`` (Argon2id, or a hash from before it: scrypt);
    a malformed or out-of-bounds ``encoded`` is simply False."""
    if not isinstance(pw, str) or not isinstance(encoded, str):
        return False
    try:
        pw.encode("utf-8")
    except UnicodeError:  # a lone surrogate: no password anyone could have set
        return False
    if encoded.startswith("$argon2id$"):
        return _verify_argon2(pw, encoded)
    return _verify_scrypt(pw, encoded)


# A valid hash of a password nobody knows, at today's parameters: checking against it
# spends the same time as checking a real (current) hash, so an unknown user cannot
# be told from a wrong password.
DUMMY_HASH = hash_password(secrets.token_urlsafe(24))


def new_secret(prefix: str) -> str:
    """A new high-entropy secret: ``prefix`` + 256 random bits, URL-safe."""
    return prefix + secrets.token_urlsafe(32)


def secret_digest(secret: str) -> str:
    """What is stored for a token, key or session secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()
