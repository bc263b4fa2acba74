"""Page jobs against real hubs: the shipped ``public_deeplink`` demo (a date-of-birth
check, a signed pass to the next step, a choice recorded in the business database)
over HTTP and in a real headless Chromium, and the ``?_console=1`` drawer: there for
an owner's browser session (or everyone with ``WEBJOB_PAGE_CONSOLE=1``), absent and
byte-identical for everyone else.

Two hubs serve the whole file (one plain, one dev server); the demo's expired and
forged passes are made in Python with the hub's own signing key."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from hub.api.answers import PAGE_CSP
from hub.outside.demo_data import seed_if_new
from hub.settings import load_settings
from tests.hub.browser import chromium, fresh_context
from tests.hub.conftest import TEST_SECRET, TOKEN, HubProcess, running_hub

DEMO = "/api/webjobs/public_deeplink"
HTML = {"Accept": "text/html"}
PASSWORD = "correct horse battery staple"
LOGS_PAGE = "/api/webjobs/public_logs_page"
JOBS = {
    # Logs markup and shows the params it saw, so escaping and flag removal show.
    "public_logs_page": "/*\nMode: page\n*/\n"
                        "console.log('<script>alert(1)</script> & more')\n"
                        "console.info('second line')\n"
                        "return response.html('<!doctype html><html><body><pre id=\"seen\">' + "
                        "JSON.stringify(Object.keys(params)).replace(/[<>&]/g, '') + "
                        "'</pre></BODY></html>')",
    "public_fragment": "/*\nMode: page\n*/\nreturn response.html('<p>fragment</p>')",
    "public_data": "console.log('json');\nreturn { ok: true }",
    # Its own CSP forbids inline scripts: the control for the browser's CSP watch.
    "public_strict": "return response.raw('<p id=\"s\">no</p><script>document.getElementById(\"s\")"
                     ".textContent = \"ran\"</script>', {'Content-Type': 'text/html', "
                     "'Content-Security-Policy': \"script-src 'none'\"})",
}


@pytest.fixture(scope="module")
def page_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("pages"), jobs=JOBS) as process:
        process.add_user("olive", "OWNER", password=PASSWORD)
        yield process


@pytest.fixture(scope="module")
def dev_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("dev"), {"WEBJOB_PAGE_CONSOLE": "1"}, JOBS) as process:
        yield process


@pytest.fixture(scope="module")
def owner_session(page_hub: HubProcess) -> Iterator[httpx.Client]:
    """An owner signed in like a browser: the session cookie, and its own origin."""
    with page_hub.client(headers={**HTML, "Origin": page_hub.url}) as c:
        signed = c.post("/api/auth/login", json={"name": "olive", "password": PASSWORD})
        assert signed.status_code == 200, signed.text
        yield c


# ---- the demo flow over HTTP ---------------------------------------------------------------

def interests(hub: HubProcess) -> list[tuple[int, int]]:
    """Read beside the hub, not through db.exec: what the job really wrote."""
    with sqlite3.connect(hub.home / "business.db") as db:
        return list(db.execute("SELECT PersonID, VacancyID FROM VacancyInterest ORDER BY 1, 2"))


def post(client: httpx.Client, path: str = DEMO, **form: str) -> httpx.Response:
    answer = client.post(path, data=form, headers=HTML)
    assert answer.status_code == 200, answer.text
    return answer


def hidden_token(page: str) -> str:
    found = re.search(r'name="token" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


def offered(page: str) -> list[int]:
    return [int(v) for v in re.findall(r'name="vacancy" value="(\d+)"', page)]


def pass_for(hub: HubProcess, payload: dict[str, Any], exp: float) -> str:
    """A pass signed the way sign() does, with the hub's own key."""
    key = load_settings({"WEBHUB_HOME": str(hub.home), "WEBHUB_SYSTEM_TOKEN": TOKEN,
                         "WEBHUB_SECRET": TEST_SECRET}).sign_key
    claim = json.dumps({"p": payload, "exp": int(exp)}).encode()
    body = base64.urlsafe_b64encode(claim).rstrip(b"=").decode()
    mac = hmac.new(base64.b64decode(key), body.encode(), hashlib.sha256).digest()
    return body + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def test_an_older_demo_database_gets_what_the_demo_needs(tmp_path: Path) -> None:
    path = tmp_path / "business.db"
    assert seed_if_new(path) is True
    with sqlite3.connect(path) as db:  # as seeded before the deep-link demo, and edited
        db.execute("DROP TABLE VacancyInterest")
        db.execute("DELETE FROM WebJobTemplate WHERE Name LIKE 'deeplink.%'")
        db.execute("UPDATE WebJobTemplate SET Html = 'mine' WHERE Name = 'page'")
    assert seed_if_new(path) is False
    with sqlite3.connect(path) as db:
        names = {n for (n,) in db.execute("SELECT Name FROM WebJobTemplate")}
        assert {"page", "deeplink.layout", "deeplink.dob", "deeplink.choose"} <= names
        assert db.execute("SELECT Html FROM WebJobTemplate WHERE Name = 'page'").fetchone() == (
            "mine",)
        assert db.execute("SELECT COUNT(*) FROM VacancyInterest").fetchone() == (0,)


def test_landing_asks_for_the_date_of_birth(page_hub: HubProcess) -> None:
    with page_hub.client() as c:
        landing = c.get(DEMO, params={"email": "ann@example.org"}, headers=HTML)
    assert landing.status_code == 200
    assert landing.headers["content-type"] == "text/html; charset=utf-8"
    assert landing.headers["content-security-policy"] == PAGE_CSP
    assert 'id="dob-form"' in landing.text and 'value="ann@example.org"' in landing.text
    assert 'id="notice"' not in landing.text and "{{" not in landing.text


def test_wrong_date_of_birth_and_unknown_email_get_the_same_answer(page_hub: HubProcess) -> None:
    with page_hub.client() as c:
        wrong = post(c, step="dob", email="ann@example.org", dob="1990-04-13")
        unknown = post(c, step="dob", email="nobody@example.org", dob="1990-04-12")
    for answer in (wrong, unknown):
        assert "do not match our records" in answer.text and 'id="dob-form"' in answer.text
        assert 'name="token"' not in answer.text


def test_the_pass_leads_to_a_recorded_choice(page_hub: HubProcess) -> None:
    with page_hub.client() as c:
        chooser = post(c, step="dob", email="ANN@example.org", dob="12/04/1990").text
        assert "Hello Ann Lee." in chooser and 'id="expiry"' in chooser
        token, vacancies = hidden_token(chooser), offered(chooser)
        assert 1 <= len(vacancies) <= 5
        done = post(c, step="choose", token=token, vacancy=str(vacancies[0])).text
        assert "is recorded." in done and 'id="done"' in done
        assert (1, vacancies[0]) in interests(page_hub)
        again = post(c, step="choose", token=token, vacancy=str(vacancies[0])).text
        assert "is recorded (already)." in again
        assert interests(page_hub).count((1, vacancies[0])) == 1
        not_offered = post(c, step="choose", token=token, vacancy="9999").text
        assert "Choose one of the vacancies offered" in not_offered
    assert (1, 9999) not in interests(page_hub)


def test_forged_and_expired_passes_go_back_to_the_start(page_hub: HubProcess) -> None:
    with page_hub.client() as c:
        chooser = post(c, step="dob", email="bo@example.org", dob="1985-11-30").text
        token, vacancy = hidden_token(chooser), offered(chooser)[0]
        body, mac = token.split(".")
        claim = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        claim["p"]["person"] = 1  # someone else's pass, under Bo's signature
        swapped = base64.urlsafe_b64encode(json.dumps(claim).encode()).rstrip(b"=").decode()
        payload = {"for": "deeplink.choose", "person": 2, "offered": [vacancy]}
        passes = {
            "could not be checked": [swapped + "." + mac, body + "." + mac[::-1], "junk", ""],
            "has expired": [pass_for(page_hub, payload, time.time() - 5)],
        }
        for message, tokens in passes.items():
            for bad in tokens:
                answer = post(c, step="choose", token=bad, vacancy=str(vacancy)).text
                assert message in answer and 'id="dob-form"' in answer, bad
        assert (2, vacancy) not in interests(page_hub)
        # The same recipe with a live expiry is accepted: the expired one failed on time.
        live = pass_for(page_hub, payload, time.time() + 60)
        assert "is recorded." in post(c, step="choose", token=live, vacancy=str(vacancy)).text
    assert (2, vacancy) in interests(page_hub)


def test_templates_escape_double_braces_and_keep_triple_braces_raw(page_hub: HubProcess) -> None:
    hostile = '"><script>alert(1)</script>{{{notice}}}'
    with page_hub.client() as c:
        wrong = post(c, step="dob", email=hostile, dob="2000-01-01").text
        cara = post(c, step="dob", email="cara@example.org", dob="1998-02-03").text
    assert 'value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;{{{notice}}}"' in wrong
    assert "<script>alert(1)" not in wrong
    assert wrong.count('id="notice"') == 1  # the {{{notice}}} raw slot was filled once
    assert "Hello Cara O&#39;Neill." in cara  # from the database, escaped too


# ---- the console drawer over HTTP ----------------------------------------------------------

def drawer(text: str) -> str:
    start = text.find('<details id="webjobs-console"')
    assert start >= 0, text
    return text[start:text.index("</details>", start)]


def test_drawer_for_an_owner_session(owner_session: httpx.Client) -> None:
    answer = owner_session.get(LOGS_PAGE, params={"_console": "1", "note": "<i>x</i>",
                                                  "password": "hunter2"})
    assert answer.status_code == 200
    page = answer.text
    box = drawer(page)
    assert page.index(box) < page.index("</BODY>")  # before the body ends, not after
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in box
    assert "<script>" not in box and "<i>" not in box
    assert "&lt;i&gt;x&lt;/i&gt;" in box and "hunter2" not in box  # escaped; secrets masked
    assert "GET" in box and answer.headers["x-job-id"] in box and " ms" in box
    assert "second line" in box and "info" in box
    # The flag is the hub's: the job never saw it.
    assert '<pre id="seen">["note","password"]</pre>' in page and "_console" not in box


def test_drawer_on_a_page_without_a_body_tag_is_appended(owner_session: httpx.Client) -> None:
    page = owner_session.get("/api/webjobs/public_fragment", params={"_console": "1"}).text
    assert page.startswith("<p>fragment</p>") and page.endswith("</details>")


def test_drawer_follows_the_owner_through_a_posted_form(owner_session: httpx.Client) -> None:
    answer = owner_session.post(DEMO, params={"_console": "1"},
                                data={"step": "dob", "email": "ann@example.org", "dob": "x"})
    box = drawer(answer.text)
    assert "POST" in box and "the details given do not match" in box
    assert "&quot;step&quot;: &quot;dob&quot;" in box


def test_no_drawer_on_json_answers(owner_session: httpx.Client) -> None:
    plain = owner_session.get("/api/webjobs/public_data", params={"_console": "1"})
    assert plain.json() == {"ok": True}


def test_everyone_else_gets_the_page_unchanged(page_hub: HubProcess) -> None:
    owner_token = page_hub.add_user("otto", "OWNER")
    callers = {"visitor": {}, "system token": {"Authorization": f"Bearer {TOKEN}"},
               "owner token": {"Authorization": f"Bearer {owner_token}"}}
    with page_hub.client(headers=HTML) as c:
        for who, headers in callers.items():
            without = c.get(LOGS_PAGE, headers=headers)
            flagged = c.get(LOGS_PAGE, params={"_console": "1"}, headers=headers)
            assert flagged.content == without.content, who
            assert "webjobs-console" not in flagged.text, who
            same = ("content-type", "content-security-policy", "content-length")
            assert {h: flagged.headers[h] for h in same} == {h: without.headers[h] for h in same}


def test_dev_server_shows_the_drawer_to_anyone(dev_hub: HubProcess) -> None:
    with dev_hub.client(headers=HTML) as c:
        box = drawer(c.get(LOGS_PAGE, params={"_console": "1"}).text)
        assert "&lt;script&gt;alert(1)" in box
        assert "webjobs-console" not in c.get(LOGS_PAGE).text  # still only on request


# ---- in a real browser ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


# Every CSP violation on the page, however it shows (console or event).
WATCH_CSP = ("window.__csp = [];"
             "document.addEventListener('securitypolicyviolation',"
             " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));")


def watched(page: Page) -> list[str]:
    """Console errors and uncaught exceptions on ``page``. The hub has no favicon: the
    browser's own request for one is answered here, so its 404 is not counted."""
    page.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    return problems


def walk_the_demo(page: Page, url: str, dob: str) -> None:
    page.goto(url)
    page.locator("#dob").fill(dob)
    with page.expect_navigation():
        page.locator("#dob-form button[type=submit]").click()
    # The inline countdown script ran under the page's CSP: it rewrote this text.
    page.wait_for_function(
        "document.getElementById('expiry').textContent.startsWith('Time left to choose: 1')")
    page.locator("input[name=vacancy]").first.check()
    with page.expect_navigation():
        page.locator("#choose-form button[type=submit]").click()
    assert "is recorded" in page.locator("#done").inner_text()


def test_browser_visitor_walks_the_demo_without_a_drawer(
        browser: Browser, page_hub: HubProcess) -> None:
    with fresh_context(browser) as context:
        context.add_init_script(WATCH_CSP)
        page = context.new_page()
        problems = watched(page)
        walk_the_demo(page, f"{page_hub.url}{DEMO}?email=cara@example.org&_console=1",
                      "1998-02-03")
        assert page.locator("#webjobs-console").count() == 0
        assert page.evaluate("window.__csp") == [] and problems == [], problems
    assert any(person == 3 for person, _ in interests(page_hub))


def test_browser_csp_watch_sees_a_blocked_script(browser: Browser, page_hub: HubProcess) -> None:
    with fresh_context(browser) as context:
        context.add_init_script(WATCH_CSP)
        page = context.new_page()
        problems = watched(page)
        page.goto(f"{page_hub.url}/api/webjobs/public_strict")
        assert page.locator("#s").inner_text() == "no"
        assert page.evaluate("window.__csp") and problems, problems


def test_browser_owner_sees_the_drawer(browser: Browser, page_hub: HubProcess) -> None:
    with fresh_context(browser) as context:
        context.add_init_script(WATCH_CSP)
        page = context.new_page()
        problems = watched(page)
        page.goto(f"{page_hub.url}/login")
        page.locator("input[name=name]").fill("olive")
        page.locator("input[name=password]").fill(PASSWORD)
        with page.expect_navigation():
            page.locator("form button[type=submit]").click()
        walk_the_demo(page, f"{page_hub.url}{DEMO}?email=ann@example.org&_console=1",
                      "1990-04-12")
        summary = page.locator("#webjobs-console summary")
        assert summary.is_visible() and "POST" in summary.inner_text()
        lines = page.locator("#webjobs-console .wj-lines")
        assert not lines.is_visible()  # collapsed until asked
        summary.click()
        lines.wait_for(state="visible")
        assert "interest of person 1 in vacancy" in lines.inner_text()
        assert page.evaluate("window.__csp") == [] and problems == [], problems
