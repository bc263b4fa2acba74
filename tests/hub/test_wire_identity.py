"""The sign-in, token and key routes answer exactly their ``shared.wire`` shapes (a key
the hub sends that the shape lacks fails here, not on an owner's screen), and their
bodies are read by those shapes: a wrong type is HUB-001 naming the field."""

from __future__ import annotations

import os
from typing import Any

import httpx

from shared.wire import decode
from shared.wire.auth import CallerView, IssuedToken, SignedIn, SignedOut, TokenRevoked
from shared.wire.keys import IssuedKey, KeyList, KeyRevoked
from tests.hub.conftest import AUTH, HubProcess

API = "/api/webjobs"


def _ok(answer: httpx.Response) -> Any:
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_sign_in_answers_are_their_shapes(hub: HubProcess) -> None:
    name = f"wire-{os.getpid()}"
    hub.add_user(name, "OWNER", password="wire-password-1")
    with hub.client() as browser:
        signed = decode(SignedIn, _ok(browser.post(
            "/api/auth/login", json={"name": name, "password": "wire-password-1"})), strict=True)
        assert signed.user.name == name and signed.user.userClass == "OWNER"
        me = decode(CallerView, _ok(browser.get("/api/auth/me")), strict=True)
        assert (me.kind, me.name) == ("user", name) and isinstance(me.id, int)
        out = browser.post("/api/auth/logout", headers={"Origin": hub.url})  # a cookie write
        assert decode(SignedOut, _ok(out), strict=True).success
        assert "webhub_session" not in browser.cookies
        nobody = decode(CallerView, _ok(browser.get("/api/auth/me")), strict=True)
        assert nobody == CallerView(kind="anonymous", id=None, name=None, userClass=None)
    with hub.client() as console:
        issued = decode(IssuedToken, _ok(console.post("/api/auth/token", json={
            "name": name, "password": "wire-password-1", "label": "wire"})), strict=True)
        own = {"Authorization": f"Bearer {issued.token}"}
        system = decode(CallerView, _ok(console.get("/api/auth/me", headers=AUTH)), strict=True)
        assert (system.kind, system.id, system.userClass) == ("system", "system", "OWNER")
        gone = console.delete("/api/auth/token", headers=own)
        assert decode(TokenRevoked, _ok(gone), strict=True).success


def test_a_sign_in_with_a_number_for_a_password_is_judged_as_its_text(
        client: httpx.Client) -> None:
    """As the page's form would send it; a token request is typed strictly."""
    wrong = client.post("/api/auth/login", json={"name": "nobody-here", "password": 12345678})
    assert wrong.status_code == 401, wrong.text
    typed = client.post("/api/auth/token", json={"name": "nobody-here", "label": ["x"]})
    assert typed.status_code == 400 and typed.json()["code"] == "HUB-001"
    assert "'label'" in typed.json()["error"]


def test_key_answers_are_their_shapes(client: httpx.Client) -> None:
    made = decode(IssuedKey, _ok(client.post(f"{API}/echo/keys", json={"label": "wire"},
                                             headers=AUTH)), strict=True)
    assert made.key.startswith("wjk_") and made.job_name == "echo" and not made.revoked
    listed = decode(KeyList, _ok(client.get(f"{API}/echo/keys", headers=AUTH)), strict=True)
    assert made.id in [k.id for k in listed.keys] and made.key not in str(listed)
    bare = decode(IssuedKey, _ok(client.post(f"{API}/echo/keys", headers=AUTH)), strict=True)
    assert bare.label == ""  # no body: a key without a label
    for key in (made, bare):
        gone = client.delete(f"{API}/echo/keys/{key.id}", headers=AUTH)
        assert decode(KeyRevoked, _ok(gone), strict=True).success


def test_a_key_label_of_the_wrong_type_or_length_is_hub_001(client: httpx.Client) -> None:
    for label, said in ((7, "'label' must be a string"), ("x" * 101, "at most 100")):
        refused = client.post(f"{API}/echo/keys", json={"label": label}, headers=AUTH)
        assert refused.status_code == 400 and refused.json()["code"] == "HUB-001"
        assert said in refused.json()["error"]
    missing = client.post(f"{API}/no_such_job_here/keys", json={"label": 7}, headers=AUTH)
    assert missing.status_code == 404  # the job is checked before the body is read
