"""Live attach from the debugger window, with a real headless Chromium making the
requests (tests/hub/browser.py): the window opens waiting, *Open page* hands the
tagged URL to the opener, each request arrives in the list and parks until the
window steps or continues it, the browser gets its answer, the first-line switch
lets requests run on to breakpoints, and closing the window detaches — stopping a
request parked at that moment.

Playwright's sync API blocks its thread while the browser waits for the hub, and
the hub waits for the window, so the browser runs on a thread of its own and the
test's thread keeps the Qt event loop turning with ``qtbot.wait*``."""

from __future__ import annotations

import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page
from pytestqt.exceptions import TimeoutError as QtWaitTimeout
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from console_app.client.connection import HubConnection
from console_app.debugger import DebuggerWindow
from console_app.debugger.state import Phase
from console_app.session import HubSession
from console_app.tasks import TaskManager
from tests.console.conftest import OWNER_PASSWORD, ConsoleHub
from tests.hub.browser import chromium, fresh_context
from tests.hub.test_browser_signin import sign_in
from tests.hub.test_debug_attach import PAGE as ATTACH_PAGE

WAIT_MS = 20_000
# The hub's own attach test page, under each test's job name.
PAGE = ATTACH_PAGE.replace("twostep", "{NAME}")

Job = Callable[[Page], Any]


class BrowserThread:
    """One signed-in Chromium tab on its own thread, doing what it is given."""

    def __init__(self, hub: ConsoleHub) -> None:
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._results: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._thread = threading.Thread(target=self._run, args=(hub,), daemon=True)
        self._thread.start()

    def _run(self, hub: ConsoleHub) -> None:
        try:
            with chromium() as browser, fresh_context(browser) as context:
                page = context.new_page()
                self._results.put((True, sign_in(page, hub.process, "owner", OWNER_PASSWORD)))
                while (job := self._jobs.get()) is not None:
                    try:
                        self._results.put((True, job(page)))
                    except Exception as exc:  # handed to the test's thread
                        self._results.put((False, exc))
        except BaseException as exc:  # pytest.fail() in chromium() included
            self._results.put((False, exc))

    def do(self, job: Job) -> None:
        self._jobs.put(job)

    def result(self, qtbot: QtBot) -> Any:
        qtbot.waitUntil(lambda: not self._results.empty(), timeout=WAIT_MS)
        ok, value = self._results.get()
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(30)


@pytest.fixture
def tab(console_hub: ConsoleHub, qtbot: QtBot) -> Iterator[BrowserThread]:
    browser = BrowserThread(console_hub)
    assert browser.result(qtbot) in (200, 404)  # signed in as the owner
    yield browser
    browser.close()


@pytest.fixture
def live_window(qtbot: QtBot, connection: HubConnection,
                tasks: TaskManager) -> Iterator[tuple[DebuggerWindow, list[str]]]:
    name = f"live_{uuid.uuid4().hex[:8]}"
    connection.post("/api/webjobs/save", json={"name": name,
                                               "code": PAGE.replace("{NAME}", name)})
    opened: list[str] = []
    window = DebuggerWindow(HubSession(connection, tasks), name, {}, live=True,
                            opener=opened.append)
    qtbot.addWidget(window)
    window.show()
    yield window, opened
    window.close()
    qtbot.waitUntil(lambda: window.closed_cleanly, timeout=WAIT_MS)


def wait_started(qtbot: QtBot, window: DebuggerWindow, hub: ConsoleHub) -> None:
    """Until the live session is attached, or it failed: then the test says why (the
    window's banner) instead of only that a signal never came."""
    seen: list[str] = []
    window.sig_started.connect(lambda _sid: seen.append("started"))
    window.sig_error.connect(lambda code: seen.append(f"error {code}"))
    # A session starts in well under a second; the bound is for a machine the rest of
    # the suite keeps busy (a bundle build beside it takes both cores for a while).
    try:
        qtbot.waitUntil(lambda: bool(seen), timeout=3 * WAIT_MS)
    except QtWaitTimeout:  # once seen on a CI run: say where it stood
        pytest.fail(f"no answer to the attach: {stalled_attach(window, hub)}")
    assert seen[0] == "started", f"{seen[0]}: {window.banner.text()}"


def stalled_attach(window: DebuggerWindow, hub: ConsoleHub) -> str:
    """What the console's tasks, the hub and its log say of an attach with no answer."""
    try:
        answer = str(httpx.get(f"{hub.url}/api/webjobs/healthz", timeout=5).status_code)
    except httpx.HTTPError as err:
        answer = type(err).__name__
    tasks = window.session.tasks
    return (f"tasks pending {len(tasks._tasks)}, reports {len(tasks._reports)}; "
            f"hub healthz {answer}; hub log tail:\n{hub.process.log_text()[-3000:]}")


def goto(url: str) -> Job:
    def job(page: Page) -> tuple[int, str]:
        answer = page.goto(url)
        assert answer is not None
        return answer.status, page.content()
    return job


def submit(page: Page) -> str:
    page.click("#go")
    page.wait_for_selector("#done")
    return page.inner_text("#done")


def test_live_session_drives_the_browser(qtbot: QtBot, tab: BrowserThread,
                                         live_window: tuple[DebuggerWindow, list[str]],
                                         qtmodeltester: ModelTester,
                                         console_hub: ConsoleHub) -> None:
    window, opened = live_window
    wait_started(qtbot, window, console_hub)
    assert window.state.phase == Phase.WAITING and "Go" in window.source_view.text()
    window.open_page()
    assert opened == [window.page_url] and "?_debug=dbg_" in window.page_url

    with qtbot.waitSignals([window.sig_request, window.sig_paused], timeout=WAIT_MS):
        tab.do(goto(opened[0]))  # the landing GET parks at its first line
    assert window.state.line == 5 and window.requests_model.index(0, 2).data() == "waiting…"
    with qtbot.waitSignal(window.sig_paused, timeout=WAIT_MS) as stepped:
        window.step()
    assert stepped.args == [9]
    with qtbot.waitSignal(window.sig_answered, timeout=WAIT_MS) as answered:
        window.resume()
    assert answered.args == [200]
    status, html = tab.result(qtbot)
    assert status == 200 and 'id="go"' in html

    # Only at breakpoints: the POST runs on to line 6, the redirect does not stop.
    window.pause_first_switch.setChecked(False)
    window.toggle_breakpoint(6)
    with qtbot.waitSignal(window.sig_paused, timeout=WAIT_MS) as paused:
        tab.do(submit)
    assert paused.args == [6] and window.state.reason == "breakpoint"  # not "step"
    with qtbot.waitSignal(window.sig_answered, timeout=WAIT_MS) as answered:
        window.resume()
    assert answered.args == [302]
    assert tab.result(qtbot) == "Hello ann"
    model = window.requests_model
    qtbot.waitUntil(lambda: model.rowCount() == 3 and model.index(2, 2).data() == "200",
                    timeout=WAIT_MS)
    assert [model.index(r, 0).data() for r in range(3)] == ["GET", "POST", "GET"]
    assert [model.index(r, 2).data() for r in range(3)] == ["200", "302", "200"]
    qtmodeltester.check(model)

    # Closing while a request is parked detaches: that request is stopped, and the
    # tab's next request runs normally.
    window.pause_first_switch.setChecked(True)
    with qtbot.waitSignal(window.sig_paused, timeout=WAIT_MS):
        tab.do(goto(opened[0]))
    with qtbot.waitSignal(window.sig_closed, timeout=WAIT_MS):
        window.close()
    status, _html = tab.result(qtbot)
    assert status == 500
    tab.do(goto(opened[0]))
    status, html = tab.result(qtbot)
    assert status == 200 and 'id="go"' in html
