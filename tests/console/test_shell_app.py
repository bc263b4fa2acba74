"""ConsoleApp, the front door, against a real hub: the dialog it opens, what a
sign-in leaves on screen, and what it leaves on the hub when the console quits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from console_app.app import ConsoleApp
from console_app.client.credentials import TokenVault
from console_app.shell.hubs import RememberedHubs
from tests.console.conftest import OWNER_PASSWORD, ConsoleHub

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def console(qtbot: QtBot, qapp: QApplication, tmp_path: Path) -> Iterator[ConsoleApp]:
    app = ConsoleApp(qapp, TokenVault(use_keyring=False, folder=tmp_path / "tokens"),
                     RememberedHubs())
    yield app
    app.connected = None  # revoking at quit has its own test
    app.shutdown()
    if app.window is not None:
        app.window.deleteLater()


def _sign_in(qtbot: QtBot, console: ConsoleApp, hub: ConsoleHub, by_password: bool,
             keep: bool) -> list[str]:
    """Through the dialog as a user would; returns what the dialog reported."""
    dialog = console.ask(hub.url)
    qtbot.addWidget(dialog)
    seen: list[str] = []
    dialog.rejected.connect(lambda: seen.append("rejected"))
    dialog.sig_cancelled.connect(lambda: seen.append("cancelled"))
    if by_password:
        dialog.password_mode.setChecked(True)
        dialog.name_edit.setText("owner")
        dialog.password_edit.setText(OWNER_PASSWORD)
    else:
        dialog.token_edit.setText(hub.owner_token)
    dialog.remember.setChecked(keep)
    dialog.connect_button.click()
    qtbot.waitUntil(lambda: console.window is not None and console.window.isVisible(),
                    timeout=20000)
    return seen


def _signed_in(url: str, token: str) -> bool:
    answer = httpx.get(f"{url}/api/auth/me", headers={"Authorization": f"Bearer {token}"})
    return answer.status_code == 200 and answer.json().get("kind") != "anonymous"


def test_with_an_address_the_cursor_starts_in_the_token_field(
        qtbot: QtBot, console: ConsoleApp, console_hub: ConsoleHub) -> None:
    dialog = console.ask(console_hub.url)
    qtbot.addWidget(dialog)
    assert dialog.focusWidget() is dialog.token_edit


@pytest.mark.parametrize(("by_password", "keep"), [(False, True), (False, False),
                                                   (True, True), (True, False)])
def test_a_sign_in_opens_the_window_and_never_counts_as_cancelled(
        qtbot: QtBot, console: ConsoleApp, console_hub: ConsoleHub,
        by_password: bool, keep: bool) -> None:
    seen = _sign_in(qtbot, console, console_hub, by_password, keep)
    assert seen == [] and console.dialog is not None and not console.dialog.isVisible()
    assert console.window is not None and console.window.windowTitle() == console_hub.url
    assert (console.vault.load(console_hub.url) is not None) is keep


def test_a_password_sign_in_not_kept_leaves_no_token_on_the_hub(
        qtbot: QtBot, console: ConsoleApp, console_hub: ConsoleHub) -> None:
    _sign_in(qtbot, console, console_hub, by_password=True, keep=False)
    assert console.connected is not None
    token = console.connected.token
    assert _signed_in(console_hub.url, token)
    console.shutdown()
    assert not _signed_in(console_hub.url, token)


def test_a_kept_token_outlives_the_console(qtbot: QtBot, console: ConsoleApp,
                                           console_hub: ConsoleHub) -> None:
    _sign_in(qtbot, console, console_hub, by_password=True, keep=True)
    assert console.connected is not None
    token = console.connected.token
    console.shutdown()
    assert _signed_in(console_hub.url, token) and console.vault.load(console_hub.url) == token
