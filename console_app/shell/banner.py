"""Non-modal messages: a strip across the top of a window, never a blocking box.

Every failure the shell shows is worded by
:func:`console_app.client.errors.describe_error`, so the user always sees the code
(``SYS-403: …``) they can look up in the README."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

# Background/foreground pairs readable on both light and dark palettes.
LEVELS = {
    "error": ("#f8d7da", "#58151c"),
    "warning": ("#fff3cd", "#523c00"),
    "info": ("#cfe2ff", "#052c65"),
}


class Banner(QFrame):
    """One message at a time; ``closable`` banners get a ✕ and may time out."""

    sig_closed = Signal()

    def __init__(self, closable: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.level = ""
        self._label = QLabel()
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self._label, 1)
        if closable:
            close = QToolButton()
            close.setText("✕")
            close.setAutoRaise(True)
            close.setToolTip("Dismiss")
            close.clicked.connect(self.dismiss)
            layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self.hide()

    @property
    def text(self) -> str:
        return self._label.text()

    def show_message(self, text: str, level: str = "error", timeout_ms: int = 0) -> None:
        background, foreground = LEVELS.get(level, LEVELS["info"])
        self.level = level
        self.setStyleSheet(f"#banner {{ background: {background}; border-radius: 4px; }}"
                           f"#banner QLabel, #banner QToolButton {{ color: {foreground}; }}")
        self._label.setText(text)
        self._timer.stop()
        if timeout_ms:
            self._timer.start(timeout_ms)
        self.show()

    def dismiss(self) -> None:
        self._timer.stop()
        if not self.isHidden():
            self.hide()
            self.sig_closed.emit()
        self.level = ""
