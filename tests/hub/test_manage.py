"""The management API under /api/webjobs: listing, reading, saving, uploading,
deleting, ad-hoc runs, the running list and stopping runs.

Jobs these tests save on the shared hub are named ``mt_...`` (and removed again
where the test owns them); tests that need their own settings start a hub."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from shared.ndjson import Failure, LogLine, MetaData, Payload, parse_line, read_stream
from tests.hub.conftest import AUTH, REPO, HubProcess, assert_clean_log, launch_hub

API = "/api/webjobs"
PLAIN = {"Accept": "application/json"}


def ndjson_events(resp: httpx.Response) -> list[object]:
    assert resp.headers["content-type"].startswith("application/x-ndjson"), resp.text
    return list(read_stream([resp.content]))


def refused(resp: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body: dict[str, Any] = resp.json()
    assert body["success"] is False and body["code"] == code and body["ref"]
    return body


def save(c: httpx.Client, name: str, code: str) -> httpx.Response:
    return c.post(f"{API}/save", json={"name": name, "code": code}, headers=AUTH)


def code_of(c: httpx.Client, name: str) -> httpx.Response:
    return c.get(f"{API}/{name}/code", headers=AUTH)


def run_plain(c: httpx.Client, name: str, **params: str) -> httpx.Response:
    return c.get(f"{API}/{name}", params=params, headers={**AUTH, **PLAIN})


def listed(c: httpx.Client) -> dict[str, dict[str, Any]]:
    resp = c.get(f"{API}/available", headers=AUTH)
    assert resp.status_code == 200
    return {job["name"]: job for job in resp.json()["jobs"]}


@pytest.fixture
def mt_job(client: httpx.Client) -> Iterator[str]:
    """A job name this test owns on the shared hub; deleted afterwards if it exists."""
    name = "mt_job"
    yield name
    client.delete(f"{API}/{name}", headers=AUTH)


# -- who may call --------------------------------------------------------------------

ROUTES: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/available", {}),
    ("GET", "/running", {}),
    ("GET", "/public_ping/code", {}),
    ("POST", "/save", {"json": {"name": "mt_anon", "code": "return 1"}}),
    ("POST", "/upload", {"files": {"file": ("mt_anon.job.js", b"return 1")}}),
    ("POST", "/execute", {"files": {"file": ("mt_anon.job.js", b"return 1")}}),
    ("DELETE", "/public_ping", {}),
    ("POST", "/job_123/stop", {}),
]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer not-the-token"},
                                     {"Authorization": "Basic dGVzdDp0ZXN0"}],
                         ids=["none", "wrong-token", "not-bearer"])
@pytest.mark.parametrize(("method", "path", "kw"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_management_routes_need_the_token(client: httpx.Client, method: str, path: str,
                                          kw: dict[str, Any], headers: dict[str, str]) -> None:
    resp = client.request(method, API + path, headers=headers, **kw)
    refused(resp, 401, "AUTH-SESSION-001")
    # Nothing happened: no job saved, the shipped job not deleted.
    assert code_of(client, "mt_anon").status_code == 404
    assert code_of(client, "public_ping").status_code == 200


def test_health_needs_no_token(client: httpx.Client) -> None:
    resp = client.get(f"{API}/health")
    assert resp.status_code == 200
    body = resp.json()
    assert body["ok"] is True and body["node"] == "test-node" and body["workersMax"] == 3
    for key in ("workersRunning", "workersQueued", "workers", "idle", "starting"):
        assert isinstance(body[key], int) and body[key] >= 0, body
    assert body["idle"] <= body["workers"] and body["workersRunning"] <= body["workersMax"]


# -- listing -------------------------------------------------------------------------

def test_available_lists_every_shipped_job(client: httpx.Client, hub: HubProcess) -> None:
    resp = client.get(f"{API}/available", headers=AUTH)
    assert resp.status_code == 200 and resp.json()["store"] == "files"
    jobs = {job["name"]: job for job in resp.json()["jobs"]}
    shipped = sorted(p.name[: -len(".job.js")] for p in (REPO / "jobs").glob("*.job.js"))
    assert set(shipped) <= set(jobs)
    for name in shipped:
        job = jobs[name]
        assert job["store"] == "files" and job["warnings"] == [] and job["extended"] is False
        assert job["modified"] == pytest.approx((hub.jobs_dir / f"{name}.job.js").stat().st_mtime)
    ping, limits, page = jobs["public_ping"], jobs["_test-limits"], jobs["public_test-page"]
    assert (ping["title"], ping["access"], ping["mode"]) == ("Ping", "public", "job")
    assert ping["description"] == 'The smallest public job: answers {"pong": who}'
    assert (limits["title"], limits["access"]) == ("Test: limits", "owner")
    assert limits["limits"] == {"runtimeMs": 3000, "memoryMb": 64, "cpuMs": 1000}
    assert (page["access"], page["mode"]) == ("public", "page")
    assert jobs["public_slow"]["extended"] is True  # Runtime: 20000 is above the default


def test_available_reports_header_warnings_and_extended(start_hub: Callable[..., HubProcess],
                                                        ) -> None:
    hub = start_hub(jobs={"mt_odd": "/*\nRuntime: soon\nMemory: 999999\n*/\nreturn 1",
                          "mt_long": "/*\nRuntime: 60000\n*/\nreturn 1"})
    with hub.client() as c:
        jobs = listed(c)
    odd, long = jobs["mt_odd"], jobs["mt_long"]
    assert odd["limits"] == {"runtimeMs": 10000, "memoryMb": 2048, "cpuMs": 5000}
    assert len(odd["warnings"]) == 2
    assert "Runtime" in odd["warnings"][0] and "'soon'" in odd["warnings"][0]
    assert "999999" in odd["warnings"][1] and "2048" in odd["warnings"][1]
    assert "clamped" in odd["warnings"][1]
    assert long["extended"] is True and long["warnings"] == []
    assert long["limits"]["runtimeMs"] == 60000
    assert (long["title"], long["access"]) == ("mt_long", "user")  # defaults without a header


def test_available_gives_the_editor_modules_and_maxima(client: httpx.Client) -> None:
    body = client.get(f"{API}/available", headers=AUTH).json()
    assert body["modules"] == ["date-fns", "pdf-lib"]  # WEBJOB_MODULES' default
    assert body["maxima"] == {"runtimeMs": 300_000, "memoryMb": 2048, "cpuMs": 120_000}


def test_available_modules_and_maxima_follow_the_settings(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBJOB_MODULES": "date-fns", "WEBJOB_MAX_RUNTIME_MS": "60000",
                     "WEBJOB_MAX_MEMORY_MB": "512", "WEBJOB_MAX_CPU_MS": "30000"}, {})
    with hub.client() as c:
        body = c.get(f"{API}/available", headers=AUTH).json()
    assert body["modules"] == ["date-fns"]
    assert body["maxima"] == {"runtimeMs": 60000, "memoryMb": 512, "cpuMs": 30000}


# -- reading -------------------------------------------------------------------------

def test_code_is_the_source_exactly(client: httpx.Client, hub: HubProcess) -> None:
    resp = code_of(client, "_test-sandbox")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/javascript")
    assert resp.content == (hub.jobs_dir / "_test-sandbox.job.js").read_bytes()


def test_code_refusals(client: httpx.Client) -> None:
    refused(code_of(client, "mt_no_such_job"), 404, "SYS-404")
    refused(code_of(client, "bad.name"), 400, "HUB-007")
    refused(code_of(client, "bad%20name"), 400, "HUB-007")


def test_code_keeps_crlf_line_endings(client: httpx.Client, mt_job: str) -> None:
    source = "/*\r\nName: crlf\r\n*/\r\nreturn 1\r\n"
    assert save(client, mt_job, source).status_code == 200
    assert code_of(client, mt_job).text == source


# -- saving --------------------------------------------------------------------------

def test_save_creates_then_overwrites(client: httpx.Client, mt_job: str) -> None:
    first = save(client, mt_job, "/*\nName: Version one\n*/\nreturn { v: 1, é: '😀' }")
    assert first.status_code == 200 and first.json()["success"] is True
    job = first.json()["job"]
    assert (job["name"], job["title"], job["store"]) == (mt_job, "Version one", "files")
    assert listed(client)[mt_job]["title"] == "Version one"
    assert run_plain(client, mt_job).json() == {"v": 1, "é": "😀"}
    assert code_of(client, mt_job).text == "/*\nName: Version one\n*/\nreturn { v: 1, é: '😀' }"
    second = save(client, mt_job, "return { v: 2 }")
    assert second.status_code == 200 and second.json()["job"]["title"] == mt_job
    assert second.json()["job"]["modified"] >= job["modified"]
    assert run_plain(client, mt_job).json() == {"v": 2}
    assert code_of(client, mt_job).text == "return { v: 2 }"


@pytest.mark.parametrize("name", ["bad.name", "bad name", "", "x" * 101, "../etc",
                                  "available", "running", "health", "save"])
def test_save_refuses_bad_and_reserved_names(client: httpx.Client, name: str) -> None:
    refused(save(client, name, "return 1"), 400, "HUB-007")


def test_save_refuses_a_null_name(client: httpx.Client) -> None:
    try:
        resp = client.post(f"{API}/save", json={"name": None, "code": "return 1"}, headers=AUTH)
        assert resp.status_code == 400 and resp.json()["code"] == "HUB-007"
    finally:
        client.delete(f"{API}/None", headers=AUTH)


@pytest.mark.parametrize(("code", "line", "column"), [
    ("const a = 1\nconst b = (\nreturn a", 3, 1),
    ("let = ;", 1, 7),
    ("return {", 1, None),  # the error is at the very end of the source
])
def test_save_refuses_code_that_does_not_parse(client: httpx.Client, code: str, line: int,
                                               column: int | None) -> None:
    body = refused(save(client, "mt_broken", code), 400, "HUB-008")
    assert "SyntaxError" in body["error"] and f"(line {line})" in body["error"]
    assert body["line"] == line and body.get("column") == column
    refused(code_of(client, "mt_broken"), 404, "SYS-404")  # nothing was written


def test_save_refuses_a_body_that_closes_its_wrapper(client: httpx.Client) -> None:
    body = refused(save(client, "mt_breakout", "return 1\n})(); (async () => {"), 400,
                   "HUB-008")
    assert "closes its function early" in body["error"]
    refused(code_of(client, "mt_breakout"), 404, "SYS-404")


@pytest.mark.parametrize(("body", "code"), [
    ({"json": {"name": "mt_job", "code": "const = ;"}}, "HUB-008"),
    ({"json": {"name": "mt_job", "code": "})(); (async () => {"}}, "HUB-008"),
    ({"json": {"name": "mt_job"}}, "HUB-001"),
    ({"json": {"name": "mt_job", "code": "  \n"}}, "HUB-001"),
    ({"json": {"name": "mt_job", "code": 42}}, "HUB-001"),
    ({"json": ["mt_job", "return 1"]}, "HUB-001"),
    ({"content": b"{not json", "headers": {"Content-Type": "application/json"}}, "HUB-001"),
], ids=["syntax", "breakout", "no-code", "blank-code", "code-not-text", "array", "not-json"])
def test_refused_save_keeps_the_old_version(client: httpx.Client, mt_job: str,
                                            body: dict[str, Any], code: str) -> None:
    assert save(client, mt_job, "return { v: 'old' }").status_code == 200
    before = listed(client)[mt_job]["modified"]
    kw = dict(body)
    headers = {**AUTH, **kw.pop("headers", {})}
    refused(client.post(f"{API}/save", headers=headers, **kw), 400, code)
    assert code_of(client, mt_job).text == "return { v: 'old' }"
    assert run_plain(client, mt_job).json() == {"v": "old"}
    assert listed(client)[mt_job]["modified"] == before


def test_saving_leaves_no_temporary_files(client: httpx.Client, hub: HubProcess,
                                          mt_job: str) -> None:
    for code in ("return 1", "return 2", "let = ;", "return 3"):
        save(client, mt_job, code)
    leftovers = [p for p in hub.jobs_dir.rglob("*") if p.is_file()
                 and not p.name.endswith(".job.js") and p.name != "index.json"]
    assert leftovers == []
    assert [p.name for p in hub.jobs_dir.iterdir() if p.name.startswith(".")] == [".versions"]


# -- uploading -----------------------------------------------------------------------

def test_upload_names_the_job_after_its_file(client: httpx.Client) -> None:
    try:
        resp = client.post(f"{API}/upload", headers=AUTH,
                           files={"file": ("mt_up.job.js", b"return { up: 1 }")})
        assert resp.status_code == 200 and resp.json()["job"]["name"] == "mt_up"
        assert run_plain(client, "mt_up").json() == {"up": 1}
        named = client.post(f"{API}/upload", headers=AUTH, data={"name": "mt_up_named"},
                            files={"file": ("whatever.job.js", b"return { up: 2 }")})
        assert named.status_code == 200 and named.json()["job"]["name"] == "mt_up_named"
        assert run_plain(client, "mt_up_named").json() == {"up": 2}
        refused(code_of(client, "whatever"), 404, "SYS-404")
    finally:
        for name in ("mt_up", "mt_up_named"):
            client.delete(f"{API}/{name}", headers=AUTH)


@pytest.mark.parametrize("kw", [
    {"files": {"file": ("mt_latin.job.js", "return 'café'".encode("latin-1"))}},
    {"files": {"name": (None, "mt_latin")}},  # multipart without a file
    {},
], ids=["not-utf8", "no-file-field", "no-body"])
def test_upload_refusals(client: httpx.Client, kw: dict[str, Any]) -> None:
    refused(client.post(f"{API}/upload", headers=AUTH, **kw), 400, "HUB-001")
    refused(code_of(client, "mt_latin"), 404, "SYS-404")


def test_upload_with_a_bom_keeps_its_header(client: httpx.Client) -> None:
    source = "\ufeff/*\nName: Bom\nAccess: owner\n*/\nreturn 1".encode()
    try:
        resp = client.post(f"{API}/upload", headers=AUTH,
                           files={"file": ("public_mt_bom.job.js", source)})
        assert resp.status_code == 200
        assert (resp.json()["job"]["title"], resp.json()["job"]["access"]) == ("Bom", "owner")
        anonymous = client.get(f"{API}/public_mt_bom", headers=PLAIN)
        assert anonymous.status_code == 401
    finally:
        client.delete(f"{API}/public_mt_bom", headers=AUTH)


# -- deleting ------------------------------------------------------------------------

def test_delete_removes_the_job(client: httpx.Client) -> None:
    assert save(client, "mt_del", "return 1").status_code == 200
    resp = client.delete(f"{API}/mt_del", headers=AUTH)
    assert resp.status_code == 200 and resp.json() == {"success": True}
    refused(code_of(client, "mt_del"), 404, "SYS-404")
    refused(run_plain(client, "mt_del"), 404, "SYS-404")
    assert "mt_del" not in listed(client)
    refused(client.delete(f"{API}/mt_del", headers=AUTH), 404, "SYS-404")


def test_delete_refusals(client: httpx.Client) -> None:
    refused(client.delete(f"{API}/mt_never_saved", headers=AUTH), 404, "SYS-404")
    refused(client.delete(f"{API}/bad.name", headers=AUTH), 400, "HUB-007")


# -- ad-hoc runs ---------------------------------------------------------------------

def execute(c: httpx.Client, code: bytes, headers: dict[str, str] | None = None,
            **fields: str) -> httpx.Response:
    return c.post(f"{API}/execute", headers={**AUTH, **(headers or {})}, data=fields,
                  files={"file": ("mt_adhoc.job.js", code)})


def test_execute_runs_without_saving(client: httpx.Client) -> None:
    code = b"console.log('one')\nconsole.warn('two')\nreturn { params }"
    resp = execute(client, code, params='{"a": 1, "b": [2]}', enableLogger="1")
    assert resp.status_code == 200
    one, two, meta, payload = ndjson_events(resp)
    assert isinstance(one, LogLine) and (one.level, one.message) == ("log", "one")
    assert isinstance(two, LogLine) and (two.level, two.message) == ("warn", "two")
    assert isinstance(meta, MetaData) and meta.status == 200 and meta.type == "json"
    assert isinstance(payload, Payload)
    assert json.loads(payload.data) == {"params": {"a": 1, "b": [2]}}
    assert "mt_adhoc" not in listed(client)
    refused(code_of(client, "mt_adhoc"), 404, "SYS-404")


def test_execute_answers_ndjson_whatever_the_accept(client: httpx.Client) -> None:
    resp = execute(client, b"console.log('quiet')\nreturn params", headers=PLAIN)
    assert resp.status_code == 200
    meta, payload = ndjson_events(resp)  # no console lines without enableLogger
    assert isinstance(meta, MetaData) and isinstance(payload, Payload)
    assert json.loads(payload.data) == {}


@pytest.mark.parametrize(("code", "error_code", "needle", "limit"), [
    (b"throw new Error('adhoc boom')", "JOB-001", "adhoc boom", None),
    (b"/*\nRuntime: 300\n*/\nawait new Promise(r => setTimeout(r, 5000))", "JOB-003",
     "300 ms", "runtime"),
])
def test_failing_execute_is_one_failure_line(client: httpx.Client, code: bytes, error_code: str,
                                             needle: str, limit: str | None) -> None:
    resp = execute(client, code)
    assert resp.status_code == 500
    (failure,) = ndjson_events(resp)
    assert isinstance(failure, Failure) and failure.code == error_code
    assert needle in failure.error and failure.limit == limit and failure.ref


def test_execute_refusals(client: httpx.Client) -> None:
    refused(execute(client, b"return 1", params="{not json"), 400, "HUB-001")
    refused(client.post(f"{API}/execute", headers=AUTH, files={"params": (None, "{}")}), 400,
            "HUB-001")


def test_execute_refuses_a_body_that_closes_its_wrapper(client: httpx.Client) -> None:
    code = b"return 1\n}); console.log('outside the wrapper'); (async () => {"
    events = ndjson_events(execute(client, code, enableLogger="1"))
    assert not [e for e in events if isinstance(e, LogLine)]
    assert isinstance(events[-1], Failure)


@pytest.mark.parametrize(("code", "line"), [(b"return {", 1), (b"const a = (\n", 2)])
def test_execute_syntax_error_names_a_line_of_the_source(client: httpx.Client, code: bytes,
                                                         line: int) -> None:
    (failure,) = ndjson_events(execute(client, code))
    assert isinstance(failure, Failure) and failure.code == "JOB-001"
    assert "\n" not in failure.error and "job.js" not in failure.error
    assert failure.line == line


# -- running and stopping ------------------------------------------------------------

def wait_for_run(c: httpx.Client, job_name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        runs: list[dict[str, Any]] = [
            r for r in c.get(f"{API}/running", headers=AUTH).json()["running"]
            if r["jobName"] == job_name]
        if runs:
            (run,) = runs
            return run
        time.sleep(0.02)  # polling another process: there is no event to await
    raise AssertionError(f"{job_name} never appeared in /running")


def test_running_and_stop(hub: HubProcess, client: httpx.Client) -> None:
    t0 = time.monotonic()
    with hub.client() as caller, caller.stream(
            "GET", f"{API}/public_slow", params={"ms": "10000", "enableLogger": "1"}) as resp:
        assert resp.status_code == 200
        lines = resp.iter_lines()
        assert json.loads(next(lines))["message"] == "started"
        run = wait_for_run(client, "public_slow")
        assert run["jobId"].startswith("job_") and run["source"] == "http"
        assert run["node"] == "test-node"
        assert isinstance(run["runtime"], int) and 0 <= run["runtime"] < 10000
        refused(client.post(f"{API}/{run['jobId']}/stop"), 401, "AUTH-SESSION-001")
        assert wait_for_run(client, "public_slow")["jobId"] == run["jobId"]  # still running
        stop = client.post(f"{API}/{run['jobId']}/stop", headers=AUTH)
        assert stop.status_code == 200 and stop.json() == {"success": True, "stopped": True,
                                                    "node": "test-node"}
        rest = [parse_line(line) for line in lines if line.strip()]
    assert time.monotonic() - t0 < 5  # ended by the stop, not by the 10 s sleep
    (failure,) = rest
    assert isinstance(failure, Failure)
    assert (failure.code, failure.error) == ("JOB-001", "Stopped")
    assert client.get(f"{API}/running", headers=AUTH).json() == {"running": []}
    again = client.post(f"{API}/{run['jobId']}/stop", headers=AUTH)
    assert again.status_code == 404 and again.json()["code"] == "SYS-404"


def test_stopping_an_unknown_run_is_404(client: httpx.Client) -> None:
    resp = client.post(f"{API}/job_0000000000000abcdef/stop", headers=AUTH)
    assert resp.status_code == 404
    assert resp.json()["code"] == "SYS-404" and resp.json()["ref"] and not resp.json()["success"]


# -- the jobs folder -----------------------------------------------------------------

def test_shipped_folder_has_no_stray_files(hub: HubProcess) -> None:
    assert "is not a job" not in hub.log_text()


def test_plain_js_file_is_reported_once(tmp_path: Path) -> None:
    jobs_dir = tmp_path / "jobs"
    jobs_dir.mkdir()
    (jobs_dir / "helper.js").write_text("export const helper = 1\n")
    hub = launch_hub(tmp_path, jobs={})  # copies the shipped jobs beside helper.js
    try:
        with hub.client() as c:
            assert "helper" not in listed(c)
            assert run_plain(c, "public_ping").status_code == 200
    finally:
        hub.stop()
    assert_clean_log(hub)
    assert hub.log_text().count("helper.js in the jobs folder is not a job") == 1
