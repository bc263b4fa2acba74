"""Parameters from history that hold masked values (``***``).

History keeps a secret-looking parameter only as ``***`` (and a secret's value inside
a text as ``***`` there). Sending that back would run the job with the mask itself, so
*Run again with these parameters* asks for each masked value first: :func:`masked_places`
finds them, :func:`filled` puts the owner's answers in, and :class:`MaskedValuesDialog`
asks. History itself keeps only the masked form."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from console_app.widgets import fit_on_screen

__all__ = ["MASK", "AskMasked", "MaskedPlace", "MaskedValuesDialog", "ask_masked",
           "filled", "masked_places"]

MASK = "***"  # as the hub writes it (hub/history/record.py; the console may not import it)

Key = str | int


@dataclass(frozen=True)
class MaskedPlace:
    """Where a masked value sits: the keys and indexes that lead to it, and the text
    history kept (``***`` or a text with ``***`` inside)."""

    path: tuple[Key, ...]
    recorded: str

    @property
    def label(self) -> str:
        """``token``, ``auth.key`` or ``items[2]``: how the owner finds it."""
        text = ""
        for step in self.path:
            text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
        return text or "(the parameters)"


def masked_places(value: Any) -> list[MaskedPlace]:
    """Every text in ``value`` that holds the mask, in document order."""
    found: list[MaskedPlace] = []
    pending: list[tuple[tuple[Key, ...], Any]] = [((), value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            if MASK in item:
                found.append(MaskedPlace(path, item))
        elif isinstance(item, dict):
            pending.extend(((*path, str(k)), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            pending.extend(((*path, i), v) for i, v in reversed(list(enumerate(item))))
    return found


def filled(value: Any, answers: dict[tuple[Key, ...], str]) -> Any:
    """A copy of ``value`` with the text at each answered path replaced (recursion is
    safe: the hub refuses parameters nested deeper than 64 levels)."""
    def walk(path: tuple[Key, ...], item: Any) -> Any:
        if path in answers:
            return answers[path]
        if isinstance(item, dict):
            return {k: walk((*path, str(k)), v) for k, v in item.items()}
        if isinstance(item, list):
            return [walk((*path, i), v) for i, v in enumerate(item)]
        return item
    return walk((), value)


class MaskedValuesDialog(QDialog):
    """One masked field per masked value; OK only once every one is filled in."""

    def __init__(self, job: str, places: list[MaskedPlace],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Run {job} again")
        self.places = places
        intro = QLabel("History keeps these values only masked (***). Type each one to "
                       "send it; nothing you type here is kept.")
        intro.setWordWrap(True)
        form = QFormLayout()
        self.fields: list[QLineEdit] = []
        for place in places:
            edit = QLineEdit(echoMode=QLineEdit.EchoMode.Password)
            edit.setPlaceholderText(f"recorded as {place.recorded[:60]}")
            edit.textChanged.connect(lambda _t: self._update_ok())
            self.fields.append(edit)
            form.addRow(place.label, edit)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(460)  # room for the intro in two lines and the hints whole
        fit_on_screen(self, self.sizeHint().expandedTo(QSize(460, 0)), parent)
        self._update_ok()

    def _update_ok(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(all(edit.text() for edit in self.fields))

    def answers(self) -> dict[tuple[Key, ...], str]:
        return {place.path: edit.text() for place, edit in zip(self.places, self.fields,
                                                                strict=True)}


# (job, masked places, parent) -> the values by path, or None when the owner cancels.
AskMasked = Callable[[str, list[MaskedPlace], QWidget | None],
                     dict[tuple[Key, ...], str] | None]


def ask_masked(job: str, places: list[MaskedPlace],
               parent: QWidget | None) -> dict[tuple[Key, ...], str] | None:
    dialog = MaskedValuesDialog(job, places, parent)
    return dialog.answers() if dialog.exec() == QDialog.DialogCode.Accepted else None
