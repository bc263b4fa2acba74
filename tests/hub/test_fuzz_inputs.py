"""Hostile input through every door of one real hub: arbitrary Unicode (lone surrogates
included) and arbitrary JSON shapes (deep, huge numbers, odd tokens) in a public job's
query string, form and JSON body, in headers and job names, and in the owner's routes
(/save, /execute, /debug, schedules, secrets, sign-in, /history search).

After every example: the answer is 2xx/3xx/4xx or a job's own failure, with a code
when it is a failure; the pool's workers are all back; a run it made reached history.
After every surface: a plain run still works and is recorded. Bytes are sent as
written (a raw client for the request line and headers, JSON escapes for surrogates),
so what reaches the hub is what an attacker would send."""

from __future__ import annotations

import itertools
import json
import string
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from shared.text import clean_json
from tests.hub.conftest import AUTH, HubProcess, running_hub
from tests.hub.fuzz_support import (
    ANY_TEXT,
    FUZZ,
    JSON_VALUES,
    ODD_JSON,
    ODD_JSON_TEXTS,
    RAW_JSON,
    Answer,
    assert_log_quiet,
    assert_normal_run_recorded,
    assert_recorded,
    assert_workers_back,
    check_answer,
    has_surrogate,
    js_safe,
    json_body,
    ndjson_lines,
    percent,
    query_of,
    raw_bytes,
    raw_request,
    send,
    whole_pool,
    wtf8,
)

ECHO = "public_fuzz_echo"
JOBS = {ECHO: "return { params, query: request.query, headers: request.headers }"}
ENGINE_FLAGS = ("enableLogger", "raw", "_console", "_debug")
ACCEPTS = st.sampled_from([b"application/json", b"*/*", b"text/html",
                           b"application/x-ndjson"])
OWNER_PASSWORD = "fuzz-owner-password-1"
PLAIN = {"Accept": "application/json"}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    # A trusted proxy on loopback lets each sign-in example come from its own address
    # (X-Forwarded-For), so the sign-in slow-down does not stretch the run.
    env = {"WEBHUB_TRUSTED_PROXIES": "127.0.0.1"}
    with running_hub(tmp_path_factory.mktemp("fuzz-inputs"), env, JOBS) as process:
        yield process


@pytest.fixture(scope="module")
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        yield c


@pytest.fixture(scope="module")
def full_pool(client: httpx.Client) -> int:
    return whole_pool(client)


@pytest.fixture
def pool(hub: HubProcess, client: httpx.Client, full_pool: int) -> int:
    """The pool's size, once it is whole: a pool an earlier surface broke fails the
    next one at its start (blaming the earlier one), not at every example's timeout."""
    assert_workers_back(client, hub, full_pool, "the surface before this one")
    return full_pool


@pytest.fixture(scope="module")
def owner_token(hub: HubProcess) -> str:
    return hub.add_user("fuzz-owner", "OWNER", OWNER_PASSWORD)


def job_result(answer: Answer) -> Any:
    """What the job returned (plain JSON, or the data of an NDJSON answer)."""
    if answer.content_type == "application/x-ndjson":
        _, meta, data = ndjson_lines(answer.body)
        assert meta is not None, answer.describe()
        return json.loads(data)
    return json.loads(answer.body)


def settle(client: httpx.Client, hub: HubProcess, pool: int, answer: Answer) -> None:
    """The checks every example ends with; a run it made must be in history."""
    check_answer(answer, hub)
    assert_workers_back(client, hub, pool, answer.sent)
    job_id = answer.headers.get("x-job-id")
    if job_id:
        assert_recorded(client, hub, job_id, answer.sent)
    assert_log_quiet(hub, answer.sent)


def collected(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Query or form pairs as a job's ``params`` (a repeated name is an array)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key not in out:
            out[key] = value
        elif isinstance(out[key], list):
            out[key].append(value)
        else:
            out[key] = [out[key], value]
    for flag in ENGINE_FLAGS:
        out.pop(flag, None)
    return out


PAIRS = st.lists(st.tuples(ANY_TEXT, ANY_TEXT), max_size=5)


def test_query_string(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(pairs=PAIRS, accept=ACCEPTS)
    @example(pairs=[("who", "\ud800")], accept=b"*/*")
    @example(pairs=[("a", "1"), ("a", "2"), ("raw", "1")], accept=b"*/*")
    def case(pairs: list[tuple[str, str]], accept: bytes) -> None:
        target = f"/api/webjobs/{ECHO}?{query_of(pairs)}".encode()
        answer = raw_request(hub.url, "GET", target, [(b"Accept", accept)])
        settle(client, hub, pool, answer)
        if answer.status == 200 and not has_surrogate(pairs):
            assert job_result(answer)["params"] == collected(pairs), answer.describe()

    case()
    assert_normal_run_recorded(client, hub)


def test_form_body(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(pairs=PAIRS, junk=st.binary(max_size=60), use_junk=st.booleans())
    @example(pairs=[("a", "1"), ("a", "2"), ("é", "ü")], junk=b"", use_junk=False)
    @example(pairs=[("who", "\ud800")], junk=b"", use_junk=False)
    @example(pairs=[], junk=b"%ff=%fe&\xff\xfe=1", use_junk=True)
    def case(pairs: list[tuple[str, str]], junk: bytes, use_junk: bool) -> None:
        body = junk if use_junk else query_of(pairs).encode()
        answer = send(client, "POST", f"/api/webjobs/{ECHO}", body, {
            **PLAIN, "Content-Type": "application/x-www-form-urlencoded"})
        settle(client, hub, pool, answer)
        if answer.status == 200 and not use_junk and not has_surrogate(pairs):
            assert job_result(answer)["params"] == collected(pairs), answer.describe()

    case()
    assert_normal_run_recorded(client, hub)


def as_doubles(value: Any) -> Any:
    """``value`` with every number as a double: JavaScript has no other, and prints a
    whole double such as -4.09986370476271e16 as the integer -40998637047627100."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    return {k: as_doubles(v) for k, v in value.items()}


def expected_params(body: bytes) -> Any:
    posted = json.loads(body)
    if isinstance(posted, dict):
        posted = {k: v for k, v in posted.items() if k not in ENGINE_FLAGS}
    return clean_json(posted)


JSON_TYPES = st.sampled_from(["application/json", "application/vnd.x+json",
                              "application/json; charset=utf-8", "text/plain"])


def test_json_body(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(body=RAW_JSON, ctype=JSON_TYPES, accept=ACCEPTS)
    # The attack the issue names, and a body nested far deeper than any encoder recurses.
    @example(body=b'{"who":"\\ud800"}', ctype="application/json", accept=b"*/*")
    @example(body=b"[" * 5000 + b"]" * 5000, ctype="application/json", accept=b"*/*")
    def case(body: bytes, ctype: str, accept: bytes) -> None:
        answer = send(client, "POST", f"/api/webjobs/{ECHO}", body, {
            "Accept": accept.decode(), "Content-Type": ctype}, f"{ctype} {body[:300]!r}")
        settle(client, hub, pool, answer)
        if answer.status == 200 and ctype != "text/plain" and body in ODD_JSON_TEXTS:
            return  # odd tokens: any 2xx/4xx will do
        if answer.status == 200 and ctype != "text/plain":
            posted = json.loads(body)
            if js_safe(posted):
                got = as_doubles(job_result(answer)["params"])
                assert got == as_doubles(expected_params(body)), answer.describe()

    case()
    assert_normal_run_recorded(client, hub)


HEADER_NAMES = st.one_of(
    st.sampled_from(["accept", "content-type", "cookie", "authorization", "x-api-key",
                     "origin", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest",
                     "x-forwarded-for", "user-agent", "accept-language", "referer"]),
    st.text(string.ascii_lowercase + string.digits + "-_", min_size=1, max_size=12)
    .map(lambda s: f"x-fz-{s}"))
HEADER_VALUES = st.binary(max_size=40).map(lambda b: bytes(c for c in b if c not in b"\r\n"))


def test_headers(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(headers=st.dictionaries(HEADER_NAMES, HEADER_VALUES, max_size=4), accept=ACCEPTS)
    def case(headers: dict[str, bytes], accept: bytes) -> None:
        sent = [(k.encode(), v) for k, v in headers.items()]
        if "accept" not in headers:
            sent.append((b"Accept", accept))
        answer = raw_request(hub.url, "GET", f"/api/webjobs/{ECHO}".encode(), sent)
        settle(client, hub, pool, answer)
        if answer.status == 200:
            seen = job_result(answer)["headers"]
            for name, value in headers.items():
                if name.startswith("x-fz-") and all(c >= 0x20 or c == 9 for c in value):
                    # Optional white space around a value is not part of it (RFC 9110).
                    assert seen.get(name, "").strip(" \t") == \
                        value.decode("latin-1").strip(" \t"), answer.describe()

    case()
    assert_normal_run_recorded(client, hub)


# Bytes uvicorn's parser refuses before any route sees them.
NOT_HTTP = [b"GARBAGE\r\n\r\n", b"\x00\xff\xfe\r\n\r\n",
            b"GET /api/webjobs/public_ping HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
            b"POST /api/webjobs/public_ping HTTP/1.1\r\nHost: x\r\n"
            b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"]


@pytest.mark.parametrize("wire", NOT_HTTP)
def test_bytes_that_are_not_http_get_a_coded_failure(hub: HubProcess, wire: bytes) -> None:
    answer = raw_bytes(hub.url, wire)
    assert answer.status == 400, answer.describe()
    assert answer.content_type == "application/json", answer.describe()
    assert json.loads(answer.body)["code"] == "HUB-001", answer.describe()
    assert answer.headers.get("x-content-type-options") == "nosniff", answer.describe()


def test_any_bytes_on_the_wire(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @example(wire=NOT_HTTP[0])
    @given(wire=st.one_of(st.binary(max_size=200), st.binary(max_size=80).map(
        lambda junk: b"GET /api/webjobs/public_ping HTTP/1.1\r\nHost: x\r\n" + junk
        + b"\r\n\r\n")))
    def case(wire: bytes) -> None:
        answer = raw_bytes(hub.url, wire)
        if answer.status:  # a request cut short may be closed without an answer
            settle(client, hub, pool, answer)

    case()
    assert_normal_run_recorded(client, hub)


KEEP = {ECHO, "public_ping"}


def test_job_names_in_paths(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(name=ANY_TEXT, raw=st.booleans(), suffix=st.sampled_from(
        ["", "/code", "/versions", "/keys", "/versions/1", "/output", "/logs",
         "/keys/99999999999999999999999999999", "/versions/99999999999999999999999",
         "/versions/-1", "/versions/1/restore"]),
        method=st.sampled_from(["GET", "POST", "DELETE"]))
    @example(name="x", raw=False, suffix="/keys/99999999999999999999999999999",
             method="DELETE")
    def case(name: str, raw: bool, suffix: str, method: str) -> None:
        if name in KEEP or (method == "DELETE" and suffix and "/keys/" not in suffix):
            return
        segment = wtf8(name).replace(b"/", b"%2F").replace(b"?", b"%3F").replace(b"#", b"%23")
        segment = segment if raw else percent(name).encode()
        segment = bytes(c for c in segment if c > 0x20 and c != 0x7F) or b"x"
        target = b"/api/webjobs/" + segment + suffix.encode()
        answer = raw_request(hub.url, method, target,
                             [(b"Authorization", AUTH["Authorization"].encode()),
                              (b"Accept", b"application/json")])
        settle(client, hub, pool, answer)

    case()
    assert_normal_run_recorded(client, hub)


NAMES = st.one_of(ANY_TEXT, st.from_regex(r"\Afz_[a-z0-9_-]{1,10}\Z"),
                  st.from_regex(r"\Afz_[a-z0-9]{1,6}\Z").map(lambda n: n + "\n"))
CODES = st.one_of(ANY_TEXT, ANY_TEXT.map(lambda t: f"return {json.dumps(t)}"),
                  ANY_TEXT.map(lambda t: f"// {t}\nreturn 1"),
                  ANY_TEXT.map(lambda t: f"/*\nName: {t}\nAccess: {t}\n*/\nreturn 'ok'"))


def test_save(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(name=NAMES, code=CODES, whole=st.one_of(st.none(), ODD_JSON))
    @example(name="fz_evil\n", code="return 1", whole=None)
    @example(name="fz_pair", code="return '\ud800'", whole=None)
    def case(name: str, code: str, whole: bytes | None) -> None:
        if name in KEEP:
            return
        body = whole if whole is not None else json_body({"name": name, "code": code})
        answer = send(client, "POST", "/api/webjobs/save", body, AUTH)
        settle(client, hub, pool, answer)
        if answer.status != 200:
            return
        saved = percent(json.loads(answer.body)["job"]["name"])
        for method, path, headers in (("GET", saved, PLAIN), ("GET", f"{saved}/code", {}),
                                      ("GET", f"{saved}/versions", {}), ("DELETE", saved, {})):
            settle(client, hub, pool, send(client, method, f"/api/webjobs/{path}",
                                           headers={**AUTH, **headers}))

    case()
    assert_normal_run_recorded(client, hub)


def multipart(fields: list[tuple[str, bytes, str | None]]) -> tuple[bytes, str]:
    boundary = "fuzzboundary7d1c"
    parts = []
    for name, value, filename in fields:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename
                                                      else "")
        parts.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
                     + value + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


FILE_BYTES = st.one_of(CODES.map(wtf8), st.binary(max_size=80))
PARAM_BYTES = st.one_of(RAW_JSON, ANY_TEXT.map(wtf8), JSON_VALUES.map(
    lambda v: json_body({"x": v})))


def test_execute(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(code=FILE_BYTES, params=PARAM_BYTES, name=st.one_of(st.none(), ANY_TEXT))
    def case(code: bytes, params: bytes, name: str | None) -> None:
        fields: list[tuple[str, bytes, str | None]] = [("file", code, "fz.job.js"),
                                                       ("params", params, None)]
        if name is not None:
            fields.append(("name", wtf8(name), None))
        body, ctype = multipart(fields)
        answer = send(client, "POST", "/api/webjobs/execute", body,
                      {**AUTH, "Content-Type": ctype})
        settle(client, hub, pool, answer)

    case()
    assert_normal_run_recorded(client, hub)


def debug_body(params: bytes, code: str | None, method: str | None) -> bytes:
    """A debug request that never parks (no stepping, no breakpoints), so it ends."""
    extra = b"".join([b',"code":' + json_body(code) if code is not None else b"",
                      b',"method":' + json_body(method) if method is not None else b""])
    return b'{"stepFromStart":false,"breakpoints":[],"params":' + params + extra + b"}"


def test_debug_params(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(params=st.one_of(JSON_VALUES.map(json_body),
                            st.sampled_from([b"[" * 5000 + b"]" * 5000, b'{"x":NaN}',
                                             b'{"x":"\\ud800"}', b'"\\udfff"'])),
           code=st.one_of(st.none(), CODES), method=st.one_of(st.none(), ANY_TEXT),
           name=st.one_of(st.just(ECHO), ANY_TEXT))
    def case(params: bytes, code: str | None, method: str | None, name: str) -> None:
        body = debug_body(params, code if "debugger" not in (code or "") else None, method)
        answer = send(client, "POST", f"/api/webjobs/debug/{percent(name) or 'x'}", body, AUTH)
        settle(client, hub, pool, answer)

    case()
    assert_normal_run_recorded(client, hub)


def test_schedule_parameters(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(name=ANY_TEXT, params=JSON_VALUES, changed=JSON_VALUES, run_with=JSON_VALUES,
           zone=st.one_of(st.none(), ANY_TEXT), cron=st.one_of(st.just("0 3 1 1 *"), ANY_TEXT))
    def case(name: str, params: Any, changed: Any, run_with: Any, zone: str | None,
                cron: str) -> None:
        schedule = {"name": name or "fz", "jobName": ECHO, "cron": cron, "params": params,
                    "enabled": False, **({"timezone": zone} if zone is not None else {})}
        body = json_body(schedule)
        made = send(client, "POST", "/api/webjobs/schedules", body, AUTH)
        settle(client, hub, pool, made)
        if made.status != 200:
            return
        sid = json.loads(made.body)["schedule"]["id"]
        steps = [("PUT", f"/schedules/{sid}", json_body({"params": changed, "name": name})),
                 ("POST", f"/schedules/{sid}/run", json_body({"params": run_with})),
                 ("GET", "/schedules", b""), ("GET", f"/schedules/{sid}/history", b""),
                 ("DELETE", f"/schedules/{sid}", b"")]
        for method, path, content in steps:
            settle(client, hub, pool, send(client, method, f"/api/webjobs{path}", content, AUTH))

    case()
    assert_normal_run_recorded(client, hub)


def test_secrets(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(name=st.one_of(ANY_TEXT, st.from_regex(r"\Afz_[a-z0-9._-]{1,10}\Z")),
           value=st.one_of(ANY_TEXT.map(lambda t: "secret-" + t), JSON_VALUES),
           whole=st.one_of(st.none(), ODD_JSON))
    def case(name: str, value: Any, whole: bytes | None) -> None:
        path = f"/api/webjobs/secrets/{percent(name) or 'x'}"
        body = whole if whole is not None else json_body({"value": value})
        answer = send(client, "PUT", path, body, AUTH)
        settle(client, hub, pool, answer)
        for method, tail in (("GET", "/changes"), ("DELETE", "")):
            settle(client, hub, pool, send(client, method, path + tail, headers=AUTH))
        settle(client, hub, pool, send(client, "GET", "/api/webjobs/secrets", headers=AUTH))

    case()
    assert_normal_run_recorded(client, hub)


_addresses = itertools.count(1)


def test_sign_in(hub: HubProcess, client: httpx.Client, pool: int, owner_token: str) -> None:
    @FUZZ
    @given(name=st.one_of(ANY_TEXT, st.just("fuzz-owner")), password=ANY_TEXT,
           route=st.sampled_from(["login-json", "login-form", "token"]),
           whole=st.one_of(st.none(), ODD_JSON))
    def case(name: str, password: str, route: str, whole: bytes | None) -> None:
        n = next(_addresses)
        headers = {"X-Forwarded-For": f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}"}
        if route == "login-form":
            body = f"name={percent(name)}&password={percent(password)}".encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            fields = {"name": name, "password": password, "label": name}
            body = whole if whole is not None else json_body(fields)
            headers["Content-Type"] = "application/json"
        path = "/api/auth/token" if route == "token" else "/api/auth/login"
        answer = send(client, "POST", path, body, headers)
        settle(client, hub, pool, answer)
        assert answer.status != 200 or password == OWNER_PASSWORD, answer.describe()

    case()
    me = client.get("/api/auth/me", headers={"Authorization": f"Bearer {owner_token}"})
    assert me.status_code == 200 and me.json()["name"] == "fuzz-owner", me.text
    assert_normal_run_recorded(client, hub)


HISTORY_FIELDS = st.sampled_from(["search", "job", "status", "source", "caller", "since",
                                  "until", "limit", "offset", "schedule"])


def test_history_search(hub: HubProcess, client: httpx.Client, pool: int) -> None:
    @FUZZ
    @given(search=ANY_TEXT, others=st.lists(st.tuples(HISTORY_FIELDS, ANY_TEXT), max_size=3))
    @example(search="a\x00b", others=[])  # a NUL in a search of three characters or more
    def case(search: str, others: list[tuple[str, str]]) -> None:
        target = f"/api/webjobs/history?{query_of([('search', search), *others])}".encode()
        answer = raw_request(hub.url, "GET", target,
                             [(b"Authorization", AUTH["Authorization"].encode())])
        settle(client, hub, pool, answer)

    case()
    assert_normal_run_recorded(client, hub)
