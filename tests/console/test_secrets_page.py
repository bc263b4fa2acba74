"""The Secrets page and its dialog against a real hub: list, set, replace, delete,
the *missing* badge, a user refused, and no value left in the model or widgets."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from console_app.client.connection import API, HubConnection
from console_app.client.jobs import delete as delete_job
from console_app.client.jobs import save as save_job
from console_app.client.secrets import SecretInfo, list_secrets, set_secret
from console_app.models.secrets import COLUMNS, STATUS, UPDATED, Roles
from console_app.pages.secrets import SecretDialog, SecretsPage
from console_app.session import HubSession
from console_app.tasks import TaskManager
from shared.errors import NotFound
from tests.console.conftest import ConsoleHub

WAIT = 15000


@pytest.fixture
def page(qtbot: QtBot, session: HubSession) -> SecretsPage:
    widget = SecretsPage(session)
    qtbot.addWidget(widget)
    return widget


@dataclass
class Declared:
    job: str
    secret: str


@pytest.fixture
def declared(connection: HubConnection) -> Iterator[Declared]:
    """A job whose header declares a fresh secret name; job and secret removed after."""
    tag = uuid.uuid4().hex[:8]
    made = Declared(f"secret_user_{tag}", f"s_{tag}")
    save_job(connection, made.job, f"/*\nName: Reads a secret\nSecrets: {made.secret}\n*/\n"
             f"return {{ digest: crypto.hash('sha256', secrets.get('{made.secret}'), 'hex') }}")
    yield made
    delete_job(connection, made.job)
    with contextlib.suppress(NotFound):  # already deleted by the test
        connection.delete(f"{API}/secrets/{made.secret}")


def loaded(qtbot: QtBot, page: SecretsPage) -> None:
    with qtbot.waitSignal(page.sig_loaded, timeout=WAIT):
        page.refresh()


def row_of(page: SecretsPage, name: str) -> int:
    row = page.model.row_of(name)
    assert row >= 0, f"{name} not listed"
    return row


def digest_seen_by_job(conn: HubConnection, job: str) -> str:
    """Run the job: the hub answers NDJSON (metadata, then the result on the last line)."""
    answer = conn.fetch("POST", f"{API}/{job}", json={})
    return str(json.loads(answer.body.splitlines()[-1])["digest"])


def save_dialog(qtbot: QtBot, page: SecretsPage, dialog: SecretDialog) -> None:
    save_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert save_button.isEnabled()
    with qtbot.waitSignals([dialog.sig_saved, page.sig_changed, page.sig_loaded],
                           timeout=WAIT):
        save_button.click()


def all_role_data(page: SecretsPage) -> list[str]:
    """Everything the model serves, for every cell and header, under every role."""
    model, roles = page.model, range(0, int(Qt.ItemDataRole.UserRole) + 64)
    found = [repr(model.headerData(c, Qt.Orientation.Horizontal, r))
             for c in range(len(COLUMNS)) for r in roles]
    for row in range(model.rowCount()):
        for column in range(model.columnCount()):
            index = model.index(row, column)
            found += [repr(model.data(index, r)) for r in roles]
    return found


def shown_texts(widget: QWidget) -> list[str]:
    """Every text a line edit, label or text box under ``widget`` (dialogs included) holds."""
    texts = [w.text() for w in widget.findChildren(QLineEdit) + widget.findChildren(QLabel)]
    return texts + [w.toPlainText() for w in widget.findChildren(QPlainTextEdit)]


def test_missing_badge_then_set_from_the_row(qtbot: QtBot, page: SecretsPage,
                                             connection: HubConnection, declared: Declared,
                                             console_hub: ConsoleHub,
                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    loaded(qtbot, page)
    row = row_of(page, declared.secret)
    status = page.model.index(row, STATUS)
    assert page.model.data(status) == "missing" and page.model.data(status, Roles.MISSING)
    assert page.model.data(status, Roles.DECLARED_BY) == [declared.job]
    assert "missing" in page.summary_label.text()
    page.select(declared.secret)
    assert page.set_button.text() == "Set value…" and not page.delete_button.isEnabled()
    page.set_button.click()
    dialog = page.dialog
    assert dialog is not None and dialog.name_edit.isReadOnly()
    assert dialog.name_edit.text() == declared.secret
    assert dialog.value_line.echoMode() == QLineEdit.EchoMode.Password
    value = f"whsec-{uuid.uuid4().hex}"
    dialog.value_line.setText(value)
    dialog.show_box.setChecked(True)  # the show toggle reveals, and saving hides again
    assert dialog.value_line.echoMode() == QLineEdit.EchoMode.Normal
    save_dialog(qtbot, page, dialog)
    assert dialog.value_line.text() == "" and dialog.value() == ""
    assert dialog.value_line.echoMode() == QLineEdit.EchoMode.Password
    row = row_of(page, declared.secret)
    assert page.model.data(page.model.index(row, STATUS)) == "set"
    assert " by owner (" in page.model.data(page.model.index(row, UPDATED))
    assert page.message.text().startswith(f"Set the secret '{declared.secret}'")
    assert digest_seen_by_job(connection, declared.job) == \
        hashlib.sha256(value.encode()).hexdigest()
    assert not any(value in text for text in all_role_data(page) + shown_texts(page))
    assert not any(value in text for text in shown_texts(dialog))
    assert value not in caplog.text and value not in console_hub.process.log_text()


def test_replace_with_a_multi_line_value(qtbot: QtBot, page: SecretsPage,
                                         connection: HubConnection,
                                         declared: Declared) -> None:
    set_secret(connection, declared.secret, "first-value-1")
    loaded(qtbot, page)
    page.select(declared.secret)
    assert page.set_button.text() == "Replace value…" and page.delete_button.isEnabled()
    dialog = page.open_dialog(page.selected())
    assert dialog.windowTitle() == f"Replace secret {declared.secret}"
    dialog.multi_box.setChecked(True)
    assert dialog.value_editor() is dialog.hidden_label  # masked until shown
    assert dialog.hidden_label.isVisibleTo(dialog) and not dialog.value_text.isVisibleTo(dialog)
    dialog.show_box.setChecked(True)
    assert dialog.value_editor() is dialog.value_text and dialog.value_text.isVisibleTo(dialog)
    value = f"-----BEGIN KEY-----\n{uuid.uuid4().hex}\n-----END KEY-----"
    dialog.value_text.setPlainText(value)
    dialog.show_box.setChecked(False)
    assert dialog.value_editor() is dialog.hidden_label
    assert "3 line(s)" in dialog.hidden_label.text() and value not in dialog.hidden_label.text()
    dialog.multi_box.setChecked(False)  # several lines cannot go back to one
    assert dialog.multi_box.isChecked() and dialog.value() == value
    save_dialog(qtbot, page, dialog)
    assert dialog.value_text.toPlainText() == "" and dialog.value() == ""
    assert page.message.text().startswith(f"Replaced the secret '{declared.secret}'")
    assert digest_seen_by_job(connection, declared.job) == \
        hashlib.sha256(value.encode()).hexdigest()
    assert not any(line in text for line in value.splitlines()[1:2]
                   for text in all_role_data(page) + shown_texts(page))


def test_new_secret_is_validated_like_the_hub(qtbot: QtBot, page: SecretsPage,
                                              connection: HubConnection) -> None:
    loaded(qtbot, page)
    dialog = page.open_dialog(None)
    save_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert dialog.windowTitle() == "New secret" and not dialog.name_edit.isReadOnly()
    dialog.value_line.setText("long-enough-value")
    for bad in ("9lives", "with space", "x" * 65):
        dialog.name_edit.setText(bad)
        assert not save_button.isEnabled() and "letters, digits" in dialog.name_status.text()
    name = f"_unused.{uuid.uuid4().hex[:8]}"
    dialog.name_edit.setText(name)
    dialog.value_line.setText("short")
    assert not save_button.isEnabled() and "6 to" in dialog.value_status.text()
    dialog.value_line.setText("long-enough-value")
    try:
        save_dialog(qtbot, page, dialog)
        index = page.model.index(row_of(page, name), STATUS)
        assert page.model.data(index) == "unused" and page.model.data(index, Roles.IS_SET)
    finally:
        connection.delete(f"{API}/secrets/{name}")


def test_delete_is_confirmed_and_leaves_the_declared_name_missing(
        qtbot: QtBot, page: SecretsPage, connection: HubConnection,
        declared: Declared) -> None:
    set_secret(connection, declared.secret, "doomed-value")
    loaded(qtbot, page)
    page.select(declared.secret)
    page.delete_button.click()
    box = page.confirm_box
    assert box is not None and declared.job in box.text()
    box.button(QMessageBox.StandardButton.No).click()  # 'No' keeps it
    assert page.confirm_box is None
    assert any(s.name == declared.secret and s.is_set for s in list_secrets(connection))
    page.select(declared.secret)
    box = page.delete(page.selected())  # type: ignore[arg-type]
    with qtbot.waitSignals([page.sig_changed, page.sig_loaded], timeout=WAIT):
        box.button(QMessageBox.StandardButton.Yes).click()
    listed = {s.name: s for s in list_secrets(connection)}
    assert not listed[declared.secret].is_set
    index = page.model.index(row_of(page, declared.secret), STATUS)
    assert page.model.data(index, Roles.BADGE) == "missing"
    assert page.message.text() == f"Deleted the secret '{declared.secret}'."
    page.table.clearSelection()
    with qtbot.waitSignal(page.sig_changes_shown, timeout=WAIT):
        page.select(declared.secret)  # its story survives the delete
    story = page.changes_label.text()
    assert story.startswith(f"Changes to {declared.secret}, newest first: deleted by owner")
    assert "set by owner" in story and "doomed-value" not in story


def test_a_user_is_refused_and_sees_the_code(qtbot: QtBot, console_hub: ConsoleHub,
                                             tasks: TaskManager) -> None:
    with HubConnection(console_hub.url, console_hub.user_token) as conn:
        page = SecretsPage(HubSession(conn, tasks))
        qtbot.addWidget(page)
        with qtbot.waitSignal(page.sig_failed, timeout=WAIT) as failed:
            page.refresh()
        assert failed.args[0].startswith("Loading secrets failed — SYS-403: ")
        assert page.message.kind == "error" and "SYS-403" in page.message.text()
        assert page.model.rowCount() == 0
        dialog = page.open_dialog(None)
        dialog.name_edit.setText("user_try")
        dialog.value_line.setText("not-allowed-value")
        with qtbot.waitSignal(dialog.sig_failed, timeout=WAIT) as refused:
            dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
        assert "SYS-403" in refused.args[0] and dialog.isVisible()
        assert dialog.value() == "not-allowed-value"  # kept, so the owner can retry elsewhere
        dialog.reject()
        assert dialog.value() == ""  # a cancelled dialog keeps nothing either


def test_cancel_clears_and_jobs_changed_refreshes(qtbot: QtBot, page: SecretsPage,
                                                  session: HubSession) -> None:
    dialog = page.open_dialog(None)
    dialog.value_line.setText("typed-then-cancelled")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    assert dialog.value() == "" and not dialog.isVisible()
    with qtbot.waitSignal(page.sig_loaded, timeout=WAIT):
        session.nav.sig_jobs_changed.emit()
    assert all(isinstance(page.model.data(page.model.index(r, 0), Roles.SECRET), SecretInfo)
               for r in range(page.model.rowCount()))
