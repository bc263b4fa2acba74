"""Live attach in a real headless Chromium: the debugger drives a two-step page job
through its landing GET, a form POST and a redirect, each request parked at its
first line and resumed from the test; a visitor's requests are untouched, and after
detaching the tab runs normally."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.hub.browser import chromium, fresh_context
from tests.hub.conftest import HubProcess, launch_hub
from tests.hub.test_browser_signin import sign_in

PASSWORD = "correct horse battery staple"
PAGE = """/*
Mode: page
Access: public
*/
if (request.method === 'POST') {
  const who = params.name
  return response.redirect('/api/webjobs/twostep?step=3&who=' + encodeURIComponent(who))
}
if (params.step === '3') {
  const shown = params.who
  return response.html('<p id="done">Hello ' + shown + '</p>')
}
const note = 'landing'
return response.html('<form method="post" action="/api/webjobs/twostep">'
  + '<input name="name" value="ann"><button id="go">Go</button></form>')"""


class Driver:
    """Reads a session's event stream in a thread and answers every pause with
    ``continue``, keeping what it saw."""

    def __init__(self, hub: HubProcess, session: str, token: str) -> None:
        self.hub, self.session, self.token = hub, session, token
        self.seen: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        with contextlib.suppress(httpx.HTTPError):  # the hub stops under the stream
            self._read()

    def _read(self) -> None:
        auth = {"Authorization": f"Bearer {self.token}"}
        with httpx.Client(base_url=self.hub.url, timeout=60, headers=auth) as client, \
                client.stream("GET", f"/api/webjobs/debug-session/{self.session}/events") as s:
            for line in s.iter_lines():
                if not line.strip():
                    continue
                event = json.loads(line)
                self.seen.put(event)
                if event.get("type") == "pause":
                    client.post(f"/api/webjobs/debug-session/{self.session}/command",
                                json={"command": "continue"})

    def take(self, count: int) -> list[dict[str, Any]]:
        return [self.seen.get(timeout=20) for _ in range(count)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


@pytest.fixture
def hub(tmp_path: Any) -> Iterator[HubProcess]:
    process = launch_hub(tmp_path, jobs={"twostep": PAGE})
    yield process
    process.stop()


def test_attach_drives_get_post_and_redirect(browser: Browser, hub: HubProcess) -> None:
    token = hub.add_user("olive", "OWNER", password=PASSWORD)
    with httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {token}"}) as api:
        attached = api.post("/api/webjobs/debug/twostep/attach", json={}).json()
    driver = Driver(hub, attached["session"], token)
    with fresh_context(browser) as context:
        page: Page = context.new_page()
        assert sign_in(page, hub, "olive", PASSWORD) in (200, 404)
        page.goto(hub.url + attached["url"])
        page.click("#go")
        page.wait_for_selector("#done")
        assert page.inner_text("#done") == "Hello ann"
        kinds = [(e["type"], e.get("method") or e.get("line") or e.get("status"))
                 for e in _until_answers(driver, 3)]
    requests = [k for k in kinds if k[0] == "request"]
    answers = [k for k in kinds if k[0] == "answer"]
    assert [m for _, m in requests] == ["GET", "POST", "GET"]
    assert [s for _, s in answers] == [200, 302, 200]
    # Each request parks before its first line, then runs on when continued.
    assert [k for k in kinds if k[0] == "pause"] == [("pause", 5)] * 3

    with fresh_context(browser) as visitor:  # not the owner: the tag means nothing
        other = visitor.new_page()
        other.goto(hub.url + attached["url"])
        assert other.locator("#go").count() == 1
    assert driver.seen.empty()

    with httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {token}"}) as api:
        api.post(f"/api/webjobs/debug-session/{attached['session']}/command",
                 json={"command": "detach"})
    with fresh_context(browser) as again:
        tab = again.new_page()
        sign_in(tab, hub, "olive", PASSWORD)
        tab.goto(hub.url + attached["url"])  # detached: runs normally, nothing parks
        assert tab.locator("#go").count() == 1


def _until_answers(driver: Driver, answers: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    while sum(e.get("type") == "answer" for e in seen) < answers:
        seen.extend(driver.take(1))
    return seen
