"""Where the console keeps each hub's API token between starts.

In the OS keyring when a real one is there (Secret Service, KWallet, macOS
Keychain, Windows Credential Manager); otherwise in a JSON file that only the
user can read (0600, in a 0700 folder under the user config directory). Plain
Python, no Qt: the connect dialog calls it, tests call it directly."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

import keyring
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null
from keyring.errors import KeyringError

log = logging.getLogger(__name__)

SERVICE = "WebJobs console"
APP_DIR = "webjobs-console"
TOKENS_FILE = "tokens.json"


def user_config_dir() -> Path:
    """The platform's per-user configuration folder (what platformdirs would say)."""
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def usable_keyring(backend: KeyringBackend | None = None) -> KeyringBackend | None:
    """``backend`` (default: keyring's choice) if it really stores secrets.

    keyring answers with its ``fail`` backend when it found none, and ``null`` when
    the user turned it off; a chainer with nothing inside is just as empty."""
    chosen = backend if backend is not None else keyring.get_keyring()
    if isinstance(chosen, fail.Keyring | null.Keyring):
        return None
    if isinstance(chosen, chainer.ChainerBackend) and not chosen.backends:
        return None
    return chosen


class TokenVault:
    """Tokens by hub URL. ``where`` says which store is in use, for the dialog."""

    def __init__(self, backend: KeyringBackend | None = None,
                 folder: Path | None = None, use_keyring: bool = True) -> None:
        self._keyring = usable_keyring(backend) if use_keyring else None
        self._file = (folder or user_config_dir() / APP_DIR) / TOKENS_FILE

    @property
    def where(self) -> str:
        if self._keyring is not None:
            return f"the OS keyring ({type(self._keyring).__name__})"
        return f"{self._file} (readable only by you)"

    @property
    def path(self) -> Path:
        return self._file

    def load(self, url: str) -> str | None:
        """The keyring's token, else the file's: a token the keyring could not take
        when it was stored (or kept before the keyring existed) is in the file."""
        if self._keyring is not None:
            try:
                token = self._keyring.get_password(SERVICE, _key(url))
            except KeyringError as err:  # a locked or vanished keyring: try the file
                log.info("keyring read failed (%s); using %s", err, self._file)
            else:
                if token is not None:
                    return token
        return self._read_file().get(_key(url))

    def store(self, url: str, token: str) -> None:
        if self._keyring is not None:
            try:
                self._keyring.set_password(SERVICE, _key(url), token)
            except KeyringError as err:
                log.info("keyring write failed (%s); using %s", err, self._file)
            else:
                self._drop_from_file(url)  # one place per token: no stale copy left behind
                return
        tokens = self._read_file()
        tokens[_key(url)] = token
        self._write_file(tokens)

    def forget(self, url: str) -> None:
        if self._keyring is not None:
            with contextlib.suppress(KeyringError):  # nothing stored there is fine
                self._keyring.delete_password(SERVICE, _key(url))
        self._drop_from_file(url)

    # -- the file -------------------------------------------------------------------

    def _drop_from_file(self, url: str) -> None:
        tokens = self._read_file()
        if tokens.pop(_key(url), None) is not None:
            self._write_file(tokens)

    def _read_file(self) -> dict[str, str]:
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as err:  # a damaged file loses tokens, not the app
            log.info("ignoring unreadable token file %s: %s", self._file, err)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, str)}

    def _write_file(self, tokens: dict[str, str]) -> None:
        folder = self._file.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        # mkstemp creates the file 0600 from its first byte; renamed over the old one
        # it is never briefly readable by others, nor half written.
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(tokens, out, indent=1, sort_keys=True)
            os.replace(tmp, self._file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _key(url: str) -> str:
    return url.strip().rstrip("/")
