"""POST /api/auth/token: a name and password buy an API token, under exactly the
sign-in page's defences (one shared check, so failures on either route count)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.hub.conftest import AUTH, HubProcess

PASSWORD = "console-pass-1"


def _private_hub(start_hub: Callable[..., HubProcess]) -> HubProcess:
    hub = start_hub(jobs={})
    hub.add_user("ola", "OWNER", password=PASSWORD)
    return hub


def test_a_good_password_buys_a_working_token(start_hub: Callable[..., HubProcess]) -> None:
    hub = _private_hub(start_hub)
    with hub.client() as c:
        got = c.post("/api/auth/token",
                     json={"name": " ola ", "password": PASSWORD, "label": "laptop"})
        assert got.status_code == 200, got.text
        body = got.json()
        assert set(body) == {"token", "id"} and body["token"].startswith("wjt_")
        assert "set-cookie" not in got.headers  # a token, not a browser session
        me = c.get("/api/auth/me", headers={"Authorization": f"Bearer {body['token']}"}).json()
    assert me["name"] == "ola" and me["userClass"] == "OWNER"
    assert hub.cli("token", "revoke", str(body["id"])).returncode == 0
    with hub.client() as c:  # the id is the token's: revoking it ends the token
        me = c.get("/api/auth/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 401


def test_a_wrong_password_or_a_form_is_refused(start_hub: Callable[..., HubProcess]) -> None:
    hub = _private_hub(start_hub)
    with hub.client() as c:
        wrong = c.post("/api/auth/token", json={"name": "ola", "password": "nope-nope"})
        assert wrong.status_code == 401 and wrong.json()["code"] == "AUTH-SESSION-001"
        nobody = c.post("/api/auth/token", json={"name": "ghost", "password": PASSWORD})
        assert nobody.status_code == 401
        form = c.post("/api/auth/token", data={"name": "ola", "password": PASSWORD})
        assert form.status_code == 400
        typed = c.post("/api/auth/token", json={"name": "ola", "password": 12345678})
        assert typed.status_code == 400
    assert PASSWORD not in hub.log_text()


def test_failures_on_either_route_lock_both(start_hub: Callable[..., HubProcess]) -> None:
    """Ten failures lock the name whichever route they went to; sent in parallel so
    the growing per-failure delay does not make the test slow."""
    hub = _private_hub(start_hub)
    routes = ["/api/auth/login", "/api/auth/token"] * 5

    def guess(path: str) -> int:
        return httpx.post(f"{hub.url}{path}", json={"name": "ola", "password": "wrong-guess"},
                          timeout=60).status_code

    with ThreadPoolExecutor(10) as pool:
        statuses = list(pool.map(guess, routes))
    assert statuses.count(401) >= 5 and set(statuses) <= {401, 429}
    with hub.client() as c:
        locked = c.post("/api/auth/token", json={"name": "ola", "password": PASSWORD})
        assert locked.status_code == 429, locked.text
        assert locked.json()["code"] == "SYS-429" and int(locked.headers["retry-after"]) > 0
        also = c.post("/api/auth/login", json={"name": "ola", "password": PASSWORD})
        assert also.status_code == 429


def test_a_token_revokes_itself(hub: HubProcess) -> None:
    token = hub.add_user(f"leaving-{os.getpid()}", "OWNER")
    own = {"Authorization": f"Bearer {token}"}
    with hub.client() as client:
        assert client.get("/api/auth/me", headers=own).status_code == 200
        gone = client.delete("/api/auth/token", headers=own)
        assert gone.status_code == 200 and gone.json() == {"success": True}
        assert client.get("/api/auth/me", headers=own).json()["code"] == "AUTH-SESSION-001"
        assert client.delete("/api/auth/token", headers=own).status_code == 401
        refused = client.delete("/api/auth/token", headers=AUTH)  # the system token stays
        assert refused.status_code == 401
        assert client.get("/api/auth/me", headers=AUTH).status_code == 200
