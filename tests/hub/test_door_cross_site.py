"""A request another site makes, carrying a signed-in user's session cookie, runs a job
as nobody (so a job that is not public refuses it), through a real hub process. A
link followed from another site to a ``Mode: page`` job keeps its caller; bearer
tokens are not ambient and are never affected."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.hub.conftest import HubProcess, running_hub

API = "/api/webjobs"
WHO = "return { kind: request.caller.kind, name: request.caller.name }"
JOBS = {
    "xs_user": WHO,
    "xs_page": "/*\nMode: page\n*/\nreturn response.html('<p>' + request.caller.kind + '</p>')",
    "public_xs": WHO,
}
PLAIN = {"Accept": "application/json"}
CROSS = {"Sec-Fetch-Site": "cross-site"}
VISIT = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate",
         "Sec-Fetch-Dest": "document"}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("door_xs"), jobs=JOBS) as process:
        process.add_user("una", "USER", password="una-password-1")
        yield process


@pytest.fixture(scope="module")
def session(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        signed = c.post("/api/auth/login", json={"name": "una", "password": "una-password-1"})
        assert signed.status_code == 200, signed.text
        yield c


@pytest.fixture(scope="module")
def token(hub: HubProcess) -> str:
    return hub.cli("user", "token", "una").stdout.strip()


@pytest.mark.parametrize("headers", [
    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},
    {"Origin": "http://evil.example"}, {"Origin": "null"},
    VISIT,  # a page visit, but xs_user is not a page job
])
def test_a_cross_site_request_runs_a_user_job_as_nobody(session: httpx.Client,
                                                        headers: dict[str, str]) -> None:
    sent = session.get(f"{API}/xs_user", headers={**PLAIN, **headers})
    assert sent.status_code == 401 and sent.json()["code"] == "AUTH-SESSION-001", sent.text


@pytest.mark.parametrize("headers", [
    {}, {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"},
])
def test_the_hubs_own_pages_keep_the_caller(hub: HubProcess, session: httpx.Client,
                                            headers: dict[str, str]) -> None:
    sent = session.get(f"{API}/xs_user", headers={**PLAIN, **headers,
                                                  "Origin": hub.url} if headers else PLAIN)
    assert sent.status_code == 200, sent.text
    assert sent.json() == {"kind": "user", "name": "una"}


def test_a_link_from_another_site_to_a_page_job_keeps_the_caller(
        session: httpx.Client) -> None:
    sent = session.get(f"{API}/xs_page", headers={**VISIT, "Accept": "text/html"})
    assert sent.status_code == 200 and sent.text == "<p>user</p>", sent.text


@pytest.mark.parametrize("headers", [
    {**VISIT, "Sec-Fetch-Dest": "iframe"}, {**VISIT, "Sec-Fetch-Mode": "cors"}, CROSS,
])
def test_a_page_job_framed_or_fetched_from_another_site_runs_as_nobody(
        session: httpx.Client, headers: dict[str, str]) -> None:
    sent = session.get(f"{API}/xs_page", headers={**PLAIN, **headers})
    assert sent.status_code == 401, sent.text


def test_a_cross_site_form_post_to_a_page_job_runs_as_nobody(session: httpx.Client) -> None:
    sent = session.post(f"{API}/xs_page", data={"a": "1"}, headers={**PLAIN, **VISIT})
    assert sent.status_code == 401, sent.text


def test_a_public_job_sees_a_cross_site_caller_as_anonymous(session: httpx.Client) -> None:
    sent = session.post(f"{API}/public_xs", json={}, headers={**PLAIN, **CROSS})
    assert sent.status_code == 200 and sent.json()["kind"] == "anonymous", sent.text


def test_a_bearer_token_is_not_ambient(hub: HubProcess, token: str) -> None:
    with hub.client() as c:
        sent = c.get(f"{API}/xs_user", headers={**PLAIN, **CROSS,
                                                "Authorization": f"Bearer {token}"})
    assert sent.status_code == 200 and sent.json()["kind"] == "user", sent.text
