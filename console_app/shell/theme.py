"""Light and dark, following the system.

Qt reports the desktop's preference through ``QStyleHints.colorScheme()``; where it
cannot tell (``Unknown``, e.g. offscreen or an old desktop) the platform palette's
window colour decides: the palette as the platform gave it, kept from before the
console first set its own (read afterwards, it would only show the console's last
choice). The Fusion style draws both schemes the same way on every platform, so the
console looks alike wherever it runs. ``WEBJOBS_CONSOLE_THEME`` (``light``/``dark``)
overrides the system, for screenshots and testing."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

THEME_ENV = "WEBJOBS_CONSOLE_THEME"
_PLATFORM_PALETTE: list[QPalette] = []  # the first palette seen, before any Theme

_DARK = {
    QPalette.ColorRole.Window: "#2b2d30", QPalette.ColorRole.WindowText: "#dfe1e5",
    QPalette.ColorRole.Base: "#1e1f22", QPalette.ColorRole.AlternateBase: "#26282b",
    QPalette.ColorRole.ToolTipBase: "#3c3f41", QPalette.ColorRole.ToolTipText: "#dfe1e5",
    QPalette.ColorRole.PlaceholderText: "#8c8f94", QPalette.ColorRole.Text: "#dfe1e5",
    QPalette.ColorRole.Button: "#393b40", QPalette.ColorRole.ButtonText: "#dfe1e5",
    QPalette.ColorRole.BrightText: "#ff6b68", QPalette.ColorRole.Link: "#589df6",
    QPalette.ColorRole.Highlight: "#2f65ca", QPalette.ColorRole.HighlightedText: "#ffffff",
}


def system_is_dark(app: QGuiApplication, system_palette: QPalette | None = None,
                   scheme: Qt.ColorScheme | None = None) -> bool:
    forced = os.environ.get(THEME_ENV, "").strip().lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    scheme = app.styleHints().colorScheme() if scheme is None else scheme
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    palette = app.palette() if system_palette is None else system_palette
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText,
                 QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f737a"))
    return palette


class Theme:
    """Applies the scheme now and again whenever the desktop switches. ``scheme`` reads
    the desktop's preference and ``changed`` says it changed: Qt's own, unless a test
    stands in for the desktop (offscreen Qt can set neither)."""

    def __init__(self, app: QApplication, scheme: Callable[[], Qt.ColorScheme] | None = None,
                 changed: SignalInstance | None = None) -> None:
        self._app = app
        self._scheme = scheme or app.styleHints().colorScheme
        if not _PLATFORM_PALETTE:  # one app a process: a second Theme finds ours set
            _PLATFORM_PALETTE.append(QPalette(app.palette()))
        self._system = _PLATFORM_PALETTE[0]
        app.setStyle("Fusion")
        self._light = app.style().standardPalette()
        self.dark = False
        self.apply()
        (changed or app.styleHints().colorSchemeChanged).connect(lambda *_: self.apply())

    def apply(self) -> None:
        self.dark = system_is_dark(self._app, self._system, self._scheme())
        self._app.setPalette(dark_palette() if self.dark else self._light)
