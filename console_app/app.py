"""``webjobs-console`` / ``python -m console_app``: connect, then the main window.

    webjobs-console                       # the connect dialog
    webjobs-console --hub URL [--token T] # straight in (a bad token opens the dialog)

:class:`ConsoleApp` owns what outlives one hub: the TaskManager, the remembered
hubs, the token vault, the theme. *Switch hub* reopens the dialog; the old window
closes only once the new hub is connected."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Sequence

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from console_app.client.credentials import TokenVault
from console_app.client.errors import describe_error
from console_app.client.gui_guard import blocking_on_purpose
from console_app.session import HubSession, Navigator
from console_app.shell.connect_dialog import ConnectDialog
from console_app.shell.connecting import (
    Connected,
    Credentials,
    normalise_url,
    open_hub,
    revoke_token,
)
from console_app.shell.hubs import APPLICATION, ORGANISATION, HubEntry, RememberedHubs
from console_app.shell.main_window import MainWindow
from console_app.shell.theme import Theme
from console_app.tasks import TaskManager
from shared.errors import BadRequest

log = logging.getLogger(__name__)


def make_application(argv: Sequence[str] = ()) -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([*argv])
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("WebJobs console")
    return app


def session_for(connected: Connected, tasks: TaskManager) -> HubSession:
    return HubSession(connected.conn, tasks, Navigator(), connected.info)


class ConsoleApp(QObject):
    def __init__(self, app: QApplication, vault: TokenVault | None = None,
                 hubs: RememberedHubs | None = None) -> None:
        super().__init__()
        self.app = app
        self.theme = Theme(app)
        self.tasks = TaskManager(parent=self)
        self.vault = vault or TokenVault()
        self.hubs = hubs or RememberedHubs()
        self.window: MainWindow | None = None
        self.dialog: ConnectDialog | None = None
        self.connected: Connected | None = None  # what the window in front is signed in with

    def start(self, url: str = "", token: str = "") -> None:
        if url and token:
            self.tasks.run(lambda: open_hub(url, Credentials(token=token)), self.open_window,
                           lambda err: self.ask(url, describe_error(err)))
        else:
            self.ask(url)

    def ask(self, url: str = "", error: str = "") -> ConnectDialog:
        """The connect dialog (non-modal to the app: the event loop keeps running)."""
        dialog = ConnectDialog(self.tasks, self.hubs, self.vault, self.window)
        if url:
            dialog.use_address(url)
        if error:
            dialog.show_error(error)
        dialog.sig_connected.connect(self.open_window)
        dialog.sig_cancelled.connect(self._dialog_cancelled)
        self.dialog = dialog
        dialog.show()
        if url:  # the address is known: the credentials are what is left to type
            dialog.focus_credentials()
        return dialog

    def open_window(self, connected: Connected) -> MainWindow:
        """The main window for ``connected``, shown before anything else closes: with
        no window on screen, closing the dialog would leave the app nothing to run."""
        if self.hubs.book.find(connected.conn.url) is None:  # came from --hub/--token
            self.hubs.remember(HubEntry(connected.conn.url, connected.info.user_name, "token"))
        old, self.window = self.window, MainWindow(session_for(connected, self.tasks))
        old_connected, self.connected = self.connected, connected
        self.window.sig_switch_hub.connect(lambda: self.ask())
        self.window.show()  # the dialog that signed in hides itself once this returns
        if old is not None:
            old.close()
            old.session.conn.close()
            old.deleteLater()
        if old_connected is not None and old_connected.revoke_at_close:
            url, token = old_connected.conn.url, old_connected.token
            self.tasks.run(lambda: revoke_token(url, token), lambda _done: None,
                           lambda err: log.info("could not revoke the old token: %s", err))
        return self.window

    def _dialog_cancelled(self) -> None:
        if self.window is None:  # cancelled before any hub: nothing left to show
            self.app.quit()

    def shutdown(self) -> None:
        if self.window is not None:
            self.window.close()
            self.window.session.conn.close()
        self.tasks.shutdown()
        self.revoke_unkept()

    def revoke_unkept(self) -> None:
        """At quit, a bounded blocking call: the token minted for a password sign-in
        that was not kept is revoked, so no sign-in leaves a spare token on the hub."""
        connected, self.connected = self.connected, None
        if connected is None or not connected.revoke_at_close:
            return
        try:
            with blocking_on_purpose():
                revoke_token(connected.conn.url, connected.token)
        except Exception as err:  # the hub is gone or refuses: nothing more to do at quit
            log.warning("could not revoke this sign-in's token on %s: %s",
                        connected.conn.url, describe_error(err))


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="webjobs-console",
                                     description="The WebJobs Owner console")
    parser.add_argument("--hub", default="", help="hub address, e.g. http://127.0.0.1:8700")
    parser.add_argument("--token", default="", help="an owner's API token (else the dialog)")
    return parser.parse_args(list(argv))


def stored_token(vault: TokenVault, hub: str) -> str:
    """The token kept for ``hub`` ('' if none): looked up under the address as the
    connect dialog stores it, so ``--hub host:8700`` finds ``http://host:8700``'s."""
    if not hub:
        return ""
    try:
        url = normalise_url(hub)
    except BadRequest:
        return ""  # not an address; the dialog will say so
    return vault.load(url) or ""


def quit_on_interrupt(app: QApplication) -> QTimer:
    """Ctrl+C in the terminal (or ``make run`` stopping) quits cleanly. Python runs
    signal handlers only between bytecodes, never inside Qt's event loop, so a timer
    hands it control twice a second. The quit is queued: a signal that comes while
    the first window is shown but before the event loop runs would otherwise be lost
    (Qt's quit does nothing outside a running loop)."""
    signal.signal(signal.SIGINT, lambda *_: QTimer.singleShot(0, app.quit))
    signal.signal(signal.SIGTERM, lambda *_: QTimer.singleShot(0, app.quit))
    timer = QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(500)
    return timer


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    app = make_application(sys.argv[:1])
    quit_on_interrupt(app)
    console = ConsoleApp(app)
    token = args.token or stored_token(console.vault, args.hub)
    console.start(args.hub, token)
    app.setQuitOnLastWindowClosed(True)
    try:
        return app.exec()
    finally:
        console.shutdown()
