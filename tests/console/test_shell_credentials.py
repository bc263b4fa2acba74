"""Where tokens are kept: a real keyring backend when there is one, else a 0600 file."""

from __future__ import annotations

import logging
import stat
from pathlib import Path
from typing import ClassVar

import pytest
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null
from keyring.errors import KeyringError, PasswordDeleteError

from console_app.app import stored_token
from console_app.client.credentials import SERVICE, TokenVault, usable_keyring


class MemoryKeyring(KeyringBackend):
    priority = -1  # type: ignore[assignment]  # never chosen by keyring's own detection

    def __init__(self, broken: bool = False) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}
        self.broken = broken

    def get_password(self, service: str, username: str) -> str | None:
        if self.broken:
            raise KeyringError("locked")
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        if self.broken:
            raise KeyringError("locked")
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError("not there")


def test_fail_null_and_empty_backends_are_not_keyrings() -> None:
    assert usable_keyring(fail.Keyring()) is None
    assert usable_keyring(null.Keyring()) is None
    class Empty(chainer.ChainerBackend):
        backends: ClassVar[list[KeyringBackend]] = []  # type: ignore[misc]

    assert usable_keyring(Empty()) is None
    memory = MemoryKeyring()
    assert usable_keyring(memory) is memory


def test_without_a_keyring_tokens_go_to_a_file_only_the_user_reads(tmp_path: Path) -> None:
    vault = TokenVault(fail.Keyring(), folder=tmp_path / "cfg")
    assert "readable only by you" in vault.where and vault.load("http://a") is None
    vault.store("http://a/", "wjt_one")
    vault.store("http://b", "wjt_two")
    assert vault.load("http://a") == "wjt_one" and vault.load("http://b/") == "wjt_two"
    assert stat.S_IMODE(vault.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(vault.path.parent.stat().st_mode) == 0o700
    vault.forget("http://a")
    again = TokenVault(fail.Keyring(), folder=tmp_path / "cfg")  # read back from disk
    assert again.load("http://a") is None and again.load("http://b") == "wjt_two"
    assert [p.name for p in vault.path.parent.iterdir()] == ["tokens.json"]  # no temp left


def test_a_damaged_token_file_loses_tokens_not_the_app(tmp_path: Path) -> None:
    vault = TokenVault(use_keyring=False, folder=tmp_path)
    vault.path.write_text("{not json")
    assert vault.load("http://a") is None
    vault.store("http://a", "wjt_fresh")
    assert vault.load("http://a") == "wjt_fresh"


def test_a_real_keyring_keeps_tokens_and_the_file_stays_empty(tmp_path: Path) -> None:
    memory = MemoryKeyring()
    vault = TokenVault(memory, folder=tmp_path)
    assert "OS keyring" in vault.where
    vault.store("http://hub:8700/", "wjt_kept")
    assert memory.items == {(SERVICE, "http://hub:8700"): "wjt_kept"}
    assert vault.load("http://hub:8700") == "wjt_kept" and not vault.path.exists()
    vault.forget("http://hub:8700")
    vault.forget("http://never-stored")  # forgetting nothing is fine
    assert memory.items == {}


def test_a_keyring_that_refuses_falls_back_to_the_file(tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="console_app.client.credentials")
    vault = TokenVault(MemoryKeyring(broken=True), folder=tmp_path)
    vault.store("http://hub", "wjt_file")
    assert vault.load("http://hub") == "wjt_file"
    assert stat.S_IMODE(vault.path.stat().st_mode) == 0o600
    assert "keyring write failed" in caplog.text


def test_a_working_keyring_without_the_token_still_reads_the_file(tmp_path: Path) -> None:
    locked = MemoryKeyring(broken=True)
    TokenVault(locked, folder=tmp_path).store("http://hub", "wjt_file")  # went to the file
    memory = MemoryKeyring()  # unlocked later, but holding nothing for this hub
    assert TokenVault(memory, folder=tmp_path).load("http://hub") == "wjt_file"
    memory.items[(SERVICE, "http://hub")] = "wjt_keyring"
    assert TokenVault(memory, folder=tmp_path).load("http://hub") == "wjt_keyring"


def test_the_hub_option_finds_the_token_under_the_normalised_address(tmp_path: Path) -> None:
    vault = TokenVault(use_keyring=False, folder=tmp_path)
    vault.store("http://hub:8700", "wjt_dialog")  # as the connect dialog keeps it
    assert stored_token(vault, "hub:8700/") == "wjt_dialog"
    assert stored_token(vault, "") == "" and stored_token(vault, "ftp://x") == ""
