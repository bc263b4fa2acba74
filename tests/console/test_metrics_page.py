"""The Metrics page: figures worked out without Qt, cards against the real hub's
/metrics, and the painted charts."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.client.history import Health, MetricsSnapshot
from console_app.history.chart import FAILURES, P95, RUNS, HourlyChart, nice_top
from console_app.history.metrics_data import cards, hourly_series
from console_app.pages.metrics import MetricsPage
from console_app.session import HubSession
from console_app.tasks import TaskManager
from shared.errors import JobFailed
from shared.wire import decode
from shared.wire.history import Metrics

API = "/api/webjobs"
JSON = {"Accept": "application/json"}
NOW = 1_800_000_000.0 + 1800  # half past an hour


def snapshot(**changes: object) -> MetricsSnapshot:
    wire = {"total": 10, "successes": 7, "failures": 3, "successRate": 0.7,
            "runtime": {"p50": 40, "p95": 1500, "max": 3000}, "failuresToday": 2,
            "runsPerHour": [0] * 23 + [4], "failuresPerHour": [0] * 23 + [1],
            "p95PerHour": [None] * 23 + [900], "workersRunning": 1, "workersQueued": 0,
            "workersMax": 3, "node": "n1",
            "stores": {"jobs": "files", "history": {"kind": "local", "storeReachable": True,
                                                    "spooled": 0}}, **changes}
    return MetricsSnapshot.of(decode(Metrics, wire, strict=True))


def test_hourly_series_takes_the_hubs_hours() -> None:
    series = hourly_series(snapshot(), NOW)
    assert series.first_hour == int(NOW // 3600) - 23
    assert series.runs[-1] == 4 and series.failures[-1] == 1 and series.p95_ms[-1] == 900
    assert series.p95_ms[0] is None
    short = hourly_series(snapshot(runsPerHour=[1, 2], failuresPerHour=[], p95PerHour=[]), NOW)
    assert len(short.runs) == len(short.failures) == len(short.p95_ms) == 24  # never ragged
    assert short.runs[:3] == (1, 2, 0) and short.p95_ms[0] is None


def test_cards_read_well() -> None:
    shown = {c.key: c for c in cards(snapshot(), Health(True, "n1", 2, 1, 3))}
    assert shown["total"].value == "10" and "7 succeeded · 3 failed" in shown["total"].detail
    assert shown["rate"].value == "70.0 %"
    assert shown["runtime"].value == "40 ms / 1.5 s" and shown["runtime"].detail == "max 3.0 s"
    assert shown["today"].value == "2"
    assert shown["workers"].value == "2 / 1 / 3"  # /health is the fresher figure
    no_runtime = {"p50": None, "p95": None, "max": None}
    empty = {c.key: c for c in cards(snapshot(successRate=None, runtime=no_runtime))}
    assert empty["rate"].value == "—" and empty["runtime"].value == "— / —"


def colours_in(image: QImage) -> set[str]:
    return {QColor(image.pixel(x, y)).name() for x in range(0, image.width(), 2)
            for y in range(0, image.height(), 2)}


@pytest.mark.parametrize(("kind", "colour"), [("bars", RUNS), ("line", P95)])
def test_chart_paints_offscreen(qtbot: QtBot, kind: str, colour: QColor) -> None:
    chart = HourlyChart(kind, "title")
    qtbot.addWidget(chart)
    chart.resize(480, 200)
    empty = chart.grab().toImage()
    assert not empty.isNull() and colour.name() not in colours_in(empty)
    hours = range(24)
    chart.set_series(hourly_series(snapshot(
        runsPerHour=[n % 5 for n in hours], failuresPerHour=[n % 2 for n in hours],
        p95PerHour=[None if n % 4 == 0 else 100 * n for n in hours]), NOW))
    image = chart.grab().toImage()
    assert image.width() == 480 and colour.name() in colours_in(image)
    if kind == "bars":
        assert FAILURES.name() in colours_in(image)
    assert nice_top(7) == 10 and nice_top(130) == 200 and nice_top(0) == 1


@pytest.fixture
def page(qtbot: QtBot, connection: HubConnection, tasks: TaskManager) -> Iterator[MetricsPage]:
    widget = MetricsPage(HubSession(connection, tasks))
    qtbot.addWidget(widget)
    yield widget


def test_cards_match_the_hubs_metrics(qtbot: QtBot, page: MetricsPage,
                                      connection: HubConnection) -> None:
    name = f"metrics_{uuid.uuid4().hex[:8]}"
    connection.post(f"{API}/save", json={"name": name, "code":
                                          "if (params.fail) throw new Error('x')\nreturn 1"})
    for fail in (False, False, True):
        with contextlib.suppress(JobFailed):
            connection.call("POST", f"{API}/{name}", json={"fail": fail}, headers=JSON)

    def settled() -> bool:  # history is written in the background
        runs = connection.get(f"{API}/history", job=name)["runs"]
        return len([r for r in runs if r["outcome"] != "running"]) == 3
    qtbot.waitUntil(settled, timeout=10000)
    with qtbot.waitSignal(page.sig_loaded, timeout=15000):
        page.refresh()
    fresh = connection.get(f"{API}/metrics")
    assert page.cards["total"].value_label.text() == str(fresh["total"])
    assert page.cards["today"].value_label.text() == str(fresh["failuresToday"])
    assert page.cards["rate"].value_label.text() == f"{fresh['successRate'] * 100:.1f} %"
    assert page.cards["workers"].value_label.text().endswith(f"/ {fresh['workersMax']}")
    series = page.figures.series  # type: ignore[union-attr]
    assert list(series.runs) == fresh["runsPerHour"]
    assert list(series.failures) == fresh["failuresPerHour"]
    assert sum(series.failures) >= 1 and any(v is not None for v in series.p95_ms)
    assert "test-node" in page.stores_label.text()
    assert not page.runs_chart.grab().isNull()
