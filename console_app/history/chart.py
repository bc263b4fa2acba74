"""Two small hourly charts for the Metrics page, drawn with QPainter.

Why not QtCharts or pyqtgraph: QtCharts lives in the large PySide6-Addons wheel
(hundreds of MB, and it must match the Essentials 6.11.x pin the Scintilla binding
needs); pyqtgraph would pull in numpy. Twenty-four bars and one line need neither:
this widget paints them itself, follows the palette (light and dark themes), and
renders offscreen, so tests and ``console_app.screenshots`` can ``grab()`` it.

:class:`HourlyChart` draws either ``"bars"`` (runs per hour, the failed part of each
bar in red) or ``"line"`` (p95 runtime per hour; hours without runs leave a gap)."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QWidget

from console_app.history.fmt import duration
from console_app.history.metrics_data import HOURS, HourlySeries

__all__ = ["HourlyChart"]

RUNS = QColor("#5c7cfa")
FAILURES = QColor("#e03131")
P95 = QColor("#f08c00")
MARGIN = 8


def nice_top(value: float) -> float:
    """A round axis maximum at or above ``value`` (1, 2, 5 × a power of ten)."""
    if value <= 0:
        return 1.0
    power = 10 ** len(str(int(value))) / 10
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return float(step * power)
    return float(value)


class HourlyChart(QWidget):
    def __init__(self, kind: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if kind not in ("bars", "line"):
            raise ValueError(f"kind must be 'bars' or 'line', not {kind!r}")
        self.kind = kind
        self.title = title
        self.series: HourlySeries | None = None
        self.setMinimumSize(320, 160)

    def sizeHint(self) -> QSize:
        return QSize(520, 200)

    def set_series(self, series: HourlySeries) -> None:
        self.series = series
        self.update()

    # -- painting ----------------------------------------------------------------------

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        text = palette.color(QPalette.ColorRole.Text)
        metrics = QFontMetrics(self.font())
        painter.setPen(text)
        painter.drawText(MARGIN, MARGIN + metrics.ascent(), self.title)
        top_value = self._top()
        label = self._axis_label(top_value)
        left = MARGIN + metrics.horizontalAdvance(label) + 6
        plot = QRectF(left, MARGIN + metrics.height() + 6,
                      self.width() - left - MARGIN,
                      self.height() - 2 * MARGIN - 2 * metrics.height() - 10)
        if plot.width() < 10 or plot.height() < 10:
            return
        self._axes(painter, plot, label, text, metrics)
        if self.series is None:
            painter.drawText(plot, Qt.AlignmentFlag.AlignCenter, "No figures yet")
        elif self.kind == "bars":
            self._bars(painter, plot, top_value)
        else:
            self._line(painter, plot, top_value)
        painter.end()

    def _top(self) -> float:
        if self.series is None:
            return 1.0
        if self.kind == "bars":
            return nice_top(max(self.series.runs, default=0))
        return nice_top(max((v for v in self.series.p95_ms if v is not None), default=0))

    def _axis_label(self, top: float) -> str:
        return str(int(top)) if self.kind == "bars" else duration(int(top))

    def _axes(self, painter: QPainter, plot: QRectF, label: str, text: QColor,
              metrics: QFontMetrics) -> None:
        grid = QColor(text)
        grid.setAlpha(60)
        painter.setPen(QPen(grid, 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.drawLine(plot.topLeft(), QPointF(plot.right(), plot.top()))
        painter.setPen(text)
        painter.drawText(QPointF(MARGIN, plot.top() + metrics.ascent() / 2), label)
        painter.drawText(QPointF(MARGIN, plot.bottom()), "0")
        if self.series is None:
            return
        step = plot.width() / HOURS
        for slot in range(0, HOURS, 6):
            hour = (self.series.first_hour + slot) * 3600
            words = dt.datetime.fromtimestamp(hour).astimezone().strftime("%H:00")
            painter.drawText(QPointF(plot.left() + slot * step,
                                     plot.bottom() + metrics.height()), words)

    def _bars(self, painter: QPainter, plot: QRectF, top: float) -> None:
        assert self.series is not None
        step = plot.width() / HOURS
        width = max(1.0, step * 0.7)
        painter.setPen(Qt.PenStyle.NoPen)
        for slot in range(HOURS):
            runs = self.series.runs[slot] if slot < len(self.series.runs) else 0
            failed = min(runs, self.series.failures[slot]) if runs else 0
            x = plot.left() + slot * step + (step - width) / 2
            height = plot.height() * runs / top
            painter.fillRect(QRectF(x, plot.bottom() - height, width, height), RUNS)
            failed_height = plot.height() * failed / top
            painter.fillRect(QRectF(x, plot.bottom() - failed_height, width, failed_height),
                             FAILURES)

    def _line(self, painter: QPainter, plot: QRectF, top: float) -> None:
        assert self.series is not None
        step = plot.width() / HOURS
        path = QPainterPath()
        pen_down = False
        painter.setPen(QPen(P95, 2))
        for slot, value in enumerate(self.series.p95_ms):
            if value is None:
                pen_down = False  # an hour without runs breaks the line
                continue
            point = QPointF(plot.left() + slot * step + step / 2,
                            plot.bottom() - plot.height() * value / top)
            if pen_down:
                path.lineTo(point)
            else:
                path.moveTo(point)
            painter.drawEllipse(point, 2.5, 2.5)
            pen_down = True
        painter.drawPath(path)
