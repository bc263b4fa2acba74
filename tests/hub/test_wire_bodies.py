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

# The job every path naming one uses; the test runs it once, for a real run id.
JOB = "wire_body_job"
# A debug session's command needs a live session (a debug run streaming to its owner),
# which is looked up before its body is read; its body's checks are
# tests/hub/test_debug_sessions.py's.
NEEDS_A_SESSION = "/api/webjobs/debug-session/{session_id}/command"
# Bodies whose other fields must be right for the route to reach the one made wrong
# (the schedule model checks name, job and cron before params).
GOOD_BASE = {
    ("post", "/api/webjobs/schedules"): {"name": "w", "jobName": JOB, "cron": "0 3 * * *"},
}
# A refusal is immediate; longer means the route went on with the body unchecked.
ANSWER_WITHIN_S = 5.0
# Fields whose wrong kind is answered otherwise than 400 HUB-001, and why: a job's name
# is the name's own code; sign-in takes a JSON body as the page's form would send it, a
# field of another kind not at all, so the name and password checked are empty.
OTHER_ANSWERS = {
    ("post", "/api/webjobs/save", "name"): (400, "HUB-007"),
    ("post", "/api/auth/login", "name"): (401, "AUTH-SESSION-001"),
    ("post", "/api/auth/login", "password"): (401, "AUTH-SESSION-001"),
    ("post", "/api/auth/login", "next"): (401, "AUTH-SESSION-001"),
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


def _real_ids(c: httpx.Client, owner: dict[str, str]) -> dict[str, str]:
    """A real resource for each id a path may name, so no route can refuse the path
    (404) before it reads the body: a schedule, a recorded run, a key, a version."""
    from tests.hub.test_history_api import eventually

    made = c.post("/api/webjobs/schedules", headers=owner, json={
        "name": "wire", "jobName": JOB, "cron": "0 3 * * *"})
    assert made.status_code == 200, made.text
    ran = c.get(f"/api/webjobs/{JOB}", headers=owner)
    assert ran.status_code == 200, ran.text
    run_id = ran.headers["x-job-id"]
    assert eventually(lambda: c.get(f"/api/webjobs/{run_id}/output",
                                    headers=owner).status_code == 200), run_id
    key = c.post(f"/api/webjobs/{JOB}/keys", headers=owner, json={"label": "wire"})
    assert key.status_code == 200, key.text
    versions = c.get(f"/api/webjobs/{JOB}/versions", headers=owner)
    assert versions.status_code == 200 and versions.json()["versions"], versions.text
    return {"{name}": JOB, "{schedule_id}": str(made.json()["schedule"]["id"]),
            "{job_id}": run_id, "{run_id}": run_id, "{key_id}": str(key.json()["id"]),
            "{n}": str(versions.json()["versions"][0]["version"]),
            "{session_id}": "no-such-session"}


def _path(path: str, ids: dict[str, str]) -> str:
    for placeholder, value in ids.items():
        path = path.replace(placeholder, value)
    assert "{" not in path, f"no real id for {path}: add one to _real_ids"
    return path


def _field_problem(method: str, path: str, field: str, wrong: Any,
                   answer: httpx.Response) -> str | None:
    """What is wrong with the answer to a body whose ``field`` is ``wrong``: it must be
    400 HUB-001 naming the field (or the OTHER_ANSWERS entry), nothing else."""
    said = _failure(answer)
    expected = OTHER_ANSWERS.get((method, path, field), (400, "HUB-001"))
    if (answer.status_code, said.get("code")) != expected:
        return (f"{method} {path} {field}={wrong!r}: {answer.status_code} "
                f"{answer.text[:200]} (expected {expected})")
    if expected[0] == 400 and field not in str(said.get("error", "")):
        return f"{method} {path} {field}: 400 without the field's name: {said.get('error')}"
    return None


def _send(c: httpx.Client, method: str, url: str, owner: dict[str, str],
          body: Any) -> httpx.Response | str:
    """The answer, or why there is none: a route that stops checking its body may go on
    to start what the body asks for (a debug run streams until it is told to stop)."""
    try:
        return c.request(method, url, headers=owner, json=body, timeout=ANSWER_WITHIN_S)
    except httpx.TimeoutException:
        return f"{method} {url} {body!r}: no answer within {ANSWER_WITHIN_S} s"


def test_every_declared_json_body_is_enforced(hub: HubProcess, owner: dict[str, str],
                                              spec: dict[str, Any]) -> None:
    bodies = _json_bodies(spec)
    assert len(bodies) >= 10, [f"{m} {p}" for m, p, _ in bodies]
    problems: list[str] = []
    with hub.client() as c:
        ids = _real_ids(c, owner)
        for method, path, schema in bodies:
            url = _path(path, ids)
            for body in ([1, 2], "text"):
                answer = _send(c, method, url, owner, body)
                if isinstance(answer, str):
                    problems.append(answer)
                elif answer.status_code != 400 or answer.json().get("code") != "HUB-001":
                    problems.append(f"{method} {path} {body!r}: {answer.status_code} "
                                    f"{answer.text[:200]}")
            props = _schema(spec, schema)
            for field, prop in props.get("properties", {}).items():
                wrong = _wrong_value(prop)
                if wrong is None:
                    continue
                others = GOOD_BASE.get((method, path)) or {
                    name: _plain_value(p) for name, p in props["properties"].items()
                    if name in props.get("required", []) and name != field}
                others = {k: v for k, v in others.items() if k != field}
                answer = _send(c, method, url, owner, {**others, field: wrong})
                problem = (answer if isinstance(answer, str)
                           else _field_problem(method, path, field, wrong, answer))
                if problem:
                    problems.append(problem)
    assert problems == [], "\n".join(problems)
