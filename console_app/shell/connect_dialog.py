"""Connect to a hub: its address, then a token or a name and password.

Signing in with a password asks the hub for an API token (``POST /api/auth/token``)
and keeps that, never the password. Remembered hubs fill the address box; their
tokens come from the :class:`~console_app.client.credentials.TokenVault`. Every
call runs through the TaskManager; failures appear in the dialog with their code."""

from __future__ import annotations

from itertools import pairwise

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from console_app.client.credentials import TokenVault
from console_app.client.errors import describe_error
from console_app.shell.banner import Banner
from console_app.shell.connecting import Connected, Credentials, normalise_url, open_hub
from console_app.shell.hubs import HubEntry, HubListModel, RememberedHubs
from console_app.tasks import TaskManager
from shared.errors import BadRequest

DEFAULT_URL = "http://127.0.0.1:8700"


class ConnectDialog(QDialog):
    sig_connected = Signal(object)  # Connected: the signed-in connection and hub info
    sig_cancelled = Signal()        # the user gave up (Cancel, Esc, the close button)

    def __init__(self, tasks: TaskManager, hubs: RememberedHubs, vault: TokenVault,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect to a WebJobs hub")
        self.setMinimumWidth(460)
        self._tasks, self._hubs, self._vault = tasks, hubs, vault
        self.connected: Connected | None = None
        self._cancelled = False
        self.hub_model = HubListModel(hubs)
        self.url_box = QComboBox()
        self.url_box.setEditable(True)
        self.url_box.setModel(self.hub_model)
        editor = self.url_box.lineEdit()
        if editor is not None:  # always there for an editable box
            editor.setPlaceholderText(DEFAULT_URL)
        self.token_mode = QRadioButton("API token")
        self.password_mode = QRadioButton("Name and password")
        self.token_edit = _secret("wjt_… (webhub user token NAME)")
        self.name_edit = QLineEdit()
        self.password_edit = _secret("")
        self.remember = QCheckBox("Keep the token on this computer")
        self.remember.setChecked(True)
        self.remember.setToolTip(f"Kept in {vault.where}")
        self.message = Banner(closable=False)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.connect_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.connect_button.setText("Connect")
        self._modes = QStackedWidget()
        self._layout()
        self._wire()
        self._fill_from_remembered()

    def use_address(self, url: str) -> None:
        """Start from ``url`` (``--hub``): its remembered name and kept token too."""
        self.url_box.setEditText(url)
        self._fill_from_remembered()

    def focus_credentials(self) -> None:
        """Put the cursor where the user types next: the token, else the name or
        (the name remembered) the password."""
        if self.token_mode.isChecked():
            self.token_edit.setFocus()
        elif self.name_edit.text():
            self.password_edit.setFocus()
        else:
            self.name_edit.setFocus()

    def _layout(self) -> None:
        token_page, password_page = QWidget(), QWidget()
        token_form = QFormLayout(token_page)
        token_form.addRow("Token", self.token_edit)
        password_form = QFormLayout(password_page)
        password_form.addRow("Name", self.name_edit)
        password_form.addRow("Password", self.password_edit)
        for form in (token_form, password_form):
            form.setContentsMargins(0, 0, 0, 0)
        self._modes.addWidget(token_page)
        self._modes.addWidget(password_page)
        modes = QHBoxLayout()
        modes.addWidget(self.token_mode)
        modes.addWidget(self.password_mode)
        modes.addStretch(1)
        top = QFormLayout()
        top.addRow("Hub", self.url_box)
        top.addRow("Sign in with", modes)
        column = QVBoxLayout(self)
        column.addLayout(top)
        column.addWidget(self._modes)
        column.addWidget(self.remember)
        where = QLabel(f"Tokens are kept in {self._vault.where}.")
        where.setWordWrap(True)
        where.setEnabled(False)  # greyed: a note, not a control
        column.addWidget(where)
        column.addWidget(self.message)
        column.addWidget(self.buttons)

    def _wire(self) -> None:
        group = QButtonGroup(self)
        group.addButton(self.token_mode)
        group.addButton(self.password_mode)
        self.token_mode.setChecked(True)
        self.token_mode.toggled.connect(
            lambda on: self._modes.setCurrentIndex(0 if on else 1))
        self.url_box.activated.connect(lambda _row: self._fill_from_remembered())
        self.token_mode.toggled.connect(lambda _on: self.focus_credentials())
        # The keyboard path: address, the way to sign in (arrows pick), its fields.
        chain = (self.url_box, self.token_mode, self.password_mode, self.token_edit,
                 self.name_edit, self.password_edit, self.remember, self.buttons)
        for before, after in pairwise(chain):
            QWidget.setTabOrder(before, after)
        self.buttons.accepted.connect(self.try_connect)
        self.buttons.rejected.connect(self.reject)

    # -- remembered hubs ------------------------------------------------------------

    def _fill_from_remembered(self) -> None:
        url = self.url_box.currentText().strip() or DEFAULT_URL
        self.url_box.setEditText(url)
        entry = self._hubs.book.find(url)
        if entry is None:
            return
        self.set_method(entry.method)
        self.name_edit.setText(entry.user)
        self.token_edit.clear()
        # The keyring may be slow (D-Bus, an unlock prompt): off the GUI thread too.
        self._tasks.run(lambda: self._vault.load(url),
                        lambda token: self._saved_token(url, token))

    def _saved_token(self, url: str, token: str | None) -> None:
        if token and self.url_box.currentText().strip() == url:
            self.token_edit.setText(token)
            self.set_method("token")  # a kept token needs no password

    def set_method(self, method: str) -> None:
        (self.password_mode if method == "password" else self.token_mode).setChecked(True)

    # -- connecting -----------------------------------------------------------------

    def credentials(self) -> Credentials:
        if self.password_mode.isChecked():
            return Credentials(name=self.name_edit.text(), password=self.password_edit.text())
        return Credentials(token=self.token_edit.text())

    def address_text(self) -> str:
        """The address box, or the default shown greyed in it when it is empty."""
        return self.url_box.currentText().strip() or DEFAULT_URL

    def missing_input(self) -> tuple[str, QWidget] | None:
        """What the user still has to fill in, and where; checked here, before any
        call, so the message says what is wrong in plain words, with no hub code."""
        try:
            normalise_url(self.address_text())
        except BadRequest as err:
            return err.message, self.url_box
        if self.token_mode.isChecked():
            if not self.token_edit.text().strip():
                return ("Enter an API token (an owner gets one with "
                        "'webhub user token NAME'), or sign in with a name and password",
                        self.token_edit)
            return None
        if not self.name_edit.text().strip():
            return "Enter your user name", self.name_edit
        if not self.password_edit.text():
            return "Enter your password", self.password_edit
        return None

    def try_connect(self) -> None:
        missing = self.missing_input()
        if missing is not None:
            text, field = missing
            self.show_error(text)
            field.setFocus()
            return
        creds = self.credentials()
        self._cancelled = False
        url = normalise_url(self.address_text())
        keep, vault = self.remember.isChecked(), self._vault

        def work() -> Connected:
            connected = open_hub(url, creds)
            # The token is kept (or dropped) here, off the GUI thread, like the keyring read.
            if keep:
                vault.store(url, connected.token)
            else:
                vault.forget(url)
            connected.kept = keep
            return connected

        self._busy(True)
        self.show_message(f"Connecting to {url}…", "info")
        self._tasks.run(work, lambda done: self._connected(url, creds, done), self._failed)

    def _connected(self, url: str, creds: Credentials, done: Connected) -> None:
        self._busy(False)
        if self._cancelled:
            done.conn.close()  # cancelled while connecting: nobody wants this connection
            return
        self.message.dismiss()
        self.password_edit.clear()
        user = done.info.user_name or creds.name
        method = "password" if creds.by_password else "token"
        self.hub_model.remember(HubEntry(done.conn.url, user, method))
        self.url_box.setEditText(done.conn.url)
        self.connected = done
        # Listeners open the main window first; hiding the dialog before it exists
        # would leave the app with no window.
        self.sig_connected.emit(done)
        self.accept()

    def reject(self) -> None:
        self._cancelled = True
        super().reject()
        if self.connected is None:
            self.sig_cancelled.emit()

    def _failed(self, err: Exception) -> None:
        self._busy(False)
        self.show_error(describe_error(err))

    def show_error(self, text: str) -> None:
        self.show_message(text, "error")

    def show_message(self, text: str, level: str) -> None:
        self.message.show_message(text, level)
        self.grow_to_fit()

    def grow_to_fit(self) -> None:
        """A long message wraps; the dialog then grows (never shrinks under the
        user) until all of it shows, within the screen."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        width = max(self.width(), min(self.sizeHint().width(), self._screen_size()[0]))
        height = max(self.height(), layout.totalHeightForWidth(width),
                     layout.totalMinimumSize().height())
        self.resize(width, min(height, self._screen_size()[1]))

    def _screen_size(self) -> tuple[int, int]:
        screen = self.screen()
        area = screen.availableGeometry()
        return area.width(), area.height()

    def _busy(self, busy: bool) -> None:
        for widget in (self.url_box, self._modes, self.token_mode, self.password_mode,
                       self.connect_button, self.remember):
            widget.setEnabled(not busy)


def _secret(placeholder: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setEchoMode(QLineEdit.EchoMode.Password)
    edit.setPlaceholderText(placeholder)
    return edit
