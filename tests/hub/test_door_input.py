"""What the hub's door does with input UTF-8 cannot carry, JSON nested too deep, absurd
ids and names with a trailing newline, through a real hub process: a 4xx, never a 500
(the hub's log is checked for tracebacks at the end).

Where text is the job's input (a run's parameters, /execute parameters, schedule
parameters, labels) a lone surrogate is carried as U+FFFD; where the hub keeps text
the owner expects back exactly (a job's code, a secret's value) it is refused."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.text import clean_json
from tests.hub.conftest import AUTH, HubProcess, running_hub

API = "/api/webjobs"
ECHO = "return { params, query: request.query, headers: request.headers }"
JOBS = {
    "public_door": ECHO,
    "door_key": "/*\nAccess: key\n*/\nreturn 1",
    "door_tick": "/*\nAccess: user\n*/\nreturn { params }",
}
JSON_BODY = {"Content-Type": "application/json", "Accept": "application/json"}
PLAIN = {"Accept": "application/json"}
MAX_DEPTH = 64


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("door_input"), jobs=JOBS) as process:
        yield process


@pytest.fixture(scope="module")
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        yield c


def nested(depth: int) -> bytes:
    """A JSON object nesting ``depth`` deep: {"a":[[[...]]]}."""
    return b'{"a":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


def refused(answer: httpx.Response, code: str = "HUB-001") -> dict[str, Any]:
    assert answer.status_code < 500, answer.text
    body: dict[str, Any] = answer.json()
    assert body["code"] == code, body
    return body


# -- lone surrogates ---------------------------------------------------------------


def test_a_lone_surrogate_in_a_json_body_reaches_the_job_as_u_fffd(
        client: httpx.Client) -> None:
    answer = client.post(f"{API}/public_door", content=b'{"who":"\\ud800","ok":"\\ud83d\\ude00"}',
                         headers=JSON_BODY)
    assert answer.status_code == 200, answer.text
    assert answer.json()["params"] == {"who": "\ufffd", "ok": "\U0001F600"}


def test_a_lone_surrogate_as_a_json_key_or_whole_body(client: httpx.Client) -> None:
    keyed = client.post(f"{API}/public_door", content=b'{"\\udc00":1}', headers=JSON_BODY)
    assert keyed.json()["params"] == {"\ufffd": 1}
    whole = client.post(f"{API}/public_door", content=b'"\\udfff"', headers=JSON_BODY)
    assert whole.json()["params"] == "\ufffd"


def test_surrogate_bytes_in_a_form_query_or_header_are_replaced(client: httpx.Client) -> None:
    # CESU-8 bytes of a surrogate are not UTF-8: each byte is replaced.
    form = client.post(f"{API}/public_door?q=%ED%A0%80", content=b"who=%ED%A0%80",
                       headers=[(b"Accept", b"application/json"),
                                (b"Content-Type", b"application/x-www-form-urlencoded"),
                                (b"X-Who", b"caf\xe9\xed\xa0\x80")])
    assert form.status_code == 200, form.text
    seen = form.json()
    assert seen["params"]["who"] == "\ufffd" * 3 and seen["query"]["q"] == "\ufffd" * 3
    assert seen["headers"]["x-who"] == "caf\xe9\xed\xa0\x80"  # headers are latin-1


def test_a_lone_surrogate_in_execute_params_is_carried(client: httpx.Client) -> None:
    answer = client.post(f"{API}/execute", headers={**AUTH, "Accept": "application/x-ndjson"},
                         data={"params": '{"who":"\\ud800"}'},
                         files={"file": ("x.job.js", b"return params")})
    assert answer.status_code == 200, answer.text
    meta, data = answer.text.splitlines()[:2]
    assert json.loads(meta)["success"] is True, meta
    assert json.loads(data) == {"who": "\ufffd"}


def test_a_lone_surrogate_in_schedule_params_is_carried(client: httpx.Client) -> None:
    body = b'{"name":"s\\ud800","jobName":"door_tick","cron":"0 3 * * *",' \
           b'"params":{"who":"\\udbff"}}'
    made = client.post(f"{API}/schedules", content=body, headers={**AUTH, **JSON_BODY})
    assert made.status_code == 200, made.text
    schedule = made.json()["schedule"]
    assert json.loads(schedule["params"]) == {"who": "\ufffd"} and schedule["name"] == "s\ufffd"
    client.delete(f"{API}/schedules/{schedule['id']}", headers=AUTH)


def test_a_lone_surrogate_in_job_code_is_refused(client: httpx.Client) -> None:
    body = b'{"name":"door_saved","code":"return \'\\ud800\'"}'
    answer = refused(client.post(f"{API}/save", content=body, headers={**AUTH, **JSON_BODY}))
    assert "code" in answer["error"]
    assert client.get(f"{API}/door_saved/code", headers=AUTH).status_code == 404


def test_a_lone_surrogate_in_a_secret_value_is_refused(client: httpx.Client) -> None:
    body = b'{"value":"long-enough-value-\\ud800"}'
    answer = refused(client.put(f"{API}/secrets/door_secret", content=body,
                                headers={**AUTH, **JSON_BODY}))
    assert "value" in answer["error"]


def test_a_key_label_with_a_lone_surrogate_is_carried(client: httpx.Client) -> None:
    made = client.post(f"{API}/door_key/keys", content=b'{"label":"x\\ud800"}',
                       headers={**AUTH, **JSON_BODY})
    assert made.status_code == 200, made.text
    assert made.json()["label"] == "x\ufffd"


json_text = st.text(st.characters(exclude_categories=()), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | json_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(json_text, inner, max_size=4),
    max_leaves=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.dictionaries(json_text, json_values, max_size=4))
def test_any_json_body_reaches_the_job_cleaned(client: httpx.Client, value: Any) -> None:
    body = json.dumps(value, ensure_ascii=True).encode()  # surrogates as \\uXXXX escapes
    answer = client.post(f"{API}/public_door", content=body, headers=JSON_BODY)
    assert answer.status_code == 200, answer.text
    assert answer.json()["params"] == clean_json(value)


# -- depth -------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000])
@pytest.mark.parametrize(("method", "path", "owner"), [
    ("POST", "/public_door", False), ("POST", "/save", True), ("PUT", "/secrets/door_deep", True),
    ("POST", "/schedules", True), ("POST", "/door_key/keys", True),
])
def test_json_nested_too_deep_is_hub_001(client: httpx.Client, depth: int, method: str,
                                         path: str, owner: bool) -> None:
    headers = {**JSON_BODY, **(AUTH if owner else {})}
    answer = refused(client.request(method, f"{API}{path}", content=nested(depth),
                                    headers=headers))
    assert f"deeper than {MAX_DEPTH}" in answer["error"]


def test_execute_params_nested_too_deep_is_hub_001(client: httpx.Client) -> None:
    answer = client.post(f"{API}/execute", headers={**AUTH, "Accept": "application/x-ndjson"},
                         data={"params": nested(5000).decode()},
                         files={"file": ("x.job.js", b"return 1")})
    failure = json.loads(answer.text.splitlines()[0])
    assert failure["code"] == "HUB-001" and "deeper than" in failure["error"], failure


def test_json_as_deep_as_allowed_reaches_the_job(client: httpx.Client) -> None:
    answer = client.post(f"{API}/public_door", content=nested(MAX_DEPTH), headers=JSON_BODY)
    assert answer.status_code == 200, answer.text


# -- ids and names -----------------------------------------------------------------


@pytest.mark.parametrize("key_id", ["99999999999999999999999999999", "9223372036854775808",
                                    "-1", "0", "abc", "1e3"])
def test_an_absurd_key_id_is_404(client: httpx.Client, key_id: str) -> None:
    refused(client.delete(f"{API}/door_key/keys/{key_id}", headers=AUTH), "SYS-404")


@pytest.mark.parametrize("raw", ["99999999999999999999999999999", "-99999999999999999999",
                                 "9" * 5000])
def test_an_absurd_history_time_is_hub_001(client: httpx.Client, raw: str) -> None:
    refused(client.get(f"{API}/history", params={"since": raw}, headers=AUTH))


@pytest.mark.parametrize("name", ["evil\n", "available\n", "ok\r", "x\n\n"])
def test_a_name_with_a_trailing_newline_is_refused(client: httpx.Client, name: str) -> None:
    saved = client.post(f"{API}/save", json={"name": name, "code": "return 1"}, headers=AUTH)
    refused(saved, "HUB-007")
    schedule = client.post(f"{API}/schedules", headers=AUTH,
                           json={"name": "n", "jobName": name, "cron": "0 3 * * *"})
    refused(schedule, "HUB-007")


def test_a_body_that_is_not_utf8_is_hub_001_in_the_hubs_words(client: httpx.Client) -> None:
    answer = refused(client.post(f"{API}/public_door", content=b'{"who":"a\xff\xfeb"}',
                                 headers=JSON_BODY))
    assert answer["error"].startswith("The request body is not valid JSON: byte 9 is not UTF-8")
    assert "codec" not in answer["error"]


# -- numbers a job could not read back ----------------------------------------------------


@pytest.mark.parametrize("number", [b"1e999", b"-1e999", b"NaN", b"Infinity", b"-Infinity",
                                    b"1" + b"0" * 400])
def test_a_number_no_job_could_read_is_hub_001(client: httpx.Client, number: bytes) -> None:
    for body in (b'{"who":' + number + b"}", number):
        answer = refused(client.post(f"{API}/public_door", content=body, headers=JSON_BODY))
        assert "not valid JSON" in answer["error"]
    schedule = b'{"name":"n","jobName":"door_tick","cron":"0 3 * * *","params":{"a":' + \
        number + b"}}"
    refused(client.post(f"{API}/schedules", content=schedule, headers={**AUTH, **JSON_BODY}))
    as_text = json.dumps({"name": "n", "jobName": "door_tick", "cron": "0 3 * * *",
                          "params": '{"a":' + number.decode() + "}"})
    refused(client.post(f"{API}/schedules", content=as_text, headers={**AUTH, **JSON_BODY}))


def test_a_large_but_readable_number_reaches_the_job(client: httpx.Client) -> None:
    answer = client.post(f"{API}/public_door", content=b'{"who":1e308,"n":12345678901234567890}',
                         headers=JSON_BODY)
    params = answer.json()["params"]  # a job reads numbers as doubles
    assert answer.status_code == 200 and params["who"] == 1e308
    assert float(params["n"]) == float(12345678901234567890)


@pytest.mark.parametrize("raw", ["\u0661", "5_0", " 5", "+5", "9" * 19])
def test_a_history_number_is_ascii_digits(client: httpx.Client, raw: str) -> None:
    refused(client.get(f"{API}/history", params={"limit": raw}, headers=AUTH))


def test_a_client_gone_before_its_body_is_in_costs_nothing(hub: HubProcess,
                                                           client: httpx.Client) -> None:
    """It sends half its body and hangs up: nothing to answer, no traceback in the log
    (the module's hub checks its log when it stops), and the next caller is served."""
    host, port = hub.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as conn:
        conn.sendall(b"POST /api/webjobs/public_door HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                     + b'{"who":"' + b"a" * 1000)
    answer = client.post(f"{API}/public_door", content=b'{"who":"next"}', headers=JSON_BODY)
    assert answer.status_code == 200 and answer.json()["params"] == {"who": "next"}
