"""Where the jobs are kept, and their saved versions."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ImportReport", "ImportRequest", "StoreInfo", "VersionDetail", "VersionInfo",
           "VersionList"]


@dataclass(frozen=True)
class StoreInfo:
    """``GET /store``."""

    store: str  # files | db
    database: str | None  # the hub database's kind (sqlite, postgresql, ...) for db
    jobs: int


@dataclass(frozen=True)
class ImportRequest:
    """``POST /store/import-files``'s body: whether a job the database has with other
    code is replaced."""

    overwrite: bool = False


@dataclass(frozen=True)
class ImportReport:
    """The jobs of the folder by what happened to each (see hub.store.importer)."""

    copied: tuple[str, ...]
    skipped: tuple[str, ...]
    replaced: tuple[str, ...]


@dataclass(frozen=True)
class VersionInfo:
    version: int
    saved: float  # epoch seconds
    savedBy: str | None
    size: int  # bytes of code
    current: bool


@dataclass(frozen=True)
class VersionList:
    """``GET /{name}/versions``: newest first."""

    versions: tuple[VersionInfo, ...]


@dataclass(frozen=True)
class VersionDetail(VersionInfo):
    """``GET /{name}/versions/{n}``: the version and its code."""

    name: str
    code: str
