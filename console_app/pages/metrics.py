"""The Metrics page: cards for the hub's totals and workers, and two hourly charts.

Figures come from ``/metrics`` (totals and the last 24 hours) and ``/health``
(workers). The charts are painted by
:mod:`console_app.history.chart` (why not QtCharts: see there)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from console_app.client.connection import HubConnection
from console_app.client.history import Health, MetricsSnapshot, get_health, get_metrics
from console_app.history.chart import HourlyChart
from console_app.history.metrics_data import Card, HourlySeries, cards, hourly_series
from console_app.session import HubSession
from console_app.tasks import Latest
from console_app.widgets import MessageBar, RefreshWhileShown

__all__ = ["MetricsPage"]

REFRESH_MS = 30_000


@dataclass(frozen=True)
class Figures:
    snapshot: MetricsSnapshot
    health: Health | None
    series: HourlySeries


def fetch_figures(conn: HubConnection, now: float | None = None) -> Figures:
    """Everything the page shows, in one background call."""
    moment = time.time() if now is None else now
    snapshot = get_metrics(conn)
    return Figures(snapshot, Health.of(get_health(conn)), hourly_series(snapshot, moment))


class CardWidget(QFrame):
    def __init__(self, card: Card, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.title_label = QLabel(card.title)
        self.value_label = QLabel(card.value)
        font = QFont(self.value_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.8)
        font.setBold(True)
        self.value_label.setFont(font)
        self.detail_label = QLabel(card.detail)
        layout = QVBoxLayout(self)
        for label in (self.title_label, self.value_label, self.detail_label):
            layout.addWidget(label)

    def set_card(self, card: Card) -> None:
        self.title_label.setText(card.title)
        self.value_label.setText(card.value)
        self.detail_label.setText(card.detail)


class MetricsPage(QWidget):
    sig_loaded = Signal()

    def __init__(self, session: HubSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.figures: Figures | None = None
        self.cards: dict[str, CardWidget] = {}
        self._loads = Latest()
        self._refresher = RefreshWhileShown(self, REFRESH_MS, self.refresh)
        self.message = MessageBar()
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.stores_label = QLabel()
        self.runs_chart = HourlyChart("bars", "Runs per hour, last 24 h (failed in red)")
        self.p95_chart = HourlyChart("line", "p95 runtime per hour, last 24 h")
        self._card_grid = QGridLayout()
        self._lay_out()

    def _lay_out(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.stores_label, 1)
        top.addWidget(self.refresh_button)
        charts = QHBoxLayout()
        charts.addWidget(self.runs_chart)
        charts.addWidget(self.p95_chart)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addLayout(top)
        layout.addLayout(self._card_grid)
        layout.addLayout(charts, 1)

    def refresh(self) -> None:
        call, conn = self._loads.start(), self.session.conn
        self.session.tasks.run(lambda: fetch_figures(conn), call.wrap(self._loaded),
                               call.wrap(self._failed))

    def _failed(self, exc: Exception) -> None:
        self.message.show_error(exc, "Loading metrics")

    def _loaded(self, figures: Figures) -> None:
        self.message.clear_message()
        self.figures = figures
        for number, card in enumerate(cards(figures.snapshot, figures.health)):
            widget = self.cards.get(card.key)
            if widget is None:
                widget = self.cards[card.key] = CardWidget(card)
                self._card_grid.addWidget(widget, number // 3, number % 3)
            widget.set_card(card)
        stores = figures.snapshot.stores
        self.stores_label.setText(f"Node {figures.snapshot.node} · jobs in {stores.jobs}"
                                  f" · history in {stores.history.kind}")
        self.runs_chart.set_series(figures.series)
        self.p95_chart.set_series(figures.series)
        self.sig_loaded.emit()
