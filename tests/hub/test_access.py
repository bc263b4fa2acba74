"""Who may run what: every caller kind against every access level, through a real hub."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from hub.auth import SCHEDULER, Identity, check_job_access
from shared.errors import NotSignedIn
from tests.hub.conftest import AUTH, HubProcess, launch_hub

ECHO = "return { caller: request.caller, userID, isAuthenticated, headers: request.headers }"
JOBS = {
    "public_acc": f"/*\nAccess: public\n*/\n{ECHO}",
    "acc_user": ECHO,
    "acc_owner": f"/*\nAccess: owner\n*/\n{ECHO}",
    "acc_key": f"/*\nAccess: key\n*/\n{ECHO}",
    "acc_other_key": f"/*\nAccess: key\n*/\n{ECHO}",
    "acc_bogus": f"/*\nAccess: everyone\n*/\n{ECHO}",
    "public_acc_silent": ECHO,
    "acc_silent": ECHO,
}
PLAIN = {"Accept": "application/json"}
LEVEL_JOB = {"public": "public_acc", "user": "acc_user", "owner": "acc_owner", "key": "acc_key"}


@dataclass
class World:
    hub: HubProcess
    headers: dict[str, dict[str, str]]   # caller kind -> request headers
    session: httpx.Client                # signed in as the OWNER through /api/auth/login


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    hub = launch_hub(tmp_path_factory.mktemp("access"), jobs=JOBS)
    user_token = hub.add_user("ann", "USER")
    owner_token = hub.add_user("olive", "OWNER", password="olive-secret-1")
    with hub.client() as c:
        key = c.post("/api/webjobs/acc_key/keys", json={"label": "partner"}, headers=AUTH).json()
    headers = {
        "anonymous": {},
        "user": {"Authorization": f"Bearer {user_token}"},
        "owner": {"Authorization": f"Bearer {owner_token}"},
        "system": AUTH,
        "apikey": {"X-Api-Key": key["key"]},
    }
    session = hub.client()
    signed = session.post("/api/auth/login", json={"name": "olive", "password": "olive-secret-1"})
    assert signed.status_code == 200, signed.text
    yield World(hub, headers, session)
    session.close()
    hub.stop()


EXPECTED = {  # level -> caller kind -> status
    "public": {"anonymous": 200, "user": 200, "owner": 200, "system": 200, "apikey": 200},
    "user": {"anonymous": 401, "user": 200, "owner": 200, "system": 200, "apikey": 403},
    "owner": {"anonymous": 401, "user": 403, "owner": 200, "system": 200, "apikey": 403},
    "key": {"anonymous": 401, "user": 403, "owner": 200, "system": 200, "apikey": 200},
}
CODES = {401: "AUTH-SESSION-001", 403: "SYS-403"}


@pytest.mark.parametrize("level", list(EXPECTED))
@pytest.mark.parametrize("kind", ["anonymous", "user", "owner", "system", "apikey"])
def test_access_table(world: World, level: str, kind: str) -> None:
    with world.hub.client() as c:
        resp = c.get(f"/api/webjobs/{LEVEL_JOB[level]}", headers={**PLAIN, **world.headers[kind]})
    expected = EXPECTED[level][kind]
    assert resp.status_code == expected, resp.text
    if expected == 200:
        assert resp.json()["caller"]["kind"] == ("user" if kind in ("user", "owner") else kind)
    else:
        assert resp.json()["code"] == CODES[expected]


@pytest.mark.parametrize("level", list(EXPECTED))
def test_the_scheduler_always_passes(level: str) -> None:
    check_job_access(SCHEDULER, LEVEL_JOB[level], level)  # raises if refused


@pytest.mark.parametrize(("level", "expected"), [("user", 200), ("owner", 200), ("key", 200)])
def test_a_session_is_a_signed_in_owner(world: World, level: str, expected: int) -> None:
    resp = world.session.get(f"/api/webjobs/{LEVEL_JOB[level]}", headers=PLAIN)
    assert resp.status_code == expected
    seen = resp.json()
    assert seen["caller"] == {"kind": "user", "id": seen["caller"]["id"], "name": "olive",
                              "userClass": "OWNER"}
    assert seen["isAuthenticated"] is True and seen["userID"] == seen["caller"]["id"]
    assert "cookie" not in seen["headers"]


def test_a_signed_in_user_opening_a_public_job_is_recognised(world: World) -> None:
    seen = world.session.get("/api/webjobs/public_acc", headers=PLAIN).json()
    assert seen["caller"]["name"] == "olive" and seen["isAuthenticated"] is True
    anonymous = httpx.get(f"{world.hub.url}/api/webjobs/public_acc", headers=PLAIN).json()
    assert anonymous["caller"]["kind"] == "anonymous" and anonymous["isAuthenticated"] is False


def test_credentials_never_reach_the_job(world: World) -> None:
    for kind in ("user", "apikey"):
        job = "acc_key" if kind == "apikey" else "acc_user"
        seen = httpx.get(f"{world.hub.url}/api/webjobs/{job}",
                         headers={**PLAIN, **world.headers[kind]}).json()["headers"]
        assert not {"authorization", "x-api-key", "cookie"} & set(seen)


def test_a_key_opens_its_own_job_only(world: World) -> None:
    key = world.headers["apikey"]
    other = httpx.get(f"{world.hub.url}/api/webjobs/acc_other_key", headers={**PLAIN, **key})
    assert other.status_code == 403 and other.json()["code"] == "SYS-403"
    as_bearer = {"Authorization": f"Bearer {key['X-Api-Key']}"}
    own = httpx.get(f"{world.hub.url}/api/webjobs/acc_key", headers={**PLAIN, **as_bearer})
    assert own.status_code == 200 and own.json()["caller"]["kind"] == "apikey"
    manage = httpx.get(f"{world.hub.url}/api/webjobs/available", headers=key)
    assert manage.status_code == 403


def test_keys_are_listed_without_secrets_and_revocable(world: World) -> None:
    with world.hub.client() as c:
        made = c.post("/api/webjobs/acc_other_key/keys", json={"label": "temp"}, headers=AUTH)
        secret, key_id = made.json()["key"], made.json()["id"]
        listed = c.get("/api/webjobs/acc_other_key/keys", headers=AUTH).json()["keys"]
        assert [k["label"] for k in listed] == ["temp"] and secret not in str(listed)
        assert c.get("/api/webjobs/acc_other_key", headers={"X-Api-Key": secret,
                                                            **PLAIN}).status_code == 200
        gone = c.delete(f"/api/webjobs/acc_other_key/keys/{key_id}", headers=AUTH)
        assert gone.status_code == 200
        refused = c.get("/api/webjobs/acc_other_key", headers={"X-Api-Key": secret, **PLAIN})
        assert refused.status_code == 401
        again = c.delete(f"/api/webjobs/acc_other_key/keys/{key_id}", headers=AUTH)
        assert again.status_code == 200  # revoking twice is harmless


def test_unknown_access_level_fails_closed(world: World) -> None:
    user = httpx.get(f"{world.hub.url}/api/webjobs/acc_bogus",
                     headers={**PLAIN, **world.headers["user"]})
    assert user.status_code == 403
    owner = httpx.get(f"{world.hub.url}/api/webjobs/acc_bogus",
                      headers={**PLAIN, **world.headers["owner"]})
    assert owner.status_code == 200
    jobs = httpx.get(f"{world.hub.url}/api/webjobs/available", headers=AUTH).json()["jobs"]
    bogus = next(j for j in jobs if j["name"] == "acc_bogus")
    assert bogus["access"] == "owner" and any("Access" in w for w in bogus["warnings"])


def test_management_is_for_owners(world: World) -> None:
    for kind, status in (("anonymous", 401), ("user", 403), ("owner", 200), ("system", 200)):
        resp = httpx.get(f"{world.hub.url}/api/webjobs/available", headers=world.headers[kind])
        assert resp.status_code == status, kind


def test_revoked_token_and_disabled_user(tmp_path: Path) -> None:
    hub = launch_hub(tmp_path, jobs={"acc_user": ECHO})
    try:
        token = hub.add_user("bo", "USER")
        extra = hub.cli("user", "token", "bo", "--label", "second").stdout.strip()
        bearer = {"Authorization": f"Bearer {token}"}
        ok = httpx.get(f"{hub.url}/api/webjobs/acc_user", headers=bearer)
        assert ok.status_code == 200
        token_id = _token_id(hub, "second")
        assert hub.cli("token", "revoke", str(token_id)).returncode == 0
        revoked = httpx.get(f"{hub.url}/api/webjobs/acc_user",
                            headers={"Authorization": f"Bearer {extra}"})
        assert revoked.status_code == 401 and revoked.json()["code"] == "AUTH-SESSION-001"
        assert hub.cli("user", "disable", "bo").returncode == 0
        disabled = httpx.get(f"{hub.url}/api/webjobs/acc_user",
                             headers={"Authorization": f"Bearer {token}"})
        assert disabled.status_code == 401
    finally:
        hub.stop()


def _token_id(hub: HubProcess, label: str) -> int:
    with sqlite3.connect(hub.home / "hub.db") as db:
        row = db.execute("SELECT id FROM api_tokens WHERE label = ?", (label,)).fetchone()
    assert row is not None
    return int(row[0])


def test_cross_site_cookie_writes_are_refused(world: World) -> None:
    code = "return 1"
    hostile = world.session.post("/api/webjobs/save", json={"name": "acc_csrf", "code": code},
                                 headers={"Origin": "https://evil.example"})
    assert hostile.status_code == 403 and hostile.json()["code"] == "SYS-403"
    sneaky = world.session.post("/api/webjobs/save", json={"name": "acc_csrf", "code": code},
                                headers={"Sec-Fetch-Site": "cross-site"})
    assert sneaky.status_code == 403
    bare = world.session.post("/api/webjobs/save", json={"name": "acc_csrf", "code": code})
    assert bare.status_code == 403  # a cookie alone, with no sign of where it came from
    own = world.session.post("/api/webjobs/save", json={"name": "acc_csrf", "code": code},
                             headers={"Origin": world.hub.url})
    assert own.status_code == 200
    token = httpx.post(f"{world.hub.url}/api/webjobs/save", json={"name": "acc_csrf",
                       "code": code}, headers={**world.headers["owner"],
                                               "Origin": "https://evil.example"})
    assert token.status_code == 200  # bearer tokens are not a browser's ambient credential


def test_public_rate_limit_per_address(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBJOB_PUBLIC_RATE": "3"}, {"public_acc": JOBS["public_acc"]})
    with hub.client() as c:
        spoofed = [c.get("/api/webjobs/public_acc", headers={**PLAIN,
                   "X-Forwarded-For": f"203.0.113.{i}"}) for i in range(4)]
        assert [r.status_code for r in spoofed] == [200, 200, 200, 429]
        assert spoofed[-1].json()["code"] == "SYS-429"
        assert int(spoofed[-1].headers["retry-after"]) >= 1
        token = hub.add_user("sig", "USER")
        signed = c.get("/api/webjobs/public_acc", headers={**PLAIN,
                       "Authorization": f"Bearer {token}"})
        assert signed.status_code == 200  # signed-in callers are not rate limited


def test_forwarded_for_is_believed_only_from_trusted_proxies(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBJOB_PUBLIC_RATE": "2", "WEBHUB_TRUSTED_PROXIES": "127.0.0.1"},
                    {"public_acc": "/*\nAccess: public\n*/\nreturn request.ip"})
    with hub.client() as c:
        seen = [c.get("/api/webjobs/public_acc", headers={**PLAIN,
                "X-Forwarded-For": f"198.51.100.{i}"}) for i in range(4)]
        assert [r.status_code for r in seen] == [200] * 4
        assert seen[0].json() == "198.51.100.0"


def test_demo_owner_is_created_once(tmp_path: Path) -> None:
    first = launch_hub(tmp_path, jobs={}, serve_args=("--demo-owner",))
    first.stop()
    printed = first.log_text()
    assert printed.count("Demo owner created") == 1
    token = printed.split("API token: ")[1].split()[0]
    password = printed.split("with password ")[1].split()[0]
    again = launch_hub(tmp_path, jobs={}, serve_args=("--demo-owner",))
    try:
        assert "Demo owner created" not in again.log_text()  # the log file starts afresh
        me = httpx.get(f"{again.url}/api/auth/me", headers={"Authorization": f"Bearer {token}"})
        assert me.json()["name"] == "owner" and me.json()["userClass"] == "OWNER"
        signed = httpx.post(f"{again.url}/api/auth/login",
                            json={"name": "owner", "password": password})
        assert signed.status_code == 200 and "webhub_session" in signed.cookies
        assert password not in again.log_text() and token not in again.log_text()
    finally:
        again.stop()


def test_an_idle_session_expires(world: World) -> None:
    client = world.hub.client()
    try:
        signed = client.post("/api/auth/login",
                             json={"name": "olive", "password": "olive-secret-1"})
        assert signed.status_code == 200
        assert client.get("/api/auth/me").json()["name"] == "olive"
        with sqlite3.connect(world.hub.home / "hub.db") as db:  # 13 idle hours pass
            db.execute("UPDATE sessions SET last_seen = last_seen - 13 * 3600")
        assert client.get("/api/auth/me").json()["kind"] == "anonymous"
        refused = client.get("/api/webjobs/acc_user", headers=PLAIN)
        assert refused.status_code == 401
    finally:
        client.close()


def test_a_public_prefix_means_public_when_the_header_is_silent(world: World) -> None:
    assert httpx.get(f"{world.hub.url}/api/webjobs/public_acc_silent",
                     headers=PLAIN).status_code == 200
    assert httpx.get(f"{world.hub.url}/api/webjobs/acc_silent", headers=PLAIN).status_code == 401


def test_cookies_are_secure_behind_a_trusted_tls_proxy(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_TRUSTED_PROXIES": "127.0.0.1"}, {})
    hub.add_user("sec", "OWNER", password="secure-pass-1")
    proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "jobs.example"}
    with hub.client() as c:
        resp = c.post("/api/auth/login", json={"name": "sec", "password": "secure-pass-1"},
                      headers=proxied)
        cookie = resp.headers["set-cookie"].lower()
        assert "secure" in cookie and "httponly" in cookie and "samesite=lax" in cookie
        c.cookies.set("webhub_session", resp.cookies["webhub_session"])
        save = {"name": "sec_job", "code": "return 1"}
        same = c.post("/api/webjobs/save", json=save,
                      headers={**proxied, "Origin": "https://jobs.example"})
        assert same.status_code == 200
        other = c.post("/api/webjobs/save", json=save, headers={**proxied, "Origin": hub.url})
        assert other.status_code == 403


def test_signing_out_from_the_sign_in_page(world: World) -> None:
    with world.hub.client() as c:
        c.post("/api/auth/login", json={"name": "olive", "password": "olive-secret-1"})
        page = c.get("/login").text
        assert "Signed in as olive" in page and 'id="signout"' in page
        out = c.post("/api/auth/logout", content=b"",  # what the page's empty form sends
                     headers={"Sec-Fetch-Site": "same-origin",
                              "Content-Type": "application/x-www-form-urlencoded"})
        assert out.status_code == 303 and out.headers["location"] == "/login?note=out"
        assert c.get("/api/auth/me").json()["kind"] == "anonymous"
        assert "You are signed out" in c.get("/login?note=out").text


def test_another_authorization_scheme_is_not_the_hubs(world: World) -> None:
    basic = {"Authorization": "Basic dXNlcjpwYXNz", **PLAIN}  # e.g. from a proxy's own login
    assert httpx.get(f"{world.hub.url}/api/webjobs/public_acc", headers=basic).status_code == 200
    refused = httpx.get(f"{world.hub.url}/api/webjobs/acc_user", headers=basic)
    assert refused.status_code == 401 and refused.json()["code"] == "AUTH-SESSION-001"
    with pytest.raises(NotSignedIn):  # a bearer scheme with no token (no client sends "Bearer ")
        world_identity().resolve({"authorization": "Bearer"}, {})


def world_identity() -> Identity:
    class NoUsers:
        def user_for_token(self, token: str) -> None: ...
        def user_for_session(self, secret: str, idle_seconds: float) -> None: ...
        def key_for_secret(self, secret: str) -> None: ...

    return Identity(NoUsers(), "system-token", 3600)
