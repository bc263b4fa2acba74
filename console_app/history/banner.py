"""A non-modal message line at the top of a page: a hub failure shows its code and
message here, never in a dialog the owner must dismiss, and never as a crash."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from shared.errors import WebJobsError

__all__ = ["MessageBar", "describe_error"]

_STYLES = {"error": "background:#fdecea;color:#8a1c1c;border:1px solid #f5c2c0;",
           "info": "background:#e8f1fb;color:#0d3c61;border:1px solid #b6d4f2;"}


def describe_error(exc: Exception) -> str:
    """'SYS-404: There is no schedule 9' — the code first, as support asks for it."""
    if isinstance(exc, WebJobsError):
        ref = f" (ref {exc.ref})" if exc.ref else ""
        return f"{exc.code}: {exc.message}{ref}"
    return f"{type(exc).__name__}: {exc}"


class MessageBar(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.kind = ""
        self.hide()

    def show_error(self, exc: Exception, doing: str = "") -> None:
        prefix = f"{doing} failed — " if doing else ""
        self._show("error", prefix + describe_error(exc))

    def show_info(self, text: str) -> None:
        self._show("info", text)

    def clear_message(self) -> None:
        self.kind = ""
        self.setText("")
        self.hide()

    def _show(self, kind: str, text: str) -> None:
        self.kind = kind
        self.setStyleSheet(f"QLabel{{{_STYLES[kind]}padding:4px 8px;border-radius:3px;}}")
        self.setText(text)
        self.show()
