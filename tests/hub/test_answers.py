"""Running jobs over HTTP: the answer forms, status codes and what a job sees."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from shared.ndjson import Failure, LogLine, MetaData, Payload, read_stream
from tests.hub.conftest import AUTH, HubProcess

HTML = {"Accept": "text/html,application/xhtml+xml"}


def ndjson_events(resp: httpx.Response) -> list[object]:
    assert resp.headers["content-type"].startswith("application/x-ndjson")
    return list(read_stream([resp.content]))


def test_api_client_gets_ndjson(client: httpx.Client) -> None:
    for accept in ("*/*", None):
        headers = {"Accept": accept} if accept else {}
        resp = client.get("/api/webjobs/public_ping", params={"who": "ann"}, headers=headers)
        assert resp.status_code == 200
        meta, payload = ndjson_events(resp)
        assert isinstance(meta, MetaData) and meta.type == "json" and meta.status == 200
        assert meta.jobId.startswith("job_") and meta.contentLength == len(b'{"pong":"ann"}')
        assert isinstance(payload, Payload) and json.loads(payload.data) == {"pong": "ann"}


@pytest.mark.parametrize(("headers", "query", "pretty"), [
    (HTML, {}, True), (HTML, {"raw": "1"}, True),
    ({"Accept": "application/json"}, {}, False), ({}, {"raw": "1"}, False)])
def test_plain_answer_is_pretty_json_for_a_browser_only(
        client: httpx.Client, headers: dict[str, str], query: dict[str, str],
        pretty: bool) -> None:
    resp = client.get("/api/webjobs/public_ping", params={"who": "bo", **query}, headers=headers)
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    assert resp.text == (json.dumps({"pong": "bo"}, indent=2) if pretty else '{"pong":"bo"}')


def test_enable_logger_streams_console_then_result(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/public_slow", params={"ms": "10", "enableLogger": "1"})
    events = ndjson_events(resp)
    assert [e.message for e in events if isinstance(e, LogLine)] == ["started", "finished"]
    assert isinstance(events[2], MetaData) and json.loads(events[3].data) == {"slept": 10}


def test_console_lines_arrive_as_they_happen(hub: HubProcess) -> None:
    with hub.client() as c, c.stream("GET", "/api/webjobs/public_slow",
                                     params={"ms": "600", "enableLogger": "1"}) as resp:
        t0 = time.monotonic()
        lines = resp.iter_lines()
        first = json.loads(next(lines))
        first_at = time.monotonic() - t0
        rest = list(lines)
        done_at = time.monotonic() - t0
    assert first == {"type": "log", "level": "log", "message": "started", "t": first["t"]}
    assert first_at < 0.5 <= done_at  # the first line came before the 600 ms wait ended
    assert json.loads(rest[-1]) == {"slept": 600}


def test_failure_forms(client: httpx.Client, hub: HubProcess) -> None:
    plain = client.get("/api/webjobs/public_fail", headers=HTML)
    assert plain.status_code == 500
    body = plain.json()
    assert body["code"] == "JOB-001" and body["error"] == "Error: public failure (line 1)"
    assert body["success"] is False and len(body["ref"]) >= 8 and "runtime" in body
    stream = client.get("/api/webjobs/public_fail")
    assert stream.status_code == 500
    (failure,) = ndjson_events(stream)
    assert isinstance(failure, Failure) and failure.code == "JOB-001"
    assert failure.ref and failure.ref in hub.log_text()
    # Both name the failed run, so its history record is one lookup away.
    for answer in (plain, stream):
        assert answer.headers["X-Job-Id"].startswith("job_")
    assert plain.headers["X-Job-Id"] != stream.headers["X-Job-Id"]


@pytest.mark.parametrize(("path", "status", "code"), [
    ("/api/webjobs/bad.name", 400, "HUB-007"),
    ("/api/webjobs/bad%20name", 400, "HUB-007"),
    ("/api/webjobs/no_such_job", 404, "SYS-404"),
    ("/api/webjobs/echo", 401, "AUTH-SESSION-001"),
    ("/api/nowhere", 404, "SYS-404"),
])
def test_refusals(client: httpx.Client, path: str, status: int, code: str) -> None:
    resp = client.get(path, headers=HTML)
    assert resp.status_code == status
    assert resp.json()["code"] == code and resp.json()["ref"]


def test_oversized_body_is_413(start_hub) -> None:  # type: ignore[no-untyped-def]
    small = start_hub({"WEBJOB_MAX_BODY_MB": "1"})
    with small.client() as c:
        resp = c.post("/api/webjobs/public_echo", content=b"x" * (1024 * 1024 + 1),
                      headers={"Content-Type": "text/plain", **HTML})
        assert resp.status_code == 413 and resp.json()["code"] == "SYS-413"
        assert c.get("/api/webjobs/public_ping", headers=HTML).status_code == 200


def test_answers_never_carry_tracebacks_or_paths(client: httpx.Client) -> None:
    answers = [
        client.get("/api/webjobs/public_fail"),
        client.post("/api/webjobs/public_echo", content=b"{not json",
                    headers={"Content-Type": "application/json"}),
        client.get("/api/webjobs/_test-failures", params={"mode": "async"}, headers=AUTH),
        client.post("/api/webjobs/save", json={"name": "x", "code": "let = ;"}, headers=AUTH),
        client.post("/api/webjobs/upload", content=b"junk", headers=AUTH),
    ]
    for resp in answers:
        assert resp.status_code >= 400
        for needle in ("Traceback", "File \"", "/hub/", ".py", "site-packages"):
            assert needle not in resp.text, resp.text


def test_get_params_are_strings_and_flags_are_stripped(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/public_echo?n=5&tick=a&tick=b&raw=1&_console=1&_debug=x")
    assert resp.json()["params"] == {"n": "5", "tick": ["a", "b"]}


def test_post_json_and_form_params(client: httpx.Client) -> None:
    as_json = client.post("/api/webjobs/public_echo?raw=1",
                          json={"limit": 50, "nested": {"a": [1]}, "enableLogger": 0})
    assert as_json.json()["params"] == {"limit": 50, "nested": {"a": [1]}}
    assert as_json.json()["method"] == "POST"
    form = client.post("/api/webjobs/public_echo?raw=1",
                       content=b"name=Ann+Lee&tick=1&tick=2&raw=1",
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.json()["params"] == {"name": "Ann Lee", "tick": ["1", "2"]}


def test_bad_json_body_is_a_clear_400(client: httpx.Client) -> None:
    resp = client.post("/api/webjobs/public_echo", content=b"{oops",
                       headers={"Content-Type": "application/json", **HTML})
    assert resp.status_code == 400 and resp.json()["code"] == "HUB-001"


def test_credentials_never_reach_the_job(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/echo?raw=1",
                      headers={**AUTH, "Cookie": "session=abc", "X-Custom": "kept"})
    seen = resp.json()
    assert "authorization" not in seen["headers"] and "cookie" not in seen["headers"]
    assert seen["headers"]["x-custom"] == "kept"
    assert seen["caller"] == {"kind": "system", "id": "system", "name": "system",
                              "userClass": "OWNER"}


def test_html_pages_get_a_page_csp(client: httpx.Client) -> None:
    page = client.get("/api/webjobs/public_page", headers=HTML)
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "'unsafe-inline'" in page.headers["content-security-policy"]
    own = client.get("/api/webjobs/public_own_csp", headers=HTML)
    assert own.headers["content-security-policy"] == "default-src 'none'"


def test_file_answers(client: httpx.Client) -> None:
    csv = client.get("/api/webjobs/public_files?kind=csv&raw=1")
    assert csv.text == "a,b\n1,2" and 'filename="staff.csv"' in csv.headers["content-disposition"]
    pdf = client.get("/api/webjobs/public_files?raw=1")
    assert pdf.content == b"%PDF-" and pdf.headers["content-type"] == "application/pdf"
    redirect = client.get("/api/webjobs/public_files?kind=redirect&raw=1")
    assert redirect.status_code == 302 and redirect.headers["location"] == "/elsewhere"
    streamed = client.get("/api/webjobs/public_files")
    meta, payload = ndjson_events(streamed)
    assert isinstance(meta, MetaData) and meta.type == "pdf" and meta.filename == "r.pdf"
    assert isinstance(payload, Payload) and payload.data == b"%PDF-"


def test_a_job_requires_an_approved_module(client: httpx.Client) -> None:
    resp = client.get("/api/webjobs/public_dates", headers=HTML)
    assert resp.status_code == 200 and resp.json() == "29 Nov 2026"
