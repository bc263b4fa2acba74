"""Every JSON request body ``/openapi.json`` declares is checked against its shape: for
each management route, a body of the wrong kind (an array, a string) and each declared
field given a value of the wrong type is a 400 ``HUB-001`` naming the field — never a
500 and never a silent success. (Valid and invalid generated bodies for every route are
test_schemathesis.py's; this one proves each shape is enforced where it is declared.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hub.conftest import HubProcess, running_hub

# A job and a schedule for the paths that name one (the schedule is made by the test).
JOB = "wire_body_job"
# A debug session's command needs a live session, which is looked up before its body is
# read; its body's checks are tests/hub/test_debug_sessions.py's.
NEEDS_A_SESSION = "/api/webjobs/debug-session/{session_id}/command"
# Bodies whose other fields must be right for the route to reach the one made wrong
# (the schedule model checks name, job and cron before params).
GOOD_BASE = {
    ("post", "/api/webjobs/schedules"): {"name": "w", "jobName": JOB, "cron": "0 3 * * *"},
}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("wire-bodies"),
                     jobs={JOB: "return {ok: true};"}) as process:
        yield process


@pytest.fixture(scope="module")
def owner(hub: HubProcess) -> dict[str, str]:
    return {"Authorization": f"Bearer {hub.add_user('wire-owner', 'OWNER')}"}


@pytest.fixture(scope="module")
def spec(hub: HubProcess) -> dict[str, Any]:
    with hub.client() as c:
        found: dict[str, Any] = c.get("/openapi.json").json()
        return found


def _schema(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    found: dict[str, Any] = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return found


def _json_bodies(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            content = (operation.get("requestBody") or {}).get("content", {})
            if "application/json" in content and path != NEEDS_A_SESSION:
                found.append((method, path, _schema(spec, content["application/json"]["schema"])))
    return found


def _kinds(prop: dict[str, Any]) -> set[str]:
    kinds: set[str] = set()
    for option in prop.get("anyOf", [prop]):
        given = option.get("type")
        kinds |= set(given) if isinstance(given, list) else {given} if given else set()
        if "$ref" in option or "properties" in option:
            kinds.add("object")
    return kinds


def _plain_value(prop: dict[str, Any]) -> Any:
    """A value of the property's first kind (its first enum value when it has some)."""
    option = prop.get("anyOf", [prop])[0]
    if "enum" in option or "const" in option:
        return option.get("enum", [option.get("const")])[0]
    return {"string": "x", "integer": 1, "number": 1, "boolean": False, "array": [],
            "null": None}.get(option.get("type") or "", {})


def _wrong_value(prop: dict[str, Any]) -> Any:
    """A JSON value this property's schema refuses, or None when it takes anything."""
    kinds = _kinds(prop)
    if not kinds:
        return None
    if "object" not in kinds:
        return {"wrong": 1}
    return [1] if "array" not in kinds else None


def _failure(answer: httpx.Response) -> dict[str, Any]:
    """The failure object: the body, or a stream's first line (the debugger answers
    NDJSON even when it refuses)."""
    try:
        first = json.loads(answer.text.splitlines()[0]) if answer.text else {}
    except ValueError:
        return {}
    return first if isinstance(first, dict) else {}


def _path(path: str, schedule_id: str) -> str:
    return (path.replace("{name}", JOB).replace("{schedule_id}", schedule_id)
            .replace("{n}", "1").replace("{job_id}", "no-such-run")
            .replace("{run_id}", "no-such-run").replace("{session_id}", "no-such-session")
            .replace("{key_id}", "1"))


def test_every_declared_json_body_is_enforced(hub: HubProcess, owner: dict[str, str],
                                              spec: dict[str, Any]) -> None:
    bodies = _json_bodies(spec)
    assert len(bodies) >= 10, [f"{m} {p}" for m, p, _ in bodies]
    problems: list[str] = []
    with hub.client() as c:
        made = c.post("/api/webjobs/schedules", headers=owner, json={
            "name": "wire", "jobName": JOB, "cron": "0 3 * * *"})
        assert made.status_code == 200, made.text
        schedule_id = str(made.json()["schedule"]["id"])
        for method, path, schema in bodies:
            url = _path(path, schedule_id)
            for body in ([1, 2], "text"):
                answer = c.request(method, url, headers=owner, json=body)
                if answer.status_code != 400 or answer.json().get("code") != "HUB-001":
                    problems.append(f"{method} {path} {body!r}: {answer.status_code} "
                                    f"{answer.text[:200]}")
            for field, prop in _schema(spec, schema).get("properties", {}).items():
                wrong = _wrong_value(prop)
                if wrong is None:
                    continue
                props = _schema(spec, schema)
                others = GOOD_BASE.get((method, path)) or {
                    name: _plain_value(p) for name, p in props["properties"].items()
                    if name in props.get("required", []) and name != field}
                others = {k: v for k, v in others.items() if k != field}
                answer = c.request(method, url, headers=owner, json={**others, field: wrong})
                said = _failure(answer)
                if answer.status_code >= 500 or (answer.status_code < 300):
                    problems.append(f"{method} {path} {field}={wrong!r}: "
                                    f"{answer.status_code} {answer.text[:200]}")
                elif answer.status_code == 400 and field not in str(said.get("error", "")):
                    problems.append(f"{method} {path} {field}: 400 without the field's name: "
                                    f"{said.get('error')}")
    assert problems == [], "\n".join(problems)
