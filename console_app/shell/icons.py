"""The console's icons: simple line drawings painted in the palette's text colour.

They are drawn with QPainter rather than loaded from files, so they need no image
plugin, stay sharp at any device pixel ratio, and follow the theme: :func:`icon`
paints in the current palette's text colour, and the main window asks again when
the palette changes (light to dark)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QIcon,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
)

SIZES = (16, 24, 32, 48)  # QIcon picks the nearest; drawn on a 16-unit grid


def _play(p: QPainter) -> None:
    path = QPainterPath(QPointF(4.5, 2.5))
    path.lineTo(13, 8)
    path.lineTo(4.5, 13.5)
    path.closeSubpath()
    p.drawPath(path)


def _plus(p: QPainter) -> None:
    p.drawLine(QPointF(8, 2.5), QPointF(8, 13.5))
    p.drawLine(QPointF(2.5, 8), QPointF(13.5, 8))


def _upload(p: QPainter) -> None:
    p.drawLine(QPointF(8, 2.5), QPointF(8, 10))
    p.drawPolyline([QPointF(4.5, 6), QPointF(8, 2.5), QPointF(11.5, 6)])
    p.drawPolyline([QPointF(2.5, 10), QPointF(2.5, 13.5), QPointF(13.5, 13.5),
                    QPointF(13.5, 10)])


def _refresh(p: QPainter) -> None:
    p.drawArc(QRectF(2.5, 2.5, 11, 11), 60 * 16, 290 * 16)
    p.drawPolyline([QPointF(10, 1.8), QPointF(11.2, 3.7), QPointF(9, 4.8)])


def _list(p: QPainter) -> None:
    for y in (4.0, 8.0, 12.0):
        p.drawPoint(QPointF(3, y))
        p.drawLine(QPointF(6, y), QPointF(13.5, y))


def _clock(p: QPainter) -> None:
    p.drawEllipse(QRectF(2.5, 2.5, 11, 11))
    p.drawPolyline([QPointF(8, 5), QPointF(8, 8), QPointF(10.5, 9.5)])


def _history(p: QPainter) -> None:
    p.drawArc(QRectF(2.5, 2.5, 11, 11), 200 * 16, -310 * 16)
    p.drawPolyline([QPointF(1.5, 5.5), QPointF(2.6, 7.6), QPointF(4.8, 6.6)])
    p.drawPolyline([QPointF(8, 5), QPointF(8, 8), QPointF(10, 9.5)])


def _chart(p: QPainter) -> None:
    p.drawPolyline([QPointF(2.5, 2.5), QPointF(2.5, 13.5), QPointF(13.5, 13.5)])
    for x, top in ((5.5, 9.0), (8.5, 5.0), (11.5, 7.0)):
        p.drawLine(QPointF(x, 11.5), QPointF(x, top))


def _key(p: QPainter) -> None:
    p.drawEllipse(QRectF(2, 6, 6, 6))
    p.drawLine(QPointF(8, 9), QPointF(14, 9))
    p.drawLine(QPointF(12, 9), QPointF(12, 11.5))
    p.drawLine(QPointF(14, 9), QPointF(14, 11))


def _bug(p: QPainter) -> None:
    p.drawEllipse(QRectF(5, 5, 6, 8.5))
    p.drawArc(QRectF(6, 2.5, 4, 4), 0, 180 * 16)
    for y in (7.0, 9.5, 12.0):
        p.drawLine(QPointF(2.5, y - 0.5), QPointF(5, y))
        p.drawLine(QPointF(13.5, y - 0.5), QPointF(11, y))


def _pencil(p: QPainter) -> None:
    path = QPainterPath(QPointF(3, 13))
    for x, y in ((3.5, 10.5), (11, 3), (13, 5), (5.5, 12.5)):
        path.lineTo(x, y)
    path.closeSubpath()
    p.drawPath(path)
    p.drawLine(QPointF(9.5, 4.5), QPointF(11.5, 6.5))


def _trash(p: QPainter) -> None:
    p.drawLine(QPointF(2.5, 4.5), QPointF(13.5, 4.5))
    p.drawPolyline([QPointF(6, 4.5), QPointF(6.5, 2.5), QPointF(9.5, 2.5), QPointF(10, 4.5)])
    p.drawPolyline([QPointF(4, 4.5), QPointF(4.8, 13.5), QPointF(11.2, 13.5),
                    QPointF(12, 4.5)])
    p.drawLine(QPointF(8, 7), QPointF(8, 11))


def _globe(p: QPainter) -> None:
    p.drawEllipse(QRectF(2.5, 2.5, 11, 11))
    p.drawEllipse(QRectF(5.5, 2.5, 5, 11))
    p.drawLine(QPointF(2.5, 8), QPointF(13.5, 8))


def _search(p: QPainter) -> None:
    p.drawEllipse(QRectF(2.5, 2.5, 8, 8))
    p.drawLine(QPointF(9.5, 9.5), QPointF(13.5, 13.5))


def _file_run(p: QPainter) -> None:
    p.drawPolyline([QPointF(9.5, 2.5), QPointF(3.5, 2.5), QPointF(3.5, 13.5),
                    QPointF(12.5, 13.5), QPointF(12.5, 5.5), QPointF(9.5, 2.5)])
    path = QPainterPath(QPointF(6.5, 7))
    path.lineTo(10, 9.25)
    path.lineTo(6.5, 11.5)
    path.closeSubpath()
    p.drawPath(path)


def _versions(p: QPainter) -> None:
    p.drawRect(QRectF(5.5, 5.5, 8, 8))
    p.drawPolyline([QPointF(2.5, 10.5), QPointF(2.5, 2.5), QPointF(10.5, 2.5)])


def _command(p: QPainter) -> None:
    p.drawPolyline([QPointF(3, 4.5), QPointF(6.5, 8), QPointF(3, 11.5)])
    p.drawLine(QPointF(8, 12), QPointF(13, 12))


def _swap(p: QPainter) -> None:
    p.drawLine(QPointF(2.5, 5.5), QPointF(13, 5.5))
    p.drawPolyline([QPointF(10.5, 3), QPointF(13, 5.5), QPointF(10.5, 8)])
    p.drawLine(QPointF(13.5, 10.5), QPointF(3, 10.5))
    p.drawPolyline([QPointF(5.5, 8), QPointF(3, 10.5), QPointF(5.5, 13)])


def _quit(p: QPainter) -> None:
    p.drawArc(QRectF(2.5, 3.5, 11, 11), 120 * 16, 300 * 16)
    p.drawLine(QPointF(8, 1.8), QPointF(8, 8))


Drawing = Callable[[QPainter], None]
DRAWINGS: dict[str, Drawing] = {
    "run": _play, "create": _plus, "upload": _upload, "refresh": _refresh, "jobs": _list,
    "schedule": _clock, "history": _history, "metrics": _chart, "secrets": _key,
    "debug": _bug, "edit": _pencil, "delete": _trash, "browser": _globe, "search": _search,
    "ad-hoc": _file_run, "versions": _versions, "palette": _command, "switch": _swap,
    "quit": _quit,
}

# The sidebar's pages, by their navigation name.
PAGE_ICONS = {"Manage": "jobs", "Scheduler": "schedule", "History": "history",
              "Metrics": "metrics", "Secrets": "secrets"}


def ink() -> QColor:
    """The colour icons are drawn in: the palette's text, a little softened."""
    app = QGuiApplication.instance()
    palette = app.palette() if isinstance(app, QGuiApplication) else QPalette()
    colour = QColor(palette.color(QPalette.ColorRole.WindowText))
    colour.setAlphaF(0.85)
    return colour


def _pixmap(draw: Drawing, size: int, colour: QColor) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.scale(size / 16, size / 16)
    pen = QPen(colour, 1.4 if size <= 16 else max(1.2, 22 / size))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    draw(painter)
    painter.end()
    return pixmap


def icon(name: str) -> QIcon:
    """The named icon in the current palette's colours (a null icon for an unknown
    name, so a typo shows no picture rather than failing)."""
    draw = DRAWINGS.get(name)
    if draw is None:
        return QIcon()
    normal, disabled = ink(), ink()
    disabled.setAlphaF(0.35)
    result = QIcon()
    for size in SIZES:
        result.addPixmap(_pixmap(draw, size, normal), QIcon.Mode.Normal)
        result.addPixmap(_pixmap(draw, size, disabled), QIcon.Mode.Disabled)
    return result
