"""Issue 17, polish: the dark theme follows the system (``WEBJOBS_CONSOLE_THEME``
overrides it), and the icons are drawn again in the new colours when it switches."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.session import HubSession
from console_app.shell.main_window import MainWindow
from console_app.shell.theme import THEME_ENV, Theme, dark_palette, system_is_dark
from console_app.tasks import TaskManager


def _app() -> QApplication:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    return app


@pytest.fixture
def app(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[QApplication]:
    """The test's QApplication, its palette and the theme variable put back afterwards."""
    monkeypatch.delenv(THEME_ENV, raising=False)
    app = _app()
    palette = QPalette(app.palette())
    yield app
    app.setPalette(palette)


def _window_is_dark(app: QApplication) -> bool:
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


class Desktop(QObject):
    """Stands in for the desktop's light/dark preference, which offscreen Qt cannot set
    (and a signal of its own: other tests' themes listen to Qt's)."""

    sig_changed = Signal(Qt.ColorScheme)

    def __init__(self, scheme: Qt.ColorScheme) -> None:
        super().__init__()
        self.scheme = scheme

    def theme(self, app: QApplication) -> Theme:
        return Theme(app, scheme=lambda: self.scheme, changed=self.sig_changed)

    def switch(self, scheme: Qt.ColorScheme) -> None:
        self.scheme = scheme
        self.sig_changed.emit(scheme)  # as QStyleHints.colorSchemeChanged would


@pytest.mark.parametrize("forced", ["dark", "light", " DARK "])
def test_the_variable_overrides_the_system(app: QApplication, forced: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THEME_ENV, forced)
    desktop = Desktop(Qt.ColorScheme.Light if "dark" in forced.lower() else Qt.ColorScheme.Dark)
    theme = desktop.theme(app)
    assert theme.dark == ("dark" in forced.lower()) == _window_is_dark(app)
    assert app.style().name().lower() == "fusion"


def test_it_follows_the_desktop_when_it_switches(app: QApplication) -> None:
    desktop = Desktop(Qt.ColorScheme.Light)
    theme = desktop.theme(app)
    assert not theme.dark and not _window_is_dark(app)
    desktop.switch(Qt.ColorScheme.Dark)
    assert theme.dark and _window_is_dark(app)
    assert app.palette().color(QPalette.ColorRole.Base) == dark_palette().color(
        QPalette.ColorRole.Base)
    desktop.switch(Qt.ColorScheme.Light)
    assert not theme.dark and not _window_is_dark(app)


def test_an_unknown_scheme_asks_the_platform_palette_not_our_own(
        app: QApplication, monkeypatch: pytest.MonkeyPatch) -> None:
    light, dark = QPalette(QColor("#f0f0f0")), dark_palette()
    assert system_is_dark(app, dark, Qt.ColorScheme.Unknown)
    assert not system_is_dark(app, light, Qt.ColorScheme.Unknown)
    desktop = Desktop(Qt.ColorScheme.Unknown)  # offscreen's own answer, or an old desktop
    monkeypatch.setenv(THEME_ENV, "dark")
    theme = desktop.theme(app)
    assert theme.dark
    monkeypatch.delenv(THEME_ENV)
    theme.apply()  # the platform (offscreen: light) decides, not the dark palette we set
    assert not theme.dark and not _window_is_dark(app)


def _ink_lightness(window: MainWindow) -> int:
    image = window.nav_list.item(0).icon().pixmap(16, 16).toImage()
    inked = [image.pixelColor(x, y) for x in range(16) for y in range(16)
             if image.pixelColor(x, y).alpha() > 128]
    assert inked, "the icon draws nothing"
    return max(c.lightness() for c in inked)


def test_icons_are_redrawn_in_the_new_colours(app: QApplication, qtbot: QtBot,
                                              connection: HubConnection,
                                              tasks: TaskManager) -> None:
    desktop = Desktop(Qt.ColorScheme.Light)
    desktop.theme(app)
    pages = {"Manage": lambda _s: QLabel("m"), "Secrets": lambda _s: QLabel("s")}
    window = MainWindow(HubSession(connection, tasks), pages, {}, monitor_interval_ms=60000)
    qtbot.addWidget(window)
    window.show()
    assert _ink_lightness(window) < 100  # dark strokes on a light window
    desktop.switch(Qt.ColorScheme.Dark)
    # Qt posts the palette's change to the widgets: wait for it to land.
    qtbot.waitUntil(lambda: _ink_lightness(window) > 160, timeout=3000)  # light on dark
    window.close()
