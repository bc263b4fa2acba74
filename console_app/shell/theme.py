"""Light and dark, following the system.

Qt reports the desktop's preference through ``QStyleHints.colorScheme()``; where it
cannot tell (``Unknown``, e.g. offscreen or an old desktop) the platform palette's
window colour decides. The Fusion style draws both schemes the same way on every
platform, so the console looks alike wherever it runs. ``WEBJOBS_CONSOLE_THEME``
(``light``/``dark``) overrides the system, for screenshots and testing."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

THEME_ENV = "WEBJOBS_CONSOLE_THEME"

_DARK = {
    QPalette.ColorRole.Window: "#2b2d30", QPalette.ColorRole.WindowText: "#dfe1e5",
    QPalette.ColorRole.Base: "#1e1f22", QPalette.ColorRole.AlternateBase: "#26282b",
    QPalette.ColorRole.ToolTipBase: "#3c3f41", QPalette.ColorRole.ToolTipText: "#dfe1e5",
    QPalette.ColorRole.PlaceholderText: "#8c8f94", QPalette.ColorRole.Text: "#dfe1e5",
    QPalette.ColorRole.Button: "#393b40", QPalette.ColorRole.ButtonText: "#dfe1e5",
    QPalette.ColorRole.BrightText: "#ff6b68", QPalette.ColorRole.Link: "#589df6",
    QPalette.ColorRole.Highlight: "#2f65ca", QPalette.ColorRole.HighlightedText: "#ffffff",
}


def system_is_dark(app: QGuiApplication) -> bool:
    forced = os.environ.get(THEME_ENV, "").strip().lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    scheme = app.styleHints().colorScheme()
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText,
                 QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f737a"))
    return palette


class Theme:
    """Applies the scheme now and again whenever the desktop switches."""

    def __init__(self, app: QApplication) -> None:
        self._app = app
        app.setStyle("Fusion")
        self._light = app.style().standardPalette()
        self.dark = False
        self.apply()
        app.styleHints().colorSchemeChanged.connect(lambda _scheme: self.apply())

    def apply(self) -> None:
        self.dark = system_is_dark(self._app)
        self._app.setPalette(dark_palette() if self.dark else self._light)
