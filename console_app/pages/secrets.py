"""The Secrets page: every secret's name, the jobs that declare it, who set it and
when — and, for names a job declares but nobody set, a *missing* badge.

Values only travel one way: typed into :class:`SecretDialog`, sent with ``PUT``,
and wiped from the dialog once the hub has them (or the dialog is cancelled). The
listing the page shows comes from the hub, which never returns a value, so neither
the model, nor the log, nor any widget holds one after saving. The hub is the judge
of names and values; the dialog only says early what the hub would refuse."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from console_app.client.errors import describe_error
from console_app.client.secrets import (
    SecretChange,
    SecretInfo,
    delete_secret,
    list_secrets,
    name_problem,
    secret_changes,
    set_secret,
    value_problem,
)
from console_app.models.secrets import SecretTableModel, changes_text, summary
from console_app.session import HubSession
from console_app.tasks import Latest
from console_app.widgets import MessageBar, fit_on_screen, new_item_key, row_table

__all__ = ["SecretDialog", "SecretsPage"]

SENSITIVE = (Qt.InputMethodHint.ImhSensitiveData | Qt.InputMethodHint.ImhNoPredictiveText
             | Qt.InputMethodHint.ImhHiddenText)


DIALOG_MIN_WIDTH = 420


class SecretDialog(QDialog):
    """Set a new secret (``existing`` None: the name is typed) or set/replace a
    listed one (its name fixed). Saves through the hub itself, then clears."""

    sig_saved = Signal(str, bool)       # name, created (False: replaced)
    sig_failed = Signal(str)            # the hub's refusal, 'CODE: message'

    def __init__(self, session: HubSession, existing: SecretInfo | None = None,
                 known: list[SecretInfo] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.existing = existing
        self.known = {s.name: s for s in known or ()}
        self._saving = False
        self.setWindowTitle(self._title())
        self._build()
        # Wide enough that a hint or refusal wraps onto lines instead of being cut off.
        self.setMinimumWidth(DIALOG_MIN_WIDTH)
        fit_on_screen(self, QSize(DIALOG_MIN_WIDTH + 40, 280))
        if existing is not None:
            self.name_edit.setText(existing.name)
            self.name_edit.setReadOnly(True)
        self._validate()

    def _title(self) -> str:
        if self.existing is None:
            return "New secret"
        return f"{'Replace' if self.existing.is_set else 'Set'} secret {self.existing.name}"

    def _build(self) -> None:
        self.message = MessageBar()
        self.name_edit = QLineEdit(placeholderText="e.g. stripe_signing")
        self.name_status = QLabel(wordWrap=True)
        self.value_line = QLineEdit(echoMode=QLineEdit.EchoMode.Password)
        self.value_line.setInputMethodHints(SENSITIVE)
        self.value_text = QPlainTextEdit()
        self.value_text.setInputMethodHints(SENSITIVE)
        self.value_text.setUndoRedoEnabled(False)  # no copy of a value left in an undo stack
        self.hidden_label = QLabel(wordWrap=True)
        # One of the three is visible at a time; hidden ones take no room (a stack
        # would size the one-line field as tall as the text box).
        self.value_box = QWidget()
        box = QVBoxLayout(self.value_box)
        box.setContentsMargins(0, 0, 0, 0)
        for widget in (self.value_line, self.value_text, self.hidden_label):
            box.addWidget(widget)
        self.value_text.hide()
        self.hidden_label.hide()
        self.value_status = QLabel(wordWrap=True)
        self.show_box = QCheckBox("Show value")
        self.multi_box = QCheckBox("Multi-line")
        self.multi_box.setToolTip("For values such as PEM keys; the box stays hidden until "
                                  "'Show value' is ticked")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel)
        self._connect()
        self._lay_out()

    def _connect(self) -> None:
        self.name_edit.textChanged.connect(self._validate)
        self.value_line.textChanged.connect(self._validate)
        self.value_text.textChanged.connect(self._validate)
        self.show_box.toggled.connect(self._show_mode)
        self.multi_box.toggled.connect(self._multi_mode)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

    def _lay_out(self) -> None:
        toggles = QHBoxLayout()
        toggles.addWidget(self.show_box)
        toggles.addWidget(self.multi_box)
        toggles.addStretch(1)
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("", self.name_status)
        form.addRow("Value", self.value_box)
        form.addRow("", toggles)
        form.addRow("", self.value_status)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addLayout(form)
        layout.addWidget(self.buttons)

    # -- the value field ---------------------------------------------------------------

    def value(self) -> str:
        return self.value_text.toPlainText() if self.multi_box.isChecked() else \
            self.value_line.text()

    def clear_value(self) -> None:
        """Wipe every copy the dialog holds, and hide again."""
        self.value_line.setText("")
        self.value_text.clear()  # also drops its undo history
        self.show_box.setChecked(False)
        self._validate()

    def _show_mode(self, shown: bool) -> None:
        self.value_line.setEchoMode(QLineEdit.EchoMode.Normal if shown
                                    else QLineEdit.EchoMode.Password)
        self._place_stack()

    def _multi_mode(self, multi: bool) -> None:
        if multi:
            self.value_text.setPlainText(self.value_line.text())
            self.value_line.setText("")
        elif "\n" in self.value_text.toPlainText():
            # One line cannot hold it; keep it multi-line rather than lose the breaks.
            self.multi_box.blockSignals(True)
            self.multi_box.setChecked(True)
            self.multi_box.blockSignals(False)
            self.value_status.setText("This value has several lines; it stays multi-line.")
            return
        else:
            self.value_line.setText(self.value_text.toPlainText())
            self.value_text.clear()
        self._place_stack()
        self._validate()

    def value_editor(self) -> QWidget:
        """What the value area shows now: the masked line, the text box (multi-line and
        shown) or, for a multi-line value not shown, only its size."""
        if not self.multi_box.isChecked():
            return self.value_line
        return self.value_text if self.show_box.isChecked() else self.hidden_label

    def _place_stack(self) -> None:
        current = self.value_editor()
        for widget in (self.value_line, self.value_text, self.hidden_label):
            widget.setVisible(widget is current)
        if current is not self.hidden_label:
            current.setFocus()
        self._describe_hidden()

    def _describe_hidden(self) -> None:
        text = self.value_text.toPlainText()
        lines = text.count("\n") + 1 if text else 0
        self.hidden_label.setText(f"Hidden: {lines} line(s), {len(text)} characters. "
                                  "Tick 'Show value' to see or edit it.")

    # -- checking and saving ---------------------------------------------------------

    def _validate(self) -> bool:
        name = self.name_edit.text()
        name_why = name_problem(name) if name else "Type the secret's name"
        if name_why is None and self.existing is None and name in self.known:
            other = self.known[name]
            name_why_hint = "Saving replaces its value." if other.is_set else \
                "Declared by " + ", ".join(other.declared_by) + "; not set yet."
            self.name_status.setText(name_why_hint)
        else:
            self.name_status.setText(name_why or "")
        value_why = value_problem(self.value())
        self.value_status.setText(value_why if value_why and self.value() else "")
        self._describe_hidden()
        ok = name_why is None and value_why is None
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(
            ok and not self._saving)  # one PUT at a time, even if the owner types on
        return ok

    def save(self) -> None:
        if not self._validate():
            return
        conn, name, value = self.session.conn, self.name_edit.text(), self.value()
        self._saving = True
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(False)
        self.message.show_info(f"Saving {name}…")
        self.session.tasks.run(lambda: set_secret(conn, name, value),
                               lambda created: self._saved(name, created), self._refused)

    def _saved(self, name: str, created: bool) -> None:
        self._saving = False
        self.clear_value()
        self.message.clear_message()
        self.sig_saved.emit(name, created)
        self.accept()

    def _refused(self, exc: Exception) -> None:
        # The value stays so the owner can fix it; the hub's message never quotes it.
        self._saving = False
        self.message.show_error(exc, "Saving")
        self._validate()
        self.sig_failed.emit(self.message.text())

    def done(self, result: int) -> None:
        self.clear_value()  # cancelled or saved: no value outlives the dialog
        super().done(result)


class SecretsPage(QWidget):
    sig_loaded = Signal()               # the table shows the hub's listing
    sig_changed = Signal()              # a set, replace or delete was confirmed by the hub
    sig_failed = Signal(str)            # a hub call failed: 'CODE: message' shown on the page
    sig_changes_shown = Signal(str)     # the selected secret's change log is on the page

    def __init__(self, session: HubSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model = SecretTableModel(parent=self)
        self.dialog: SecretDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self._loads = Latest()
        self._change_loads = Latest()
        self._build()
        session.nav.sig_jobs_changed.connect(self.refresh)  # declarers may have changed

    def _build(self) -> None:
        self.message = MessageBar()
        self.summary_label = QLabel("Secrets")
        self.new_button = QPushButton("New secret…")
        self.new_button.clicked.connect(lambda: self.open_dialog(None))
        new_item_key(self, self.new_button)
        self.set_button = QPushButton("Replace value…")
        self.set_button.setMinimumWidth(self.set_button.sizeHint().width())  # either label fits
        self.set_button.clicked.connect(self._set_selected)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.clicked.connect(self._delete_selected)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.table = row_table(self.model)
        self.table.doubleClicked.connect(self._double_clicked)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_moved())
        self.changes_label = QLabel(wordWrap=True)
        self.changes_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar = QHBoxLayout()
        bar.addWidget(self.summary_label, 1)
        for button in (self.new_button, self.set_button, self.delete_button,
                       self.refresh_button):
            bar.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.changes_label)
        self._update_buttons()

    # -- loading -----------------------------------------------------------------------

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self.refresh()

    def refresh(self) -> None:
        call, conn = self._loads.start(), self.session.conn  # an older answer is dropped
        self.session.tasks.run(lambda: list_secrets(conn), call.wrap(self._loaded),
                               call.wrap(lambda exc: self._show_error(exc, "Loading secrets")))

    def _loaded(self, items: list[SecretInfo]) -> None:
        if self.message.kind == "error":
            self.message.clear_message()
        chosen = self.selected()
        self.model.set_secrets(items)
        self.summary_label.setText(summary(items))
        if chosen is not None:
            self.select(chosen.name)
        self._update_buttons()
        self.sig_loaded.emit()

    def _show_error(self, exc: Exception, doing: str) -> None:
        self.message.show_error(exc, doing)
        self.sig_failed.emit(self.message.text())

    # -- selection ---------------------------------------------------------------------

    def selected(self) -> SecretInfo | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.secret_at(rows[0].row()) if rows else None

    def select(self, name: str) -> None:
        row = self.model.row_of(name)
        if row >= 0:
            self.table.selectRow(row)

    def _selection_moved(self) -> None:
        self._update_buttons()
        item = self.selected()
        self.changes_label.clear()
        if item is None:
            self._change_loads.supersede()  # nothing selected: no late log shows
            return
        call, conn, name = self._change_loads.start(), self.session.conn, item.name

        def shown(changes: list[SecretChange]) -> None:
            self.changes_label.setText(changes_text(name, changes))
            self.sig_changes_shown.emit(name)

        def failed(exc: Exception) -> None:
            self.changes_label.setText(f"Could not load the changes of {name}: "
                                       f"{describe_error(exc)}")
            self.sig_changes_shown.emit(name)

        self.session.tasks.run(lambda: secret_changes(conn, name), call.wrap(shown),
                               call.wrap(failed))

    def _update_buttons(self) -> None:
        item = self.selected()
        self.set_button.setEnabled(item is not None)
        self.set_button.setText("Replace value…" if item is not None and item.is_set
                                else "Set value…")
        self.delete_button.setEnabled(item is not None and item.is_set)

    def _set_selected(self) -> None:
        item = self.selected()
        if item is not None:
            self.open_dialog(item)

    def _delete_selected(self) -> None:
        item = self.selected()
        if item is not None and item.is_set:
            self.delete(item)

    def _double_clicked(self, index: QModelIndex) -> None:
        item = self.model.secret_at(index.row())
        if item is not None:
            self.open_dialog(item)

    # -- actions -----------------------------------------------------------------------

    def open_dialog(self, item: SecretInfo | None) -> SecretDialog:
        """The set/replace dialog (``None``: a new name), window-modal, not blocking."""
        self.dialog = SecretDialog(self.session, item, self.model.secrets(), self)
        self.dialog.sig_saved.connect(self._saved)
        self.dialog.open()
        return self.dialog

    def _saved(self, name: str, created: bool) -> None:
        self.message.show_info(f"{'Set' if created else 'Replaced'} the secret '{name}'. "
                               "Declaring jobs read the new value from their next run.")
        self.sig_changed.emit()
        self.refresh()

    def delete(self, item: SecretInfo) -> QMessageBox:
        """Ask (non-blocking, window-modal); the hub is called only on *Yes*."""
        users = (f"\n\n{', '.join(item.declared_by)} declare(s) it: their runs will fail "
                 "at secrets.get until it is set again.") if item.declared_by else ""
        box = QMessageBox(QMessageBox.Icon.Question, "Delete secret",
                          f"Delete the secret '{item.name}'? Its value cannot be recovered."
                          + users, QMessageBox.StandardButton.Yes
                          | QMessageBox.StandardButton.No, self)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.finished.connect(lambda _r: self._delete_answered(box, item))
        self.confirm_box = box
        box.open()
        return box

    def _delete_answered(self, box: QMessageBox, item: SecretInfo) -> None:
        self.confirm_box = None
        box.deleteLater()
        if box.standardButton(box.clickedButton()) != QMessageBox.StandardButton.Yes:
            return
        conn, name = self.session.conn, item.name

        def done(_none: None) -> None:
            self.message.show_info(f"Deleted the secret '{name}'.")
            self.sig_changed.emit()
            self.refresh()

        self.session.tasks.run(lambda: delete_secret(conn, name), done,
                               lambda exc: self._show_error(exc, f"Deleting {name}"))
