"""The HTTP client and the background task helper, against a real hub."""

from __future__ import annotations

import threading

import pytest
from pytestqt.qtbot import QtBot

from console_app.client.connection import CancelToken, HubConnection
from console_app.client.errors import HubUnreachable
from console_app.tasks import Latest, TaskManager
from shared.errors import Forbidden, NotFound, NotSignedIn
from shared.ndjson import LogLine, MetaData, Payload
from tests.console.conftest import ConsoleHub
from tests.hub.conftest import free_port


def test_json_call_and_failures_as_classes(console_hub: ConsoleHub,
                                           connection: HubConnection) -> None:
    assert connection.get("/api/webjobs/health")["ok"] is True
    with pytest.raises(NotFound):
        connection.get("/api/webjobs/no_such_job/code")
    with HubConnection(console_hub.url, "wrong-token") as bad, pytest.raises(NotSignedIn):
        bad.get("/api/webjobs/available")
    with HubConnection(console_hub.url, console_hub.user_token) as user, \
            pytest.raises(Forbidden):
        user.get("/api/webjobs/history")


def test_unreachable_hub_is_one_clear_error() -> None:
    with HubConnection(f"http://127.0.0.1:{free_port()}") as gone, \
            pytest.raises(HubUnreachable) as caught:
        gone.get("/api/webjobs/health")
    assert caught.value.code == "CONSOLE-001"
    assert "Traceback" not in caught.value.message


def test_stream_yields_events_in_order(connection: HubConnection) -> None:
    events = list(connection.stream("POST", "/api/webjobs/report?enableLogger=1",
                                       CancelToken(), json={}))
    logs = [e.message for e in events if isinstance(e, LogLine)]
    assert logs == ["counting", "half way"]
    assert isinstance(events[-2], MetaData) and isinstance(events[-1], Payload)


def test_cancel_closes_a_silent_stream(connection: HubConnection) -> None:
    cancel = CancelToken()
    started = threading.Event()
    seen: list[object] = []

    def read() -> None:
        for event in connection.stream("POST", "/api/webjobs/public_slow?enableLogger=1", cancel,
                                       json={"ms": 20000}):
            seen.append(event)
            started.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert started.wait(15)  # 'started' arrives, then the job sleeps
    cancel.cancel()
    reader.join(10)
    assert not reader.is_alive()
    assert [e.message for e in seen if isinstance(e, LogLine)] == ["started"]


def test_task_results_arrive_on_the_gui_thread(qtbot: QtBot, tasks: TaskManager) -> None:
    gui = threading.get_ident()
    got: list[tuple[object, int]] = []
    tasks.run(lambda: threading.get_ident(), lambda r: got.append((r, threading.get_ident())))
    qtbot.waitUntil(lambda: bool(got))
    worker, where = got[0]
    assert worker != gui and where == gui


def test_task_failure_goes_to_on_error(qtbot: QtBot, tasks: TaskManager,
                                        connection: HubConnection) -> None:
    errors: list[Exception] = []
    tasks.run(lambda: connection.get("/api/webjobs/nope/code"), on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors))
    assert isinstance(errors[0], NotFound)


def test_latest_drops_the_outcomes_of_superseded_calls() -> None:
    latest, seen = Latest(), []
    first = latest.start()
    second = latest.start()
    first.wrap(seen.append)("old")          # answered late: dropped
    second.wrap(seen.append)("new")
    assert seen == ["new"] and second.current and not first.current
    latest.current().wrap(seen.append)("follow-up")
    latest.supersede()
    second.wrap(seen.append)("after supersede")
    assert seen == ["new", "follow-up"] and latest.started == 3


def test_stream_items_then_done_and_cancel_silences(qtbot: QtBot, tasks: TaskManager) -> None:
    items: list[int] = []
    done: list[bool] = []
    tasks.stream(lambda _c: iter([1, 2, 3]), items.append, lambda: done.append(True))
    qtbot.waitUntil(lambda: bool(done))
    assert items == [1, 2, 3]
    gate = threading.Event()

    def blocked(cancel: CancelToken) -> object:
        yield 1
        gate.wait(5)
        yield 2

    later: list[int] = []
    token = tasks.stream(blocked, later.append, lambda: later.append(-1))
    qtbot.waitUntil(lambda: later == [1])
    token.cancel()
    gate.set()
    with qtbot.waitSignal(tasks.sig_busy_changed, timeout=5000):
        pass
    assert later == [1]


def test_qt_objects_given_to_tasks_die_on_the_gui_thread(qtbot: QtBot,
                                                          tasks: TaskManager) -> None:
    # A Qt object dropped last by a worker thread dies there and can crash the process:
    # whatever a task's functions hold must be released by the GUI thread.
    from PySide6.QtCore import QObject

    gui = threading.get_ident()
    died_on: list[int] = []
    done: list[int] = []
    for n in range(60):
        holder = QObject()
        holder.destroyed.connect(lambda *_: died_on.append(threading.get_ident()))
        if n % 2:
            tasks.run(lambda h=holder: h.objectName(), lambda _r, h=holder: done.append(1))
        else:
            tasks.stream(lambda _c, h=holder: iter([h.objectName()]),
                         lambda _i, h=holder: None, lambda h=holder: done.append(1))
        del holder
    qtbot.waitUntil(lambda: len(done) == 60, timeout=10000)
    qtbot.waitUntil(lambda: len(died_on) == 60, timeout=10000)
    assert set(died_on) == {gui}
