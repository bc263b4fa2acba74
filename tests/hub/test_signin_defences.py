"""Sign-in defences over HTTP on a real hub: cross-site posts to the sign-in routes are
refused (login CSRF), parallel guesses cannot outrun the throttle, and a flood of wrong
passwords from one address leaves the owner a way in from another."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.hub.conftest import HubProcess, running_hub

PASSWORD = "owner-pass-42"
COOKIE = "webhub_session"


@pytest.fixture(scope="module")
def signin_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("signin"), jobs={}) as process:
        process.add_user("ola", "OWNER", password=PASSWORD)
        yield process


def _form_post(hub: HubProcess, headers: dict[str, str]) -> httpx.Response:
    with hub.client() as c:
        return c.post("/api/auth/login", data={"name": "ola", "password": PASSWORD},
                      headers=headers)


def _assert_refused(got: httpx.Response) -> None:
    assert got.status_code == 403, got.text
    assert got.json()["code"] == "SYS-403", got.text
    assert "set-cookie" not in got.headers  # nothing signed in


@pytest.mark.parametrize("headers", [
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
    {"Origin": "https://evil.example"},
    {"Origin": "null"},  # a sandboxed frame or a data: page
])
def test_a_cross_site_sign_in_post_is_refused(signin_hub: HubProcess,
                                              headers: dict[str, str]) -> None:
    _assert_refused(_form_post(signin_hub, headers))


def test_a_same_origin_post_signs_in(signin_hub: HubProcess) -> None:
    got = _form_post(signin_hub, {"Sec-Fetch-Site": "same-origin", "Origin": signin_hub.url})
    assert got.status_code == 303, got.text
    assert COOKIE in got.cookies


def test_the_hubs_own_origin_without_fetch_metadata_signs_in(signin_hub: HubProcess) -> None:
    got = _form_post(signin_hub, {"Origin": signin_hub.url})
    assert got.status_code == 303, got.text
    assert COOKIE in got.cookies


def test_a_client_without_browser_headers_signs_in(signin_hub: HubProcess) -> None:
    with signin_hub.client() as c:
        got = c.post("/api/auth/login", json={"name": "ola", "password": PASSWORD})
    assert got.status_code == 200 and got.json()["success"] is True, got.text


def test_the_console_token_route_refuses_only_a_cross_site_browser(
        signin_hub: HubProcess) -> None:
    body = {"name": "ola", "password": PASSWORD, "label": "t"}
    with signin_hub.client() as c:
        _assert_refused(c.post("/api/auth/token", json=body,
                               headers={"Sec-Fetch-Site": "cross-site"}))
        _assert_refused(c.post("/api/auth/token", json=body,
                               headers={"Origin": "https://evil.example"}))
        got = c.post("/api/auth/token", json=body)
    assert got.status_code == 200 and got.json()["token"].startswith("wjt_"), got.text


def _guess(hub: HubProcess, forwarded_for: str | None = None) -> int:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    return httpx.post(f"{hub.url}/api/auth/login", json={"name": "ola", "password": "wrong"},
                      headers=headers, timeout=60).status_code


def test_parallel_wrong_passwords_are_not_all_checked(
        start_hub: Callable[..., HubProcess]) -> None:
    """30 at once (the per-address rate lets 30 a minute through): each is counted before
    its hash runs, so only the pair's ten are checked and the rest are refused."""
    hub = start_hub(jobs={})
    hub.add_user("ola", "OWNER", password=PASSWORD)
    with ThreadPoolExecutor(30) as pool:
        statuses = list(pool.map(lambda _: _guess(hub), range(30)))
    assert statuses.count(401) == 10, statuses
    assert statuses.count(429) == 20, statuses


def test_a_flood_from_one_address_does_not_lock_the_owner_out(
        start_hub: Callable[..., HubProcess]) -> None:
    # The hub believes the test's X-Forwarded-For: two addresses from one machine.
    hub = start_hub({"WEBHUB_TRUSTED_PROXIES": "127.0.0.1"}, jobs={})
    hub.add_user("ola", "OWNER", password=PASSWORD)
    with ThreadPoolExecutor(15) as pool:
        statuses = list(pool.map(lambda _: _guess(hub, "203.0.113.7"), range(15)))
    assert set(statuses) == {401, 429}, statuses
    with hub.client() as c:
        locked = c.post("/api/auth/login", json={"name": "ola", "password": PASSWORD},
                        headers={"X-Forwarded-For": "203.0.113.7"})
        assert locked.status_code == 429, locked.text  # the flooding address is locked
        owner = c.post("/api/auth/login", json={"name": "ola", "password": PASSWORD},
                       headers={"X-Forwarded-For": "198.51.100.1"})
    assert owner.status_code == 200 and owner.json()["success"] is True, owner.text
