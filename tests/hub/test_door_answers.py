"""What leaves the hub's door, through a real hub process: headers a job sets are
checked (a bad one fails the run with JOB-001 in every answer form and in history),
the page CSP goes on every type a browser runs scripts in, and every answer says
``X-Content-Type-Options: nosniff``."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, running_hub
from tests.hub.test_history_api import eventually

API = "/api/webjobs"
# The job answers what the test posts: {kind, headers, url, name, type}.
JOBS = {
    "public_answer": (
        "if (params.kind === 'redirect') return response.redirect(params.url)\n"
        "if (params.kind === 'file') return response.file('eA==', params.name, params.type)\n"
        "return response.raw('<p>x</p>', params.headers || {})"),
}
PLAIN = {"Accept": "application/json"}
NDJSON = {"Accept": "application/x-ndjson"}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("door_answers"), jobs=JOBS) as process:
        yield process


@pytest.fixture(scope="module")
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        yield c


def answer(client: httpx.Client, accept: dict[str, str], **params: object) -> httpx.Response:
    return client.post(f"{API}/public_answer", json=params, headers=accept)


def assert_fails(client: httpx.Client, words: str, **params: object) -> None:
    """JOB-001 naming the problem, as plain JSON and as the NDJSON failure line."""
    plain = answer(client, PLAIN, **params)
    assert plain.status_code == 500, plain.text
    assert plain.json()["code"] == "JOB-001" and words in plain.json()["error"], plain.text
    streamed = answer(client, NDJSON, **params)
    line = json.loads(streamed.text.splitlines()[0])
    assert line["success"] is False and line["code"] == "JOB-001", line
    assert words in line["error"], line


@pytest.mark.parametrize(("headers", "words"), [
    ({"X-Evil": "a\r\nSet-Cookie: webhub_session=x"}, "line break"),
    ({"X-Evil": "a\nb"}, "line break"),
    ({"X-Evil": "a\x00b"}, "control character"),
    ({"X-Snow": "\u2603"}, "outside latin-1"),
    ({"X Bad": "1"}, "not a header name"),
    ({"X-Bad:": "1"}, "not a header name"),
    ({"\u00e9": "1"}, "not a header name"),
    ({"Content-Type": "text/plain\r\nX-Evil: 1"}, "line break"),
    ({"Set-Cookie": "webhub_session=stolen; Path=/"}, "hub's own cookie"),
    ({"set-cookie": " WEBHUB_DEBUG=abc"}, "hub's own cookie"),
    ({"Set-Cookie": "a=1; Path=/, webhub_session=x"}, "hub's own cookie"),
    ({"Location": "javascript:alert(1)"}, "redirect"),
    ({"Set-Cookie": "=webhub_session=attacker; Path=/"}, "needs a cookie name"),
    ({"Set-Cookie": " =webhub_debug=x"}, "needs a cookie name"),
    ({"Set-Cookie": "a=1, =webhub_session=x"}, "needs a cookie name"),
    ({"X-C1": "a\u0085b"}, "control character"),
])
def test_a_header_that_cannot_be_sent_fails_the_run(client: httpx.Client,
                                                    headers: dict[str, str],
                                                    words: str) -> None:
    assert_fails(client, words, headers=headers)


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JaVaScRiPt:alert(1)",
                                 " javascript:alert(1)", "java\tscript:alert(1)",
                                 "data:text/html,<script>x</script>",
                                 "vbscript:x", "ftp://example.org/x", "file:///etc/passwd"])
def test_a_redirect_outside_http_fails_the_run(client: httpx.Client, url: str) -> None:
    assert_fails(client, "redirect", kind="redirect", url=url)


@pytest.mark.parametrize("url", ["/elsewhere", "next?x=1", "https://example.org/a",
                                 "HTTP://example.org", "//example.org/x", "?a=b", "#top"])
def test_http_and_relative_redirects_go_out(client: httpx.Client, url: str) -> None:
    sent = client.post(f"{API}/public_answer", json={"kind": "redirect", "url": url},
                       headers=PLAIN, follow_redirects=False)
    assert sent.status_code == 302 and sent.headers["location"] == url


@pytest.mark.parametrize(("name", "ctype", "words"), [
    ("a\r\nb.png", "image/png", "file name"),
    ("snow\u2603.png", "image/png", "file name"),
    ("x.png", "image/png\r\nX-Evil: 1", "line break"),
    ("x.png", "image/\u2603", "outside latin-1"),
])
def test_a_file_answer_with_a_bad_name_or_type_fails(client: httpx.Client, name: str,
                                                     ctype: str, words: str) -> None:
    assert_fails(client, words, kind="file", name=name, type=ctype)


def test_a_refused_answer_is_a_failure_in_history(client: httpx.Client) -> None:
    sent = answer(client, PLAIN, headers={"Location": "data:,x"})
    job_id = sent.headers["x-job-id"]

    def recorded() -> object:
        found = client.get(f"{API}/{job_id}/output", headers=AUTH)
        return found.json() if found.status_code == 200 and found.json()["outcome"] \
            not in ("running", None) else None
    record = eventually(recorded)
    assert isinstance(record, dict) and record["outcome"] == "failed", record
    assert "redirect" in json.dumps(record)


def test_a_job_may_set_its_own_cookies(client: httpx.Client) -> None:
    sent = answer(client, PLAIN, headers={"Set-Cookie": "theme=dark; Path=/",
                                          "X-Latin": "caf\u00e9"})
    assert sent.status_code == 200 and sent.headers["set-cookie"] == "theme=dark; Path=/"


@pytest.mark.parametrize("ctype", [
    "text/html", "TEXT/HTML; charset=utf-8", " text/html ;q", "application/xhtml+xml",
    "image/svg+xml", "text/xml", "application/xml", "application/rss+xml",
    "text/xsl", "", "html", "text/plain,text/html", "application/json, text/html",
    "text/plain;,text/html",
])
def test_the_page_csp_goes_on_every_type_that_runs_scripts(client: httpx.Client,
                                                           ctype: str) -> None:
    sent = answer(client, PLAIN, headers={"Content-Type": ctype})
    assert sent.status_code == 200, sent.text
    assert "script-src" in sent.headers.get("content-security-policy", ""), sent.headers


@pytest.mark.parametrize("ctype", ["text/plain", "application/json", "image/png",
                                   "application/pdf", "text/csv"])
def test_inert_types_get_no_page_csp(client: httpx.Client, ctype: str) -> None:
    sent = answer(client, PLAIN, headers={"Content-Type": ctype})
    assert "content-security-policy" not in sent.headers


def test_a_file_download_of_svg_gets_the_page_csp(client: httpx.Client) -> None:
    sent = answer(client, PLAIN, kind="file", name="x.svg", type="image/svg+xml")
    assert "script-src" in sent.headers["content-security-policy"]


@pytest.mark.parametrize(("method", "path", "headers", "body"), [
    ("POST", "/public_answer", PLAIN, {}),                          # a job's answer
    ("POST", "/public_answer", NDJSON, {}),                         # its NDJSON form
    ("POST", "/public_answer", PLAIN, {"headers": {"X-Content-Type-Options": "no"}}),
    ("POST", "/public_answer", PLAIN, {"headers": {"X": "\r"}}),    # a failed run
    ("GET", "/health", {}, None),
    ("GET", "/no_such_job", PLAIN, None),                            # SYS-404
    ("GET", "/available", {}, None),                                 # 401
    ("GET", "/history?limit=0", AUTH, None),                         # HUB-001
    ("GET", "/available", AUTH, None),
])
def test_every_answer_says_nosniff(client: httpx.Client, method: str, path: str,
                                   headers: dict[str, str], body: object) -> None:
    sent = client.request(method, f"{API}{path}", headers=headers,
                          content=None if body is None else json.dumps(body),
                          )
    assert sent.headers.get_list("x-content-type-options") == ["nosniff"], sent.headers


@pytest.mark.parametrize("path", ["/login", "/nowhere", "/api/auth/me"])
def test_pages_outside_the_api_say_nosniff_too(client: httpx.Client, path: str) -> None:
    assert client.get(path).headers.get("x-content-type-options") == "nosniff"
