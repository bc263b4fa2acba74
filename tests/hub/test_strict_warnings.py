"""``POST /save``, ``/available`` and ``POST /check`` warn, with the line, of what strict
mode refuses (an assignment to an undeclared name, ``with``...), unless the job's
header says ``Isolation: fresh``. Through the real HTTP API of the shared hub.

Jobs these tests save are named ``strictw_...`` and removed after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH

API = "/api/webjobs"

SLOPPY = ("/*\nName: Sloppy\n*/\nlet total = 0\ncounter = 5\nwith (Math) { total = PI }\n"
          "return total")
FRESH_HEADER = "/*\nName: Sloppy\nIsolation: fresh\n*/\n"


def save(c: httpx.Client, name: str, code: str) -> dict[str, Any]:
    resp = c.post(f"{API}/save", json={"name": name, "code": code}, headers=AUTH)
    assert resp.status_code == 200, resp.text
    job: dict[str, Any] = resp.json()["job"]
    return job


def listed(c: httpx.Client, name: str) -> dict[str, Any]:
    resp = c.get(f"{API}/available", headers=AUTH)
    assert resp.status_code == 200, resp.text
    found: list[dict[str, Any]] = [j for j in resp.json()["jobs"] if j["name"] == name]
    assert len(found) == 1
    return found[0]


def strict_of(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "strict mode" in w]


@pytest.fixture
def job(client: httpx.Client) -> Iterator[str]:
    name = "strictw_job"
    client.delete(f"{API}/{name}", headers=AUTH)
    yield name
    client.delete(f"{API}/{name}", headers=AUTH)


def test_a_save_warns_with_the_line_and_available_lists_the_same(client: httpx.Client,
                                                                 job: str) -> None:
    saved = save(client, job, SLOPPY)
    warnings = strict_of(saved["warnings"])
    assert len(warnings) == 2
    assert warnings[0].startswith("Line 5, column 1: `counter = …` assigns to the undeclared "
                                  "name counter: declare it (let counter)")
    assert warnings[1].startswith("Line 6, column 1: `with` is not allowed")
    assert all("add `Isolation: fresh` to the header" in w for w in warnings)
    assert listed(client, job)["warnings"] == saved["warnings"]


def test_isolation_fresh_keeps_the_old_behaviour_without_warnings(client: httpx.Client,
                                                                  job: str) -> None:
    code = FRESH_HEADER + SLOPPY.split("*/\n", 1)[1]
    assert save(client, job, code)["warnings"] == []
    assert listed(client, job)["warnings"] == []


def test_a_new_version_is_judged_afresh(client: httpx.Client, job: str) -> None:
    save(client, job, SLOPPY)
    fixed = SLOPPY.replace("counter = 5", "const counter = 5").replace(
        "with (Math) { total = PI }", "total = Math.PI")
    assert save(client, job, fixed)["warnings"] == []
    assert listed(client, job)["warnings"] == []
    assert len(strict_of(save(client, job, SLOPPY)["warnings"])) == 2
    assert len(strict_of(listed(client, job)["warnings"])) == 2


def test_an_unknown_isolation_warns_and_is_checked_as_warm(client: httpx.Client,
                                                           job: str) -> None:
    code = SLOPPY.replace("Name: Sloppy", "Name: Sloppy\nIsolation: cold")
    warnings = save(client, job, code)["warnings"]
    assert warnings[0] == "Isolation: 'cold' is not 'warm' or 'fresh'; treated as warm"
    assert [w.split(":", 1)[0] for w in strict_of(warnings)] == ["Line 6, column 1",
                                                                 "Line 7, column 1"]


def test_a_restored_version_warns_as_a_save_does(client: httpx.Client, job: str) -> None:
    first = save(client, job, SLOPPY)["currentVersion"]
    save(client, job, "return 1")
    resp = client.post(f"{API}/{job}/versions/{first}/restore", headers=AUTH)
    assert resp.status_code == 200, resp.text
    assert len(strict_of(resp.json()["job"]["warnings"])) == 2


def check(c: httpx.Client, code: str) -> dict[str, Any]:
    resp = c.post(f"{API}/check", json={"code": code}, headers=AUTH)
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def test_check_marks_each_place_as_a_strict_warning(client: httpx.Client) -> None:
    body = check(client, SLOPPY + "\nconst mode = 0644\ndelete total")
    assert body["ok"] is True  # warnings never stop a save
    places = [(p["line"], p["column"], p["severity"], p["source"]) for p in body["problems"]]
    assert places == [(5, 1, "warning", "strict"), (6, 1, "warning", "strict"),
                      (8, 14, "warning", "strict"), (9, 1, "warning", "strict")]
    assert "0o644" in body["problems"][2]["message"]
    assert "delete a property" in body["problems"][3]["message"]


def test_check_says_nothing_of_strict_mode_for_a_fresh_job(client: httpx.Client) -> None:
    assert check(client, FRESH_HEADER + "counter = 5\nreturn counter") == {
        "ok": True, "problems": []}


def test_check_of_code_that_does_not_parse_has_only_the_syntax_error(
        client: httpx.Client) -> None:
    body = check(client, "counter = 5\nreturn (")
    assert [p["source"] for p in body["problems"]] == ["syntax"]
