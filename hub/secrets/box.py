"""Encryption at rest for secret values: AES-256-GCM from ``cryptography``.

The key is derived with HKDF-SHA256 from ``WEBHUB_SECRET`` (so every node of a
cluster, which shares that secret, reads what another wrote). Each value gets a
fresh 96-bit nonce, and the secret's name is the associated data: a ciphertext
copied onto another name's row does not decrypt. Stored as text,
``v1:<base64 of nonce + ciphertext + tag>``, so any database keeps it as it is.
"""

from __future__ import annotations

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from shared.errors import InternalError

__all__ = ["SecretBox"]

_PREFIX = "v1:"
_NONCE = 12
_INFO = b"webjobs secrets at rest v1"


class SecretBox:
    def __init__(self, hub_secret: str) -> None:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                   info=_INFO).derive(hub_secret.encode("utf-8"))
        self._aead = AESGCM(key)

    def seal(self, name: str, value: str) -> str:
        nonce = os.urandom(_NONCE)
        sealed = self._aead.encrypt(nonce, value.encode("utf-8"), name.encode("utf-8"))
        return _PREFIX + base64.b64encode(nonce + sealed).decode("ascii")

    def open(self, name: str, stored: str) -> str:
        """The value, or an InternalError that names the secret (never its bytes) when
        the row was written with another ``WEBHUB_SECRET`` or altered."""
        try:
            if not stored.startswith(_PREFIX):
                raise ValueError("unknown format")
            raw = base64.b64decode(stored[len(_PREFIX):], validate=True)
            plain = self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], name.encode("utf-8"))
            return plain.decode("utf-8")
        except (ValueError, InvalidTag, binascii.Error, UnicodeDecodeError):
            raise InternalError(f"Secret '{name}' cannot be decrypted: it was stored under "
                                "another WEBHUB_SECRET or altered; set it again") from None
