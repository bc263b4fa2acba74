"""The command palette (Ctrl+Shift+P): every action of the window in one list,
narrowed as you type, Enter runs the one picked.

The commands are plain values (:class:`Command`) gathered from the window's menus
and, for a page that offers no menu of its own, from its buttons; matching is a pure
function (:func:`filter_commands`). :class:`CommandPalette` is the thin widget over
them: a panel laid over the top of the main window, not a window of its own, so it
opens on the same screen and never outside the window."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QIcon, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QFrame,
    QHeaderView,
    QLineEdit,
    QMenu,
    QRadioButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

PALETTE_WIDTH_EM = 46
VISIBLE_ROWS = 12


@dataclass(frozen=True)
class Command:
    label: str                    # "Job › Run with parameters…": where it lives and what
    shortcut: str                 # as the menus show it ("Ctrl+Shift+P"), or ""
    run: Callable[[], object]
    icon: QIcon | None = None


def plain_text(text: str) -> str:
    """A menu or button text without its mnemonic marks ("&Quit" -> "Quit", "&&" -> "&")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def matches(label: str, query: str) -> bool:
    """Every word of ``query`` is somewhere in ``label``, in any case."""
    folded = label.casefold()
    return all(word in folded for word in query.casefold().split())


def _rank(label: str, query: str) -> int:
    """0 when the command's own name starts with the query's first word, 1 when some word
    of it does, 2 otherwise: what was typed the way it reads comes first."""
    words = query.casefold().split()
    if not words:
        return 0
    name = label.rsplit("›", 1)[-1].strip().casefold()
    if name.startswith(words[0]):
        return 0
    return 1 if any(w.startswith(words[0]) for w in label.casefold().split()) else 2


def filter_commands(commands: Sequence[Command], query: str) -> list[Command]:
    """The commands matching ``query``, best first, otherwise in their menu order."""
    found = [c for c in commands if matches(c.label, query)]
    return sorted(found, key=lambda c: _rank(c.label, query))  # sorted() is stable


def commands_of_menu(menu: QMenu, prefix: str = "", skip: Iterable[QAction] = ()) -> list[Command]:
    """The enabled, visible actions of ``menu`` and its submenus, labelled by their path."""
    left_out = set(skip)
    where = f"{prefix} › " if prefix else ""
    found: list[Command] = []
    for action in menu.actions():
        if action.isSeparator() or not action.isVisible() or action in left_out:
            continue
        submenu = action.menu()
        if isinstance(submenu, QMenu):
            found += commands_of_menu(submenu, where + plain_text(action.text()), left_out)
        elif action.isEnabled():
            found.append(Command(where + plain_text(action.text()),
                                 action.shortcut().toString(QKeySequence.SequenceFormat.NativeText),
                                 action.trigger, action.icon()))
    return found


def commands_of_buttons(widget: QWidget, prefix: str) -> list[Command]:
    """The push and tool buttons showing on ``widget`` (not check boxes: a command does,
    a box only says how)."""
    found: list[Command] = []
    for button in widget.findChildren(QAbstractButton):
        if isinstance(button, (QCheckBox, QRadioButton)) or button.isCheckable():
            continue
        text = plain_text(button.text()).strip()
        if text and button.isVisibleTo(widget) and button.isEnabled():
            found.append(Command(f"{prefix} › {text}", "", button.click, button.icon()))
    return found


class CommandPalette(QFrame):
    """The search field and the list; ``open`` with the commands of the moment."""

    sig_ran = Signal(str)  # the label of the command run

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.host = parent
        self.setObjectName("command-palette")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.commands: list[Command] = []
        self.shown: list[Command] = []
        self.query = QLineEdit(placeholderText="Type a command…")
        self.query.textChanged.connect(self._narrow)
        self.query.installEventFilter(self)
        self.list = self._command_list()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_moved)
        self.hide()

    def _command_list(self) -> QTreeWidget:
        """Two columns: the command, and its shortcut at the right edge."""
        found = QTreeWidget()
        found.setColumnCount(2)
        found.setHeaderHidden(True)
        found.setRootIsDecorated(False)
        found.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # typing stays in the field
        found.header().setStretchLastSection(False)
        found.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        found.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        found.itemActivated.connect(lambda item, _col: self.run_row(self.row_of(item)))
        found.itemClicked.connect(lambda item, _col: self.run_row(self.row_of(item)))
        return found

    def row_of(self, item: QTreeWidgetItem) -> int:
        return self.list.indexOfTopLevelItem(item)

    def current_row(self) -> int:
        item = self.list.currentItem()
        return self.row_of(item) if item is not None else -1

    def set_current_row(self, row: int) -> None:
        item = self.list.topLevelItem(row)
        if item is not None:
            self.list.setCurrentItem(item)

    def row_text(self, row: int) -> tuple[str, str]:
        """What a row shows: the command and its shortcut."""
        item = self.list.topLevelItem(row)
        return (item.text(0), item.text(1)) if item is not None else ("", "")

    def open(self, commands: Sequence[Command]) -> None:
        self.commands = list(commands)
        self.query.clear()
        self._narrow("")
        self.show()
        self.raise_()
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _place(self) -> None:
        """Centred at the top of the window, as tall as the commands found (up to
        VISIBLE_ROWS), as wide as a long label, never larger than the window."""
        host = self.host
        em = self.fontMetrics().horizontalAdvance("M")
        row = self.list.sizeHintForRow(0) if self.list.topLevelItemCount() else 0
        rows = max(1, min(VISIBLE_ROWS, self.list.topLevelItemCount()))
        width = min(PALETTE_WIDTH_EM * em, host.width() - 24)
        row = max(row, self.fontMetrics().height() + 6)
        height = min(self.query.sizeHint().height() + rows * row + 24, host.height() - 48)
        self.setGeometry((host.width() - width) // 2, 36, width, height)

    def _narrow(self, query: str) -> None:
        self.shown = filter_commands(self.commands, query)
        self.list.clear()
        for command in self.shown:
            item = QTreeWidgetItem([command.label, command.shortcut])
            if command.icon is not None:
                item.setIcon(0, command.icon)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setForeground(1, self.palette().placeholderText())
            self.list.addTopLevelItem(item)
        if self.shown:
            self.set_current_row(0)
        self._place()

    def run_row(self, row: int) -> None:
        if not 0 <= row < len(self.shown):
            return
        command = self.shown[row]
        self.close_palette()  # first: what it opens gets the focus, not the palette
        command.run()
        self.sig_ran.emit(command.label)

    def close_palette(self) -> None:
        if self.isVisible():
            self.hide()
            self.host.setFocus(Qt.FocusReason.OtherFocusReason)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.query and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            return self._key(event.key())
        return False

    def _key(self, key: int) -> bool:
        steps: dict[int, int] = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1,
                                 Qt.Key.Key_PageDown: VISIBLE_ROWS,
                                 Qt.Key.Key_PageUp: -VISIBLE_ROWS}
        step = steps.get(key)
        if step is not None:
            count = self.list.topLevelItemCount()
            if count:
                self.set_current_row(max(0, min(count - 1, self.current_row() + step)))
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.run_row(self.current_row())
            return True
        if key == Qt.Key.Key_Escape:
            self.close_palette()
            return True
        return False

    def _focus_moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        # A click elsewhere in the window closes the palette, as a popup would.
        if self.isVisible() and new is not None and not self.isAncestorOf(new):
            self.hide()
