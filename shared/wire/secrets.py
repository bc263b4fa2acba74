"""The Secrets page's bodies: names, declaring jobs and changes, never a value back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["SecretChange", "SecretChanges", "SecretDeleted", "SecretInfo", "SecretList",
           "SecretSet", "SecretValue"]


@dataclass(frozen=True)
class SecretInfo:
    """A stored secret, a declared one, or both."""

    name: str
    set: bool
    declaredBy: tuple[str, ...]  # the jobs whose header names it
    updatedAt: str | None  # ISO-8601, whole seconds; null while not set
    updatedBy: str | None


@dataclass(frozen=True)
class SecretList:
    """``GET /secrets``: sorted by name."""

    secrets: tuple[SecretInfo, ...]


@dataclass(frozen=True)
class SecretChange:
    action: Literal["set", "delete"]
    at: str  # ISO-8601
    by: str | None


@dataclass(frozen=True)
class SecretChanges:
    """``GET /secrets/{name}/changes``: newest first, kept after a delete."""

    name: str
    changes: tuple[SecretChange, ...]


@dataclass(frozen=True)
class SecretValue:
    """``PUT /secrets/{name}``'s body."""

    value: str


@dataclass(frozen=True)
class SecretSet:
    success: bool
    name: str
    created: bool  # false: an existing value was replaced


@dataclass(frozen=True)
class SecretDeleted:
    success: bool
    name: str
