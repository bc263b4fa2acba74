"""Browser sign-in in a real headless Chromium against a real hub: the login form,
the session cookie's flags, wrong passwords, a USER-class account on an owner-only
job, and signing out from the hub's own page.

One Chromium serves the whole file; every test has its own hub (``own_hub``, from
``start_hub``) and its own cookie jar."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.hub.browser import chromium, fresh_context
from tests.hub.conftest import HubProcess

JOB = "mt_owner_only"
JOB_PATH = f"/api/webjobs/{JOB}"
JOBS = {JOB: "/*\nAccess: owner\n*/\nreturn { who: request.caller }"}
PASSWORD = "correct horse battery staple"
COOKIE = "webhub_session"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    with fresh_context(browser) as c:
        yield c


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


@pytest.fixture
def own_hub(start_hub: Callable[..., HubProcess]) -> HubProcess:
    return start_hub(jobs=JOBS)


def add_user(hub: HubProcess, name: str, user_class: str) -> None:
    """Through the real CLI, against the hub's own WEBHUB_HOME (``HubProcess.add_user``)."""
    token = hub.add_user(name, user_class, password=PASSWORD)
    assert token and len(token.splitlines()) == 1, token  # one API token, nothing else


def shown_json(page: Page) -> Any:
    """The JSON document the browser is showing (Chromium wraps it in a <pre>)."""
    return json.loads(page.locator("pre").first.inner_text())


def open_json(page: Page, url: str) -> tuple[int, Any]:
    response = page.goto(url)
    assert response is not None, url
    return response.status, shown_json(page)


def sign_in(page: Page, hub: HubProcess, name: str, password: str,
            next_path: str = JOB_PATH) -> int:
    """Fill in and submit the real login form; the status of the page it lands on."""
    page.goto(f"{hub.url}/login?next={next_path}")
    assert page.locator("input[name=next]").get_attribute("value") == next_path
    page.locator("input[name=name]").fill(name)
    page.locator("input[name=password]").fill(password)
    with page.expect_navigation() as landed:
        page.locator("form button[type=submit]").click()
    response = landed.value
    assert response is not None
    return response.status


def session_cookies(context: BrowserContext, hub: HubProcess) -> list[Any]:
    return [c for c in context.cookies(hub.url) if c["name"] == COOKIE]


def test_owner_only_job_is_401_before_signing_in(page: Page, own_hub: HubProcess) -> None:
    status, body = open_json(page, own_hub.url + JOB_PATH)
    assert status == 401, body
    assert body["success"] is False and body["code"] == "AUTH-SESSION-001", body


def test_form_sign_in_lands_on_the_job_as_the_owner(page: Page, own_hub: HubProcess) -> None:
    add_user(own_hub, "olive", "OWNER")
    assert sign_in(page, own_hub, "olive", PASSWORD) == 200
    assert page.url == own_hub.url + JOB_PATH
    who = shown_json(page)["who"]
    assert {k: who[k] for k in ("kind", "name", "userClass")} == {
        "kind": "user", "name": "olive", "userClass": "OWNER"}, who
    status, me = open_json(page, f"{own_hub.url}/api/auth/me")
    assert status == 200 and me["name"] == "olive" and me["userClass"] == "OWNER", me


def test_session_cookie_is_httponly_lax_and_hidden_from_scripts(
        context: BrowserContext, page: Page, own_hub: HubProcess) -> None:
    add_user(own_hub, "olive", "OWNER")
    assert sign_in(page, own_hub, "olive", PASSWORD) == 200
    [cookie] = session_cookies(context, own_hub)
    assert cookie["httpOnly"] is True, cookie
    assert cookie["sameSite"] == "Lax", cookie
    assert cookie["path"] == "/", cookie
    assert cookie["value"], cookie
    page.goto(f"{own_hub.url}/login")  # the hub's own HTML page, a script's view of it
    seen_by_script = page.evaluate("document.cookie")
    assert COOKIE not in seen_by_script and cookie["value"] not in seen_by_script


def test_wrong_password_lands_back_on_login_with_a_note(
        context: BrowserContext, page: Page, own_hub: HubProcess) -> None:
    add_user(own_hub, "olive", "OWNER")
    assert sign_in(page, own_hub, "olive", "not the password") == 200
    assert page.url.startswith(f"{own_hub.url}/login?"), page.url
    assert "note=failed" in page.url, page.url
    note = page.locator("#note")
    note.wait_for(state="visible")
    assert "Wrong name or password" in note.inner_text()
    assert page.locator("input[name=next]").get_attribute("value") == JOB_PATH
    assert session_cookies(context, own_hub) == []
    status, body = open_json(page, own_hub.url + JOB_PATH)
    assert status == 401 and body["code"] == "AUTH-SESSION-001", body


def test_user_class_account_is_403_on_the_owner_only_job(page: Page, own_hub: HubProcess) -> None:
    add_user(own_hub, "ursula", "USER")
    assert sign_in(page, own_hub, "ursula", PASSWORD) == 403
    assert page.url == own_hub.url + JOB_PATH
    body = shown_json(page)
    assert body["success"] is False and body["code"] == "SYS-403", body
    status, me = open_json(page, f"{own_hub.url}/api/auth/me")
    assert status == 200 and me["kind"] == "user" and me["userClass"] == "USER", me


def test_logout_from_the_hub_page_signs_out(
        context: BrowserContext, page: Page, own_hub: HubProcess) -> None:
    add_user(own_hub, "olive", "OWNER")
    assert sign_in(page, own_hub, "olive", PASSWORD) == 200
    [old_cookie] = session_cookies(context, own_hub)
    # A page of the hub's own origin. Not /login: its CSP (default-src 'none') lets
    # no script fetch anything, which is right for a page that runs no scripts.
    status, me = open_json(page, f"{own_hub.url}/api/auth/me")
    assert status == 200 and me["name"] == "olive", me
    status, text = page.evaluate(
        "fetch('/api/auth/logout', {method: 'POST'})"
        ".then(async r => [r.status, await r.text()])")
    assert status == 200, text
    assert json.loads(text)["success"] is True, text
    assert session_cookies(context, own_hub) == []
    status, body = open_json(page, own_hub.url + JOB_PATH)
    assert status == 401 and body["code"] == "AUTH-SESSION-001", body
    # The hub closed the session itself: the old cookie, put back, opens nothing.
    context.add_cookies([old_cookie])
    status, body = open_json(page, own_hub.url + JOB_PATH)
    assert status == 401 and body["code"] == "AUTH-SESSION-001", body


def test_a_hostile_page_cannot_sign_the_browser_in(
        context: BrowserContext, page: Page, own_hub: HubProcess) -> None:
    """Login CSRF: another site's page posts the attacker's own name and password to the
    hub's sign-in route. Chromium says the post is cross-site; nothing is signed in."""
    add_user(own_hub, "mallory", "OWNER")
    hostile = (f'<form method="post" action="{own_hub.url}/api/auth/login">'
               '<input name="name" value="mallory">'
               f'<input name="password" value="{PASSWORD}"></form>'
               '<script>document.forms[0].submit()</script>')
    context.route("http://attacker.test/**", lambda route: route.fulfill(
        status=200, content_type="text/html", body=hostile))
    with page.expect_response(f"{own_hub.url}/api/auth/login") as posted:
        page.goto("http://attacker.test/")
    assert posted.value.status == 403, posted.value.headers
    page.wait_for_url(f"{own_hub.url}/api/auth/login")
    assert shown_json(page)["code"] == "SYS-403"
    assert session_cookies(context, own_hub) == []
