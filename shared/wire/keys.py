"""A job's API keys (``Access: key``): issued, listed and revoked by owners."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ApiKeyInfo", "IssuedKey", "KeyLabel", "KeyList", "KeyRevoked"]


@dataclass(frozen=True)
class KeyLabel:
    """``POST /{name}/keys``'s body (may be empty)."""

    label: str = ""  # at most 100 characters


@dataclass(frozen=True)
class ApiKeyInfo:
    """A key as listed: never its secret. Times are Unix seconds."""

    id: int
    job_name: str
    label: str
    created: float
    last_used: float | None
    revoked: bool


@dataclass(frozen=True)
class IssuedKey(ApiKeyInfo):
    """A new key: what the listing shows, and its secret (shown once)."""

    success: bool
    key: str


@dataclass(frozen=True)
class KeyList:
    keys: tuple[ApiKeyInfo, ...]


@dataclass(frozen=True)
class KeyRevoked:
    success: bool
