"""Password hashing (scrypt) and the random secrets behind tokens, keys and sessions.

Passwords are low-entropy, so they get a slow, salted, memory-hard hash:
``scrypt$<n>$<r>$<p>$<salt b64>$<hash b64>``. Tokens, API keys and session secrets
are 256 random bits, so a fast SHA-256 digest is enough to store them safely.
Nothing here logs or keeps a plaintext.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
HASH_BYTES = 32
SCHEME = "scrypt"

# Bounds on the parameters a stored hash may ask for, so a tampered row can make
# verify_password neither very slow nor eat memory: it just fails.
_MAX_N = 2**20
_MAX_R = 32
_MAX_P = 16
_MAX_MEM = 1024 * 1024 * 1024


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    maxmem = min(_MAX_MEM, 130 * n * r * p + 1024 * 1024)
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p,
                          maxmem=maxmem, dklen=dklen)


def hash_password(pw: str) -> str:
    """``scrypt$16384$8$1$<salt>$<hash>`` for ``pw``, with a fresh random salt."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(pw, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, HASH_BYTES)
    return f"{SCHEME}${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def _parse(encoded: str) -> tuple[int, int, int, bytes, bytes] | None:
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        return None
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, expected = _unb64(parts[4]), _unb64(parts[5])
    except (ValueError, binascii.Error, UnicodeError):
        return None
    if not (1 < n <= _MAX_N and n & (n - 1) == 0 and 0 < r <= _MAX_R and 0 < p <= _MAX_P):
        return None
    if not salt or not 16 <= len(expected) <= 64:
        return None
    return n, r, p, salt, expected


def verify_password(pw: str, encoded: str) -> bool:
    """Whether ``pw`` matches ``encoded``; a malformed ``encoded`` is simply False."""
    if not isinstance(pw, str) or not isinstance(encoded, str):
        return False
    parsed = _parse(encoded)
    if parsed is None:
        return False
    n, r, p, salt, expected = parsed
    try:
        actual = _scrypt(pw, salt, n, r, p, len(expected))
    except (ValueError, MemoryError, UnicodeError):
        return False
    return hmac.compare_digest(actual, expected)


# A valid hash of a password nobody knows: checking against it spends the same
# time as a real check, so an unknown user cannot be told from a wrong password.
DUMMY_HASH = hash_password(secrets.token_urlsafe(24))


def new_secret(prefix: str) -> str:
    """A new high-entropy secret: ``prefix`` + 256 random bits, URL-safe."""
    return prefix + secrets.token_urlsafe(32)


def secret_digest(secret: str) -> str:
    """What is stored for a token, key or session secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()
