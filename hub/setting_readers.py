"""How a setting's text becomes its value, and where the text comes from.

A setting ``NAME`` is read from the environment, or from the file ``NAME_FILE`` names
(container secrets: the value never appears in the process environment). Each reader
here takes a :class:`Source` and the setting's name, and raises ``BadRequest`` naming the
setting when the text makes no sense, so a wrong setting stops the hub at start with a
clear message instead of a late surprise.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from shared.errors import BadRequest

Reader = Callable[["Source", str], Any]

# A secret file holds one value; anything much larger is a wrong path, not a secret.
_MAX_FILE_BYTES = 64 * 1024


class Source:
    """The environment as settings see it: ``NAME``, else the contents of ``NAME_FILE``."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self.home = Path(".")      # filled in once WEBHUB_HOME is read
        self.values: dict[str, Any] = {}  # the values read so far, by field

    def given(self, name: str) -> bool:
        return bool(self.raw(name))

    def raw(self, name: str) -> str:
        """The setting's text, stripped; '' when neither ``NAME`` nor ``NAME_FILE`` is set."""
        direct = self._env.get(name, "").strip()
        path = self._env.get(f"{name}_FILE", "").strip()
        if direct and path:
            raise BadRequest(f"{name} and {name}_FILE are both set: give only one")
        if not path:
            return direct
        return _file_text(name, Path(path))


def _file_text(name: str, path: Path) -> str:
    """The text of the secret file, stripped of blanks and a leading BOM. An empty one is
    refused: falling back to the default (a node's own SQLite, a random token) would
    hide the mistake."""
    data = _read_regular_file(name, path)
    if len(data) > _MAX_FILE_BYTES:
        raise BadRequest(f"{name}_FILE: {path} is larger than a setting can be")
    try:
        value = data.decode("utf-8").removeprefix("\ufeff").strip()
    except UnicodeDecodeError:
        raise BadRequest(f"{name}_FILE: {path} is not UTF-8 text") from None
    if not value:
        raise BadRequest(f"{name}_FILE: {path} is empty")
    return value


def _read_regular_file(name: str, path: Path) -> bytes:
    """At most one byte over the limit of ``path``, which must be a regular file (after
    symlinks): a FIFO would block the start, a device never ends. Non-blocking open
    and a second look at the opened file, in case the path changed in between."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise BadRequest(f"{name}_FILE: {path} is not a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise BadRequest(f"{name}_FILE: {path} is not a regular file")
            return fh.read(_MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise BadRequest(f"{name}_FILE: cannot read {path}: {exc.strerror}") from None


def text(default: str = "") -> Reader:
    return lambda src, name: src.raw(name) or default


def optional_text() -> Reader:
    return lambda src, name: src.raw(name) or None


def url(default: Callable[[Source], str] | None = None, *, trim_slash: bool = False) -> Reader:
    def read(src: Source, name: str) -> str | None:
        given = src.raw(name).rstrip("/") if trim_slash else src.raw(name)
        if given:
            return given
        return default(src) if default else None
    return read


def in_home(filename: str) -> Callable[[Source], str]:
    """A SQLite URL of a file in WEBHUB_HOME (the embedded default of a database)."""
    return lambda src: f"sqlite:///{src.home / filename}"


def path(default: str) -> Reader:
    return lambda src, name: Path(src.raw(name) or default).resolve()


def whole(default: int) -> Reader:
    """A positive whole number."""
    def read(src: Source, name: str) -> int:
        raw = src.raw(name)
        if not raw:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise BadRequest(f"{name} must be a whole number, not '{raw}'") from None
        if value <= 0:
            raise BadRequest(f"{name} must be positive, not {value}")
        return value
    return read


def count(default: int | Callable[[Source], int]) -> Reader:
    """Like :func:`whole` but 0 is allowed (it switches the thing off)."""
    def read(src: Source, name: str) -> int:
        if src.raw(name) == "0":
            return 0
        fallback = default(src) if callable(default) else default
        return int(whole(fallback)(src, name))
    return read


def hours(default: float) -> Reader:
    def read(src: Source, name: str) -> float:
        raw = src.raw(name)
        try:
            value = float(raw) if raw else default
        except ValueError:
            raise BadRequest(f"{name} must be a number of hours, not '{raw}'") from None
        if not value > 0:
            raise BadRequest(f"{name} must be positive, not {raw}")
        return value
    return read


def choice(choices: tuple[str, ...], default: str,
           aliases: Mapping[str, str] | None = None) -> Reader:
    def read(src: Source, name: str) -> str:
        raw = src.raw(name).lower()
        raw = (aliases or {}).get(raw, raw)
        if not raw:
            return default
        if raw not in choices:
            raise BadRequest(f"{name} must be one of {', '.join(choices)}, not '{raw}'")
        return raw
    return read


def flag() -> Reader:
    """On when the setting is ``1``."""
    return lambda src, name: src.raw(name) == "1"


def names(default: str) -> Reader:
    """A comma-separated list, empty items left out."""
    return lambda src, name: tuple(
        item.strip() for item in (src.raw(name) or default).split(",") if item.strip())


def zone(default: str) -> Reader:
    def read(src: Source, name: str) -> str:
        import zoneinfo

        value = src.raw(name) or default
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise BadRequest(f"{name}: '{value}' is not a known time zone") from None
        return value
    return read


def kept(filename: str) -> Reader:
    """The setting if given, else a random value generated once into WEBHUB_HOME (0600)."""
    def read(src: Source, name: str) -> str:
        given = src.raw(name)
        if given:
            return given
        kept_at = src.home / filename
        if kept_at.exists():
            return kept_at.read_text().strip()
        value = secrets.token_urlsafe(32)
        fd = os.open(kept_at, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(value + "\n")
        return value
    return read
