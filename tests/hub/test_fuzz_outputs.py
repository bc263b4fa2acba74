"""Hostile output from a job, through every way a run's text leaves the hub: returned
(as JSON and as a bare string), logged, thrown (an Error, a bare value, a rejected
promise, a timer), ``success: false``, and through ``response.text/html/json/raw/csv/
file/pdf/redirect`` with the text in bodies, header names and values, content types,
file names and locations. The text is any UTF-8 text the caller sends plus UTF-16 the
job builds itself: code units the caller picks (lone surrogates included) and the
classic cut pair ``'😀😀'.slice(0, 3)``.

After every example: the answer is 2xx/3xx/4xx or the job's failure (JOB-00x), with a
code when it is a failure; every worker is back; the run is in history (its output and
logs read back, and a search for its text answers). Headers a job sets never inject
others, set the hub's own cookies or send a browser to a non-http(s) location, and
every answer says ``nosniff``; a type a browser runs scripts in gets a CSP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from shared.text import clean_text
from tests.hub.conftest import AUTH, HubProcess, running_hub
from tests.hub.fuzz_support import (
    CLEAN_TEXT,
    FUZZ,
    Answer,
    assert_log_quiet,
    assert_normal_run_recorded,
    assert_recorded,
    assert_workers_back,
    check_answer,
    log_news,
    ndjson_lines,
    send,
    whole_pool,
)

OUT = "public_fuzz_out"
JOBS = {OUT: r"""/*
Runtime: 3000
*/
const made = { none: '', split: '😀😀'.slice(0, 3), high: String.fromCharCode(0xD800),
  low: String.fromCharCode(0xDC00), reversed: String.fromCharCode(0xDC00, 0xD800) }
const codes = Array.isArray(params.codes) ? params.codes : []
const text = String(params.text ?? '') + String.fromCharCode(...codes) + (made[params.made] ?? '')
switch (params.mode) {
  case 'return': return { text, [text]: text }
  case 'string': return text
  case 'log': console.log(text); console.warn({ text }); console.error(text, [text])
    return { logged: text.length }
  case 'throw': throw new Error(text)
  case 'throw-value': throw text
  case 'reject': return Promise.reject(new Error(text))
  case 'timer': setTimeout(() => { throw new Error(text) }, 0)
    await new Promise(r => setTimeout(r, 100)); return 'late'
  case 'false': return { success: false, error: text }
  case 'text': return response.text(text)
  case 'html': return response.html(text)
  case 'json-status': return response.json({ text }, Number(params.status))
  case 'raw': return response.raw(text, { 'Content-Type': 'text/plain', 'X-Fuzz': text }, 200)
  case 'raw-type': return response.raw('<p>x</p>', { 'Content-Type': text })
  case 'header-name': return response.raw('x', { [text]: 'v' })
  case 'set-cookie': return response.raw('x', { 'Set-Cookie': text })
  case 'redirect': return response.redirect(text)
  case 'csv': return response.csv(text, text)
  case 'file': return response.file(text, text, text)
  case 'pdf': return response.pdf(text, text)
}
return { mode: params.mode }
"""}
BODY_MODES = ["return", "string", "log", "throw", "throw-value", "reject", "timer", "false",
              "text", "html", "json-status", "csv", "file", "pdf"]
HEADER_MODES = ["raw", "raw-type", "header-name", "set-cookie", "redirect", "csv", "file"]
MADE = st.sampled_from(["none", "split", "high", "low", "reversed"])
CODE_UNITS = st.lists(st.integers(0xD800, 0xDFFF) | st.integers(0, 0xFFFF), max_size=4)
# Statuses a job may ask for, odd ones included (a job's own 5xx is its answer, not a
# fault, so those are left out: the checks could not tell them from one).
STATUSES = st.sampled_from([101, 103, 200, 201, 204, 205, 299, 302, 304, 400, 401, 404, 418, 499,
                            0, 99, 600, 1000, -1, 1.5, "x"])
# What an attacker would put in a header, a type or a location.
HOSTILE = st.sampled_from([
    "javascript:alert(1)", " JavaScript:alert(1)", "\x01javascript:alert(1)",
    "data:text/html,<script>1</script>", "vbscript:x", "//evil.example/x", "/next?a=1",
    "https://example.org/ok", "x\r\nX-Injected: 1", "x\nX-Injected: 1", "x\rX-Injected: 1",
    "webhub_session=stolen; Path=/", "webhub_debug=1; Path=/api/webjobs", "text/html",
    "Text/HTML; charset=utf-8", "application/xhtml+xml", "image/svg+xml", "text/xml",
    "application/xml", "application/rss+xml", "text/plain", "", "a b", "ä", "\x00", "x:y",
])
TEXTS = st.one_of(CLEAN_TEXT, HOSTILE)
FORMS = st.sampled_from(["plain", "ndjson", "live", "raw"])
SCRIPT_TYPES = ("text/html", "application/xhtml+xml", "image/svg+xml", "text/xml",
                "application/xml")
HUB_COOKIES = ("webhub_session", "webhub_debug")


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("fuzz-outputs"), jobs=JOBS) as process:
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
    """The pool's size, once it is whole (a pool the test before broke is blamed on it)."""
    assert_workers_back(client, hub, full_pool, "the test before this one")
    return full_pool


def run_out(client: httpx.Client, params: dict[str, Any], form: str) -> Answer:
    """Run the job with ``params`` in one of the answer forms (see the README)."""
    # A connection of its own: an answer that breaks its connection (a body longer than
    # its Content-Length, say) must not fail the next request instead (the log says why).
    headers = {"Accept": "application/json" if form == "plain" else "*/*",
               "Connection": "close"}
    flags = {"live": {"enableLogger": "1"}, "raw": {"raw": "1"}}.get(form, {})
    body = json.dumps({**params, **flags}).encode()
    return send(client, "POST", f"/api/webjobs/{OUT}", body,
                {**headers, "Content-Type": "application/json"}, f"{form} {body[:400]!r}")


def settle_run(client: httpx.Client, hub: HubProcess, pool: int, answer: Answer,
               text: str, own_status: bool = False) -> None:
    """The checks every example ends with. ``own_status``: the job chose its status (a
    4xx it answers with is its answer, not a refusal that needs a code)."""
    check_answer(answer, hub, job_status_ok=own_status)
    assert_workers_back(client, hub, pool, answer.sent)
    job_id = answer.headers.get("x-job-id") or meta_job_id(answer)
    if job_id:  # a live failure names no run (see test_live_answers_carry_the_job_id)
        assert_recorded(client, hub, job_id, answer.sent)
    found = client.get("/api/webjobs/history", params={"search": text[:50]}, headers=AUTH)
    assert found.status_code == 200, \
        f"/history?search={text[:50]!r}: {found.status_code} {found.text[:300]}\n" \
        f"after: {answer.sent}\nhub log:\n{log_news(hub)}"
    assert_log_quiet(hub, answer.sent)


def meta_job_id(answer: Answer) -> str | None:
    if answer.content_type != "application/x-ndjson":
        return None
    _, meta, _ = ndjson_lines(answer.body)
    return None if meta is None else str(meta["jobId"])


def made_text(params: dict[str, Any]) -> str:
    """What the job builds, as the hub must carry it (lone surrogates as U+FFFD)."""
    made = {"none": "", "split": "😀\ud83d", "high": "\ud800", "low": "\udc00",
            "reversed": "\udc00\ud800"}[params["made"]]
    return clean_text(params["text"] + "".join(map(chr, params["codes"])) + made)


def job_value(answer: Answer) -> Any:
    if answer.content_type == "application/x-ndjson":
        _, meta, data = ndjson_lines(answer.body)
        assert meta is not None, answer.describe()
        return json.loads(data)
    return json.loads(answer.body)


def test_text_a_job_makes_leaves_the_hub(hub: HubProcess, client: httpx.Client,
                                         pool: int) -> None:
    @FUZZ
    @given(mode=st.sampled_from(BODY_MODES), text=TEXTS, codes=CODE_UNITS, made=MADE,
           status=STATUSES, form=FORMS)
    # A pair the job cuts itself, logged and returned (the engine's hang the issue names).
    @example(mode="log", text="x", codes=[], made="split", status=200, form="live")
    @example(mode="return", text="x", codes=[0xD800], made="none", status=200, form="plain")
    @example(mode="json-status", text="x", codes=[], made="none", status=304, form="raw")
    @example(mode="json-status", text="x", codes=[], made="none", status=101, form="raw")
    def case(mode: str, text: str, codes: list[int], made: str, status: Any,
                form: str) -> None:
        params = {"mode": mode, "text": text, "codes": codes, "made": made, "status": status}
        answer = run_out(client, params, form)
        settle_run(client, hub, pool, answer, text, own_status=mode == "json-status")
        if answer.status == 200 and mode in ("return", "string"):
            expected = made_text(params)
            got = job_value(answer)
            assert got == ({"text": expected, expected: expected} if mode == "return"
                           else expected), answer.describe()
        if answer.status == 200 and mode == "text" and form in ("plain", "raw"):
            assert answer.body.decode("utf-8") == made_text(params), answer.describe()

    case()
    assert_normal_run_recorded(client, hub)


def check_headers_safe(answer: Answer) -> None:
    """No header the job did not name, no hub cookie, no script location, nosniff, and
    a CSP on a type a browser runs scripts in."""
    names = [name for name, _ in answer.extra_headers]
    assert "x-injected" not in names, f"a header was injected\n{answer.describe()}"
    for name, value in answer.extra_headers:
        if name == "set-cookie":
            cookie = value.split("=", 1)[0].strip().lower()
            assert cookie not in HUB_COOKIES, f"a job set the hub's cookie\n{answer.describe()}"
    location = answer.headers.get("location")
    if location is not None:
        scheme = urlsplit(location.lstrip("".join(map(chr, range(33))))).scheme.lower()
        assert scheme in ("", "http", "https"), f"a {scheme}: location\n{answer.describe()}"
    assert answer.headers.get("x-content-type-options") == "nosniff", \
        f"no nosniff\n{answer.describe()}"
    ctype = answer.content_type
    if ctype in SCRIPT_TYPES or ctype.endswith("+xml"):
        assert "content-security-policy" in answer.headers, \
            f"a {ctype} answer without a CSP\n{answer.describe()}"


def test_headers_a_job_sets_are_safe(hub: HubProcess, client: httpx.Client,
                                     pool: int) -> None:
    @FUZZ
    @given(mode=st.sampled_from(HEADER_MODES), text=TEXTS, codes=CODE_UNITS, made=MADE,
           form=st.sampled_from(["plain", "raw", "ndjson"]))
    @example(mode="redirect", text="javascript:alert(1)", codes=[], made="none", form="plain")
    @example(mode="raw", text="x\r\nX-Injected: 1", codes=[], made="none", form="plain")
    @example(mode="raw-type", text="image/svg+xml", codes=[], made="none", form="raw")
    def case(mode: str, text: str, codes: list[int], made: str, form: str) -> None:
        params = {"mode": mode, "text": text, "codes": codes, "made": made}
        answer = run_out(client, params, form)
        settle_run(client, hub, pool, answer, text)
        check_headers_safe(answer)

    case()
    assert_normal_run_recorded(client, hub)


@pytest.mark.parametrize("mode", ["return", "throw"])
def test_live_answers_carry_the_job_id(client: httpx.Client, pool: int, mode: str) -> None:
    """The README: every answer from a run, a failure included, carries X-Job-Id; a live
    (enableLogger) answer too, or its failure line could not be found in history."""
    answer = run_out(client, {"mode": mode, "text": "t", "codes": [], "made": "none"}, "live")
    assert answer.status == 200 and answer.headers.get("x-job-id"), answer.describe()
