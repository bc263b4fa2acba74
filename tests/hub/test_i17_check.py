"""``POST /check {code}``: the hub's parse check and header warnings, with lines and
columns, without saving anything (what the editor marks as the owner types)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess

API = "/api/webjobs"


def check(c: httpx.Client, code: object) -> dict[str, Any]:
    resp = c.post(f"{API}/check", json={"code": code}, headers=AUTH)
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    assert set(body) == {"ok", "problems"}
    for problem in body["problems"]:
        assert set(problem) == {"line", "column", "message", "severity", "source"}
    return body


def test_clean_code_has_no_problems(client: httpx.Client) -> None:
    assert check(client, "/*\nName: fine\nRuntime: 10 s\n*/\nreturn 1") == {
        "ok": True, "problems": []}


def test_a_syntax_error_is_an_error_on_its_line(client: httpx.Client) -> None:
    body = check(client, "const a = 1\nconst b = (\nreturn a")
    assert body["ok"] is False
    [problem] = body["problems"]
    assert (problem["severity"], problem["source"]) == ("error", "syntax")
    assert problem["line"] == 3 and problem["column"] >= 1 and problem["message"]


def test_header_warnings_are_placed_on_their_value(client: httpx.Client) -> None:
    code = "/*\nName: n\nRuntime: 10 h\nAccess: everyone\n*/\nreturn 1"
    body = check(client, code)
    assert body["ok"] is True  # warnings do not stop a save
    places = [(p["line"], p["column"], p["severity"], p["source"]) for p in body["problems"]]
    assert places == [(3, 10, "warning", "header"), (4, 9, "warning", "header")]
    assert "Runtime" in body["problems"][0]["message"]
    assert "Access" in body["problems"][1]["message"]


def test_a_limit_above_the_server_maximum_is_a_warning(client: httpx.Client) -> None:
    body = check(client, "/*\nMemory: 64 GB\n*/\nreturn 1")
    [problem] = body["problems"]
    assert (problem["line"], problem["column"], problem["severity"]) == (2, 9, "warning")
    assert "maximum" in problem["message"]


def test_errors_and_warnings_together_in_line_order(client: httpx.Client) -> None:
    body = check(client, "/*\nCPU: lots\n*/\nreturn (")
    assert body["ok"] is False
    assert [(p["line"], p["source"]) for p in body["problems"]] == [(2, "header"),
                                                                    (4, "syntax")]


def test_nothing_is_saved(client: httpx.Client) -> None:
    body = {"name": "i17c_never", "code": "return 1"}
    resp = client.post(f"{API}/check", json=body, headers=AUTH)
    assert resp.status_code == 200
    assert client.get(f"{API}/i17c_never/code", headers=AUTH).status_code == 404


@pytest.mark.parametrize("code", [None, 5, ["return 1"]])
def test_code_that_is_not_text_is_bad_input(client: httpx.Client, code: object) -> None:
    resp = client.post(f"{API}/check", json={"code": code}, headers=AUTH)
    assert resp.status_code == 400 and resp.json()["code"] == "HUB-001", resp.text


def test_check_is_for_owners(hub: HubProcess) -> None:
    token = hub.add_user("i17c_user", "USER")
    with hub.client() as c:
        assert c.post(f"{API}/check", json={"code": "return 1"}).status_code == 401
        resp = c.post(f"{API}/check", json={"code": "return 1"},
                      headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 403
