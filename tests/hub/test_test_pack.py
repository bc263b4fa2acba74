"""The shipped jobs in ``jobs/`` do what their headers say, run over HTTP on a
real hub. Expectations are read from the job files themselves (header values,
line numbers, probe names) so a job and its test cannot drift apart."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest

from shared.header import JobHeader, parse_header
from shared.ndjson import Failure, LogLine, MetaData, Payload, read_stream
from tests.hub.conftest import AUTH, REPO

API = "/api/webjobs"
JOBS = REPO / "jobs"
SHIPPED = sorted(p.name[: -len(".job.js")] for p in JOBS.glob("*.job.js"))
PLAIN = {"Accept": "application/json"}
HTML = {"Accept": "text/html,application/xhtml+xml"}
WEBHOOKS = {"public_github_push", "public_stripe_event"}  # tested in test_secrets_demos


def source_of(name: str) -> str:
    return (JOBS / f"{name}.job.js").read_text(encoding="utf-8")


def header_of(name: str) -> JobHeader:
    return parse_header(source_of(name), name)


def line_of(name: str, needle: str) -> int:
    """The 1-based line of ``needle`` in the job's file (it must occur once)."""
    lines = [i for i, text in enumerate(source_of(name).splitlines(), 1) if needle in text]
    assert len(lines) == 1, (name, needle, lines)
    return lines[0]


def ndjson_events(resp: httpx.Response) -> list[object]:
    assert resp.headers["content-type"].startswith("application/x-ndjson"), resp.text
    return list(read_stream([resp.content]))


def run(c: httpx.Client, name: str, headers: dict[str, str] | None = None,
        **params: str) -> httpx.Response:
    return c.get(f"{API}/{name}", params=params, headers={**AUTH, **(headers or {})})


def job_failure(resp: httpx.Response, code: str) -> dict[str, Any]:
    """A failed run in plain form: HTTP 500 and the JSON error object."""
    assert resp.status_code == 500, resp.text
    body: dict[str, Any] = resp.json()
    assert body["success"] is False and body["code"] == code and body["ref"], body
    return body


def test_the_pack_is_there() -> None:
    assert SHIPPED == ["_test-failures", "_test-http", "_test-limits", "_test-sandbox",
                       "public_deeplink", "public_github_push", "public_ping",
                       "public_stripe_event", "public_test-page", "vacancies",
                       "vacancies_csv",
                       "vacancies_pdf"]


# -- every job -----------------------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED)
def test_header_parses_cleanly_and_is_listed_as_written(client: httpx.Client, name: str) -> None:
    header = header_of(name)
    assert header.warnings == [] and header.name and header.description
    jobs = {j["name"]: j for j in client.get(f"{API}/available", headers=AUTH).json()["jobs"]}
    listed = jobs[name]
    assert listed["warnings"] == []
    assert (listed["title"], listed["description"]) == (header.name, header.description)
    assert (listed["access"], listed["mode"]) == (header.access, header.mode)
    assert (listed["author"], listed["version"]) == (header.author, header.version)


@pytest.mark.parametrize("name", SHIPPED)
def test_access_is_what_the_header_says(client: httpx.Client, name: str) -> None:
    resp = client.get(f"{API}/{name}", headers=PLAIN, params={"mode": "ok"})
    if name in WEBHOOKS:  # let in by the hub; the job itself refuses an unsigned call
        assert resp.status_code == 401 and "code" not in resp.json(), resp.text
    elif header_of(name).access == "public":
        assert resp.status_code == 200, resp.text
    else:
        assert resp.status_code == 401 and resp.json()["code"] == "AUTH-SESSION-001"


# -- _test-limits --------------------------------------------------------------------

def test_limits_job_returns_its_header_limits(client: httpx.Client) -> None:
    header = header_of("_test-limits")
    assert None not in (header.runtime, header.memory, header.cpu)  # the header sets all three
    resp = run(client, "_test-limits", PLAIN)
    assert resp.status_code == 200
    assert resp.json() == {"limits": {"runtimeMs": header.runtime, "memoryMb": header.memory,
                                      "cpuMs": header.cpu}}


@pytest.mark.parametrize(("what", "named"), [
    pytest.param("runtime", "runtime limit of {runtime} ms", marks=pytest.mark.slow),
    pytest.param("cpu", "CPU limit of {cpu} ms", marks=pytest.mark.slow),
    ("memory", "memory limit of {memory} MB"),
])
def test_limits_job_ends_on_each_limit(client: httpx.Client, what: str, named: str) -> None:
    header = header_of("_test-limits")
    body = job_failure(run(client, "_test-limits", PLAIN, what=what), "JOB-003")
    assert body["limit"] == what
    assert named.format(runtime=header.runtime, cpu=header.cpu, memory=header.memory) \
        in body["error"]
    if what == "runtime":
        # asyncio runs a timer up to its clock's resolution early: 2999 for 3000 is on time.
        assert body["runtime"] >= header.runtime - 1  # type: ignore[operator]


@pytest.mark.parametrize(("what", "said"), [
    pytest.param("runtime", "sleeping past the runtime limit of {runtime} ms",
                 marks=pytest.mark.slow),
    pytest.param("cpu", "spinning past the CPU limit of {cpu} ms",
                 marks=pytest.mark.slow),
    ("memory", "allocating past the memory limit of {memory} MB"),
])
def test_limit_failure_streams_after_the_console(client: httpx.Client, what: str,
                                                 said: str) -> None:
    header = header_of("_test-limits")
    resp = run(client, "_test-limits", what=what, enableLogger="1")
    assert resp.status_code == 200  # live: the status went out before the outcome
    *lines, failure = ndjson_events(resp)
    assert isinstance(failure, Failure) and (failure.code, failure.limit) == ("JOB-003", what)
    seen = [(e.level, e.message) for e in lines if isinstance(e, LogLine)]
    expected = [("log", said.format(runtime=header.runtime, cpu=header.cpu,
                                    memory=header.memory))]
    assert seen == expected  # a line logged just before a runaway still arrives


def test_limits_job_unknown_what_is_a_400_answer(client: httpx.Client) -> None:
    plain = run(client, "_test-limits", PLAIN, what="bogus")
    assert plain.status_code == 400
    assert plain.json() == {"error": "unknown what=bogus; use runtime, cpu or memory"}
    meta, payload = ndjson_events(run(client, "_test-limits", what="bogus"))
    assert isinstance(meta, MetaData) and meta.success is True and meta.status == 400
    assert isinstance(payload, Payload) and "unknown what=bogus" in payload.data.decode()


# -- _test-failures ------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "message", "needle"), [
    (None, "Error: thrown on purpose", 'throw new Error("thrown on purpose")'),
    ("throw", "Error: thrown on purpose", 'throw new Error("thrown on purpose")'),
    ("async", "Error: rejected on purpose", 'reject(new Error("rejected on purpose"))'),
    ("timer", "Error: thrown in a timer on purpose", "thrown in a timer on purpose"),
])
def test_failures_job_fails_at_once(client: httpx.Client, mode: str | None, message: str,
                                    needle: str) -> None:
    params = {"mode": mode} if mode else {}
    t0 = time.monotonic()
    body = job_failure(run(client, "_test-failures", PLAIN, **params), "JOB-001")
    assert time.monotonic() - t0 < 2  # well under the job's 4 s sleep
    line = line_of("_test-failures", needle)
    assert body["error"] == f"{message} (line {line})" and body["line"] == line
    assert body["runtime"] < 2000


def test_failures_job_reported_failure_has_no_payload(client: httpx.Client) -> None:
    body = job_failure(run(client, "_test-failures", PLAIN, mode="false"), "JOB-001")
    assert body["error"] == "reported as a failure on purpose"
    assert set(body) == {"success", "error", "code", "ref", "runtime"}
    (failure,) = ndjson_events(run(client, "_test-failures", mode="false"))
    assert isinstance(failure, Failure) and failure.code == "JOB-001"
    assert failure.error == "reported as a failure on purpose"


def test_failures_job_404_is_an_answer_not_a_failure(client: httpx.Client) -> None:
    expected = {"status": "not_found", "note": "a 404 answer is not a failed run"}
    plain = run(client, "_test-failures", PLAIN, mode="404")
    assert plain.status_code == 404 and plain.json() == expected
    streamed = run(client, "_test-failures", mode="404")
    assert streamed.status_code == 404  # a job's own 4xx is the NDJSON answer's status too
    meta, payload = ndjson_events(streamed)
    assert isinstance(meta, MetaData) and meta.success is True and meta.status == 404
    assert isinstance(payload, Payload) and json.loads(payload.data) == expected


def test_failures_job_ok_echoes_the_caller(client: httpx.Client) -> None:
    resp = run(client, "_test-failures", PLAIN, mode="ok", extra="1")
    assert resp.status_code == 200
    assert resp.json() == {
        "success": True, "method": "GET", "params": {"mode": "ok", "extra": "1"},
        "caller": {"kind": "system", "id": "system", "name": "system", "userClass": "OWNER"}}


def test_failures_job_unknown_mode_is_a_400_answer(client: httpx.Client) -> None:
    resp = run(client, "_test-failures", PLAIN, mode="bogus")
    assert resp.status_code == 400 and resp.json() == {"error": "unknown mode bogus"}


# -- _test-sandbox -------------------------------------------------------------------

def test_sandbox_job_finds_nothing_reachable(client: httpx.Client) -> None:
    resp = run(client, "_test-sandbox", PLAIN)
    assert resp.status_code == 200
    body = resp.json()
    probe_names = re.findall(r'^\s*"(.+)": (?:async )?\(\) =>', source_of("_test-sandbox"), re.M)
    assert len(probe_names) >= 15 and set(body["probes"]) == set(probe_names)
    for probe, outcome in body["probes"].items():
        assert outcome == "undefined" or outcome.startswith("refused: "), (probe, outcome)
    assert body["allBlocked"] is True and body["reachable"] == []


# -- public_ping ---------------------------------------------------------------------

def test_ping_is_anonymous_and_echoes(client: httpx.Client) -> None:
    meta, payload = ndjson_events(client.get(f"{API}/public_ping"))
    assert isinstance(meta, MetaData) and meta.status == 200
    assert isinstance(payload, Payload) and json.loads(payload.data) == {"pong": "world"}
    who = client.get(f"{API}/public_ping", params={"who": "Zoë", "raw": "1"})
    assert who.status_code == 200 and who.json() == {"pong": "Zoë"}


# -- public_test-page ----------------------------------------------------------------

def test_page_job_serves_its_page(client: httpx.Client) -> None:
    resp = client.get(f"{API}/public_test-page", headers=HTML)
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "text/html; charset=utf-8"
    script_src = next(d for d in resp.headers["content-security-policy"].split(";")
                      if d.strip().startswith("script-src"))
    assert "'unsafe-inline'" in script_src
    page = resp.text
    assert page.startswith("<!doctype html>") and '<form method="post">' in page
    assert '<input name="name"' in page and 'href="?_console=1"' in page
    assert re.search(r"<script>\s*document\.getElementById\(\"script-status\"\)", page)
    assert "<code>GET</code>" in page


def test_page_job_escapes_what_is_posted(client: httpx.Client) -> None:
    resp = client.post(f"{API}/public_test-page", headers=HTML,
                       data={"name": "<script>alert(1)</script>"})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/html")
    page = resp.text
    assert "<script>alert" not in page
    assert "<strong>&lt;script&gt;alert(1)&lt;/script&gt;</strong>" in page
    assert 'value="&lt;script&gt;alert(1)&lt;/script&gt;"' in page
    assert "<code>POST</code>" in page
