"""The connect dialog against a real hub: a token, a name and password (which buys a
token), and the failures, each shown in the dialog with its code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from console_app.client.credentials import TokenVault
from console_app.shell.connect_dialog import ConnectDialog
from console_app.shell.connecting import Connected, normalise_url
from console_app.shell.hubs import HubEntry, RememberedHubs
from console_app.tasks import TaskManager
from shared.errors import BadRequest
from tests.console.conftest import OWNER_PASSWORD, ConsoleHub
from tests.hub.conftest import free_port

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def hubs(tmp_path: Path) -> RememberedHubs:
    return RememberedHubs()


@pytest.fixture
def vault(tmp_path: Path) -> TokenVault:
    return TokenVault(use_keyring=False, folder=tmp_path / "tokens")


def _dialog(qtbot: QtBot, tasks: TaskManager, hubs: RememberedHubs,
            vault: TokenVault) -> ConnectDialog:
    dialog = ConnectDialog(tasks, hubs, vault)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _connect(qtbot: QtBot, dialog: ConnectDialog) -> Connected:
    with qtbot.waitSignal(dialog.sig_connected, timeout=20000) as got:
        dialog.connect_button.click()
    connected: Connected = got.args[0]
    connected.conn.close()
    return connected


def test_a_token_connects_and_is_kept(qtbot: QtBot, tasks: TaskManager, hubs: RememberedHubs,
                                      vault: TokenVault, console_hub: ConsoleHub,
                                      tmp_path: Path) -> None:
    dialog = _dialog(qtbot, tasks, hubs, vault)
    dialog.url_box.setEditText(console_hub.url + "/")
    dialog.token_edit.setText(console_hub.owner_token)
    connected = _connect(qtbot, dialog)
    info = connected.info
    assert info.user is not None and info.user.name == "owner"
    assert info.health is not None and info.health.node == "test-node" and info.health.ok is True
    assert info.store is not None and info.store.store == "files"
    assert not dialog.isVisible() and dialog.connected is connected
    assert vault.load(console_hub.url) == console_hub.owner_token
    assert hubs.book.entries[0] == HubEntry(console_hub.url, "owner", "token")
    assert RememberedHubs().book.entries == hubs.book.entries
    assert console_hub.url in (tmp_path / "WebJobs" / "Console.ini").read_text()


def test_name_and_password_buy_a_token_that_the_next_start_uses(
        qtbot: QtBot, tasks: TaskManager, hubs: RememberedHubs, vault: TokenVault,
        console_hub: ConsoleHub) -> None:
    dialog = _dialog(qtbot, tasks, hubs, vault)
    dialog.url_box.setEditText(console_hub.url)
    dialog.password_mode.setChecked(True)
    dialog.name_edit.setText("owner")
    dialog.password_edit.setText(OWNER_PASSWORD)
    connected = _connect(qtbot, dialog)
    assert connected.token.startswith("wjt_") and connected.token != console_hub.owner_token
    assert vault.load(console_hub.url) == connected.token
    assert hubs.book.find(console_hub.url) == HubEntry(console_hub.url, "owner", "password")
    assert dialog.password_edit.text() == ""  # the password is never kept, not even here

    again = _dialog(qtbot, tasks, hubs, vault)  # the next start: the kept token, no password
    qtbot.waitUntil(lambda: again.token_edit.text() == connected.token)
    assert again.url_box.currentText() == console_hub.url and again.token_mode.isChecked()
    assert _connect(qtbot, again).info.user_name == "owner"


def test_not_keeping_the_token_forgets_an_old_one(qtbot: QtBot, tasks: TaskManager,
                                                  hubs: RememberedHubs, vault: TokenVault,
                                                  console_hub: ConsoleHub) -> None:
    vault.store(console_hub.url, "wjt_old")
    dialog = _dialog(qtbot, tasks, hubs, vault)
    dialog.url_box.setEditText(console_hub.url)
    dialog.token_edit.setText(console_hub.owner_token)
    dialog.remember.setChecked(False)
    _connect(qtbot, dialog)
    assert vault.load(console_hub.url) is None


@pytest.mark.parametrize("case", ["wrong password", "not an owner", "no hub", "bad token"])
def test_failures_show_their_code_and_keep_the_dialog_open(
        qtbot: QtBot, tasks: TaskManager, hubs: RememberedHubs, vault: TokenVault,
        console_hub: ConsoleHub, case: str) -> None:
    dialog = _dialog(qtbot, tasks, hubs, vault)
    url, code = console_hub.url, ""
    if case == "wrong password":
        dialog.password_mode.setChecked(True)
        dialog.name_edit.setText("owner")
        dialog.password_edit.setText("not-the-password")
        code = "AUTH-SESSION-001"
    elif case == "not an owner":
        dialog.token_edit.setText(console_hub.user_token)
        code = "SYS-403"
    elif case == "bad token":
        dialog.token_edit.setText("wjt_nonsense")
        code = "AUTH-SESSION-001"
    else:
        url, code = f"http://127.0.0.1:{free_port()}", "CONSOLE-001"
        dialog.token_edit.setText(console_hub.owner_token)
    dialog.url_box.setEditText(url)
    dialog.connect_button.click()
    qtbot.waitUntil(lambda: dialog.message.level == "error", timeout=20000)
    assert dialog.message.text.startswith(code), dialog.message.text
    assert dialog.isVisible() and dialog.connect_button.isEnabled() and dialog.connected is None
    assert hubs.book.entries == [] and vault.load(url) is None


def test_addresses_are_normalised() -> None:
    assert normalise_url(" 127.0.0.1:8700/ ") == "http://127.0.0.1:8700"
    assert normalise_url("https://hub.example/") == "https://hub.example"
    with pytest.raises(BadRequest):
        normalise_url("")


@pytest.mark.parametrize(("case", "says"), [
    ("empty token", "Enter an API token"), ("bad address", "Not a hub address: ftp://x"),
    ("empty name", "Enter your user name"), ("empty password", "Enter your password")])
def test_what_is_missing_is_said_before_any_call_without_a_code(
        qtbot: QtBot, tasks: TaskManager, hubs: RememberedHubs, vault: TokenVault,
        console_hub: ConsoleHub, case: str, says: str) -> None:
    dialog = _dialog(qtbot, tasks, hubs, vault)
    dialog.url_box.setEditText("ftp://x" if case == "bad address" else console_hub.url)
    dialog.token_edit.setText("" if case == "empty token" else console_hub.owner_token)
    if case in ("empty name", "empty password"):
        dialog.password_mode.setChecked(True)
        dialog.name_edit.setText("owner" if case == "empty password" else " ")
    dialog.connect_button.click()  # answered at once: no task, no hub
    field = {"empty token": dialog.token_edit, "bad address": dialog.url_box,
             "empty name": dialog.name_edit, "empty password": dialog.password_edit}[case]
    assert dialog.message.level == "error" and dialog.message.text.startswith(says)
    assert not re.match(r"[A-Z]+(-[A-Z]+)*-\d+", dialog.message.text)
    assert dialog.focusWidget() is field and dialog.connect_button.isEnabled()
    assert not tasks.busy and dialog.connected is None


def test_a_long_error_wraps_and_the_dialog_grows_to_show_all_of_it(
        qtbot: QtBot, tasks: TaskManager, hubs: RememberedHubs, vault: TokenVault) -> None:
    dialog = _dialog(qtbot, tasks, hubs, vault)
    qtbot.waitExposed(dialog)
    before = dialog.height()
    dialog.show_error("CONSOLE-001: " + " ".join(["the hub did not answer in time"] * 30))
    label = dialog.message.findChild(QLabel)
    assert label is not None and label.wordWrap()
    qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()))
    bottom = label.mapTo(dialog, label.rect().bottomRight())
    assert dialog.rect().contains(bottom) and dialog.height() > before
    assert dialog.buttons.geometry().top() >= dialog.message.geometry().bottom()
