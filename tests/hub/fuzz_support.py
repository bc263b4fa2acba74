"""What the fuzz modules share: strategies for hostile text and JSON, a raw HTTP/1.1
client (httpx refuses to send what an attacker would), and the checks every example
ends with: the answer is 2xx/3xx/4xx (or a job's own failure, JOB-00x) and names a
`code` when it is a failure; every worker is back; the run reached history.

A failed check says what was sent, what came back and the last lines the hub
logged meanwhile, so a failure report can be read without re-running it."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_from_bytes, urlsplit

import httpx
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from tests.hub.conftest import AUTH, HubProcess, without_job_console

# Bounded, no deadline (a hub on two busy cores is slow now and then) and no shrinking:
# a hub that lost its workers makes every later request wait for its timeout, so
# shrinking would take minutes; the example that first failed is reported as it is.
FUZZ = settings(max_examples=50, deadline=None, print_blob=True,
                phases=[Phase.explicit, Phase.reuse, Phase.generate],
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])

JOB_FAILURES = ("JOB-001", "JOB-002", "JOB-003", "JOB-004")
REQUEST_TIMEOUT_S = 20.0
SETTLE_TIMEOUT_S = 15.0

# Every code point, lone surrogates included (hypothesis leaves out Cs by default),
# with the surrogate range and a few known troublemakers drawn more often.
ANY_CHAR = st.characters(codec=None, exclude_categories=())
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TROUBLE = st.sampled_from([
    "\ud800", "\udfff", "a\ud83d", "\ude00b", "\x00", "\u2028", "\ufeff", "😀", "%", "%ff",
    "\r\n", "\\", '"', "'", "<script>", "__proto__", "constructor", "raw", "enableLogger",
    "_console", "_debug", "..", "/", "?", "#", "&", "=", "+", " ", "\t", "\x7f", "\xff",
])
ANY_TEXT = st.lists(st.one_of(st.text(ANY_CHAR, max_size=8), SURROGATE, TROUBLE),
                    max_size=6).map("".join)
# Text that UTF-8 carries as it is (what a well-behaved client sends).
CLEAN_TEXT = st.text(st.characters(codec="utf-8"), max_size=30)
HUGE_INTS = st.sampled_from([2**53 + 1, -(2**63), 2**64, 10**30, 10**300])
JSON_SCALARS = (st.none() | st.booleans() | st.integers() | HUGE_INTS
                | st.floats(allow_nan=False, allow_infinity=False) | ANY_TEXT)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12)
# JSON texts Python's parser accepts but a strict one (or V8) may not, and texts
# nested or sized beyond what a recursive encoder survives.
ODD_JSON_TEXTS = [
    b'{"who":"\\ud800"}', b'{"\\udc00":1}', b'"\\ud800"', b'["\\udbff\\udfff\\udbff"]',
    b'{"x":NaN}', b'{"x":Infinity}', b'{"x":-Infinity}', b'{"x":1e999}', b'{"x":-0.0}',
    b'{"x":' + b"9" * 5000 + b"}", b'{"a":1,"a":2}', b'{"__proto__":{"polluted":1}}',
    b"[" * 5000 + b"]" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b"[" * 100_000, b'{"x":"\xed\xa0\x80"}', b'{"x":"\xff\xfe"}', b"\xef\xbb\xbf{}",
    b"", b"null", b"[]", b"0", b'"text"', b"{", b"\x00",
]
ODD_JSON = st.sampled_from(ODD_JSON_TEXTS)


def json_body(value: Any) -> bytes:
    """``value`` as JSON text; lone surrogates go out as the ``\\ud800`` escapes."""
    return json.dumps(value).encode("ascii")


RAW_JSON = st.one_of(JSON_VALUES.map(json_body), ODD_JSON)


def wtf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate as the three bytes UTF-8 would give it (which
    no decoder accepts): what a client that does not check sends."""
    return text.encode("utf-8", "surrogatepass")


def percent(text: str) -> str:
    return quote_from_bytes(wtf8(text), safe="")


def query_of(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{percent(k)}={percent(v)}" for k, v in pairs)


def has_surrogate(value: Any) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in json.dumps(value, ensure_ascii=False))


def js_safe(value: Any) -> bool:
    """Whether ``value`` survives a JavaScript round trip exactly (ints within 2**53)."""
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return True
    if isinstance(value, int):
        return abs(value) <= 2**53
    if isinstance(value, list):
        return all(js_safe(v) for v in value)
    if isinstance(value, dict):
        return all(js_safe(v) for v in value.values())
    return False


@dataclass
class Answer:
    """One HTTP answer, from httpx or from the raw client."""

    status: int
    headers: dict[str, str]
    body: bytes
    sent: str = ""
    extra_headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def of(cls, response: httpx.Response, sent: str) -> Answer:
        return cls(response.status_code, {k.lower(): v for k, v in response.headers.items()},
                   response.content, sent,
                   [(k.lower(), v) for k, v in response.headers.multi_items()])

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def describe(self) -> str:
        return (f"sent: {self.sent[:600]}\ngot: {self.status} {self.content_type}\n"
                f"body: {self.body[:600]!r}")


def send(client: httpx.Client, method: str, path: str, content: bytes = b"",
         headers: dict[str, str] | None = None, sent: str = "") -> Answer:
    """One request through httpx; a dropped connection is an answer too (status 0)."""
    sent = sent or f"{method} {path} {content[:400]!r}"
    try:
        response = client.request(method, path, content=content, headers=headers)
    except httpx.TransportError as exc:
        return Answer(0, {}, repr(exc).encode(), sent)
    finally:
        # A job's answer may set any cookie; kept, a non-ASCII one would make httpx
        # fail the client's next request before it is sent.
        client.cookies.clear()
    return Answer.of(response, sent)


def raw_request(url: str, method: str, target: bytes, headers: list[tuple[bytes, bytes]],
                body: bytes = b"") -> Answer:
    """Send exactly these bytes as an HTTP/1.1 request and read the whole answer."""
    parts = urlsplit(url)
    head = [method.encode() + b" " + target + b" HTTP/1.1",
            f"Host: {parts.netloc}".encode(), b"Connection: close",
            f"Content-Length: {len(body)}".encode()]
    head += [name + b": " + value for name, value in headers]
    wire = b"\r\n".join(head) + b"\r\n\r\n" + body
    sent = f"{method} {target!r} headers={headers!r} body={body[:300]!r}"
    chunks = []
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80),
                                      timeout=REQUEST_TIMEOUT_S) as sock:
            sock.sendall(wire)
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    except OSError as exc:  # reset or timed out: no answer (status 0)
        return Answer(0, {}, repr(exc).encode(), sent)
    return _parse_answer(b"".join(chunks), sent)


def raw_bytes(url: str, wire: bytes) -> Answer:
    """Send ``wire`` as it is, then end the sending side (so a request cut short is
    not waited for), and read whatever answer comes back (none: status 0)."""
    parts = urlsplit(url)
    chunks = []
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80),
                                      timeout=REQUEST_TIMEOUT_S) as sock:
            sock.sendall(wire)
            sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    except OSError as exc:
        return Answer(0, {}, repr(exc).encode(), repr(wire[:300]))
    return _parse_answer(b"".join(chunks), repr(wire[:300]))


def _parse_answer(data: bytes, sent: str) -> Answer:
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not lines or len(lines[0].split(b" ")) < 2:
        return Answer(0, {}, data, sent)  # the connection closed without an answer
    status = int(lines[0].split(b" ")[1])
    pairs = [line.decode("latin-1").split(":", 1) for line in lines[1:] if b":" in line]
    multi = [(k.strip().lower(), v.strip()) for k, v in pairs]
    headers = dict(multi)
    if headers.get("transfer-encoding", "").lower() == "chunked":
        rest = _unchunk(rest)
    return Answer(status, headers, rest, sent, multi)


def _unchunk(data: bytes) -> bytes:
    out, pos = [], 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            break
        size = int(data[pos:end].split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(data[end + 2:end + 2 + size])
        pos = end + 2 + size + 2
    return b"".join(out)


def ndjson_lines(body: bytes) -> tuple[list[dict[str, Any]], dict[str, Any] | None, bytes]:
    """(event lines, the metadata line or None, the data after it) of an NDJSON answer.
    Every line before the data must be a JSON object."""
    events: list[dict[str, Any]] = []
    rest = body
    while rest:
        line, _, after = rest.partition(b"\n")
        item = json.loads(line)
        assert isinstance(item, dict), f"an NDJSON line that is not an object: {line[:200]!r}"
        if item.get("isMetaData"):
            return events, item, after
        events.append(item)
        rest = after
    return events, None, b""


def failures_of(answer: Answer) -> list[dict[str, Any]]:
    """The failure objects an answer carries (a JSON error, or NDJSON failure lines)."""
    if answer.content_type == "application/x-ndjson":
        events, _, _ = ndjson_lines(answer.body)
        return [e for e in events if e.get("success") is False]
    if answer.status >= 400 and answer.content_type == "application/json":
        data = json.loads(answer.body)
        return [data] if isinstance(data, dict) else [{"code": None, "body": data}]
    return []


def check_answer(answer: Answer, hub: HubProcess, job_status_ok: bool = False) -> None:
    """2xx/3xx/4xx, or a job failure (JOB-00x) with its own status; every failure names
    a code, and none is the hub's internal fault (SYS-500). ``job_status_ok``: a 5xx
    the job itself chose is its answer, not a fault."""
    def fail(why: str) -> str:
        return f"{why}\n{answer.describe()}\nhub log:\n{log_news(hub)}"

    assert answer.status != 0, fail("the connection closed without an answer")
    try:
        failures = failures_of(answer)
    except ValueError as exc:
        raise AssertionError(fail(f"the answer does not decode: {exc}")) from None
    if job_status_ok:  # the job's own JSON at its own 4xx is its answer, not a failure
        failures = [f for f in failures if f.get("success") is False]
    codes = [f.get("code") for f in failures]
    for code in codes:
        assert isinstance(code, str) and code, fail("a failure without a code")
        assert not code.startswith("SYS-5"), fail(f"a hub fault: {code}")
    if answer.status >= 400:
        assert codes or job_status_ok, fail("a failure status without a coded error")
    if answer.status >= 500:
        assert job_status_ok or all(c in JOB_FAILURES for c in codes), \
            fail("a 5xx that is not a job's failure")


_log_seen: dict[str, int] = {}
_log_checked: dict[str, int] = {}


def _log_since(hub: HubProcess, cursors: dict[str, int]) -> str:
    """The hub's log from where ``cursors`` left it for this hub (read from that offset)."""
    with open(hub.log_path, "rb") as log:
        log.seek(cursors.get(hub.url, 0))
        data = log.read()
    cursors[hub.url] = cursors.get(hub.url, 0) + len(data)
    return data.decode("utf-8", "replace")


def assert_log_quiet(hub: HubProcess, after: str) -> None:
    """Nothing the hub logged since the last check is a traceback or an ERROR (a fault
    the answer may not show: one after the answer's head went out, in a worker...)."""
    text = without_job_console(_log_since(hub, _log_checked))
    assert "Traceback" not in text and " ERROR " not in text and "ERROR:" not in text, \
        f"the hub logged a fault\nafter: {after[:600]}\nhub log:\n{log_news(hub)}"


def log_news(hub: HubProcess, keep: int = 10) -> str:
    """What the hub logged since the last call, for failure messages: its last ``keep``
    lines, each traceback cut to its last frame and its exception."""
    text = _log_since(hub, _log_seen)
    out: list[str] = []
    frame: list[str] = []
    for line in text.splitlines():
        if line.startswith("Traceback"):
            out.append("  [traceback]")
        elif line.startswith('  File "'):
            frame = [line]
        elif line.startswith("    ") and len(frame) == 1:
            frame.append(line)
        elif line.strip() and not line.startswith((" ", "During handling", "The above")):
            out += [*frame, line]
            frame = []
    return "\n".join(out[-keep:])


def wait_for(check: Callable[[], Any], timeout: float = SETTLE_TIMEOUT_S) -> Any:
    """Poll another process's state (there is no event to await) until ``check`` gives
    something truthy, or the deadline; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


def worker_counts(client: httpx.Client) -> dict[str, Any]:
    data: dict[str, Any] = client.get("/api/webjobs/health").json()
    return data


def assert_workers_back(client: httpx.Client, hub: HubProcess, pool: int,
                        after: str = "") -> None:
    """Every worker of the pool is alive and idle again (``/health``: ``workers`` and
    ``idle`` back to the pool's size, none starting, no run in flight)."""
    def settled() -> dict[str, Any] | None:
        counts = worker_counts(client)
        full = (counts.get("workers") == counts.get("idle") == pool
                and counts.get("starting") == 0 and counts.get("workersRunning") == 0)
        return None if not full else counts

    if wait_for(settled) is None:
        raise AssertionError(f"workers did not come back to {pool} idle: "
                             f"{worker_counts(client)}\nafter: {after[:600]}\n"
                             f"hub log:\n{log_news(hub)}")


def assert_recorded(client: httpx.Client, hub: HubProcess, job_id: str,
                    after: str = "") -> dict[str, Any]:
    """The run ``job_id`` reached history as ended, and its record reads back."""
    def ended() -> dict[str, Any] | None:
        got = client.get(f"/api/webjobs/{job_id}/output", headers=AUTH)
        if got.status_code == 200 and got.json().get("outcome") != "running":
            return dict(got.json())
        assert got.status_code in (200, 404), f"/output: {got.status_code} {got.text[:300]}"
        return None

    record: dict[str, Any] | None = wait_for(ended)
    assert record, f"run {job_id} never reached history\nafter: {after[:600]}\n" \
                   f"hub log:\n{log_news(hub)}"
    logs = client.get(f"/api/webjobs/{job_id}/logs", headers=AUTH)
    assert logs.status_code == 200, f"/logs: {logs.status_code} {logs.text[:300]}"
    return record


PING_JOB = "public_ping"


def assert_normal_run_recorded(client: httpx.Client, hub: HubProcess) -> None:
    """A plain run still works and is recorded in history, after everything before it."""
    answer = client.get(f"/api/webjobs/{PING_JOB}", params={"who": "after-fuzz"},
                        headers={"Accept": "application/json"})
    assert answer.status_code == 200 and answer.json() == {"pong": "after-fuzz"}, \
        f"{answer.status_code} {answer.text[:300]}\nhub log:\n{log_news(hub)}"
    record = assert_recorded(client, hub, answer.headers["x-job-id"], "the normal run")
    assert record["outcome"] == "success", record
    found = client.get("/api/webjobs/history", params={"job": PING_JOB, "limit": 5},
                       headers=AUTH)
    assert found.status_code == 200, found.text[:300]
    assert answer.headers["x-job-id"] in [r["jobId"] for r in found.json()["runs"]]


def whole_pool(client: httpx.Client) -> int:
    """The pool's size once a freshly started hub has every worker ready."""
    def ready() -> bool:
        counts = worker_counts(client)
        return counts.get("starting") == 0 and counts.get("workers") == counts.get("idle")

    assert wait_for(ready), f"the pool never got ready: {worker_counts(client)}"
    return int(worker_counts(client)["workers"])
