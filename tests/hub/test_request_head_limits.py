"""A request's line and headers may take 64 KB together: a longer URL, a huge cookie
or header, or thousands of headers get ``SYS-431`` (the hub's JSON failure) and the
connection is closed, before the HTTP parser copies them — a 48 MB header held the
event loop for seconds. Ordinary requests with a few KB of headers are untouched."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import httpx
import pytest

from tests.hub.conftest import HubProcess, running_hub
from tests.hub.test_hostile_bodies_hold_no_loop import Watcher


@pytest.fixture(scope="module")
def head_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("heads"),
                     jobs={"public_sink": "return { n: Object.keys(params).length }"}) as hub:
        yield hub


def _raw(hub: HubProcess, head: bytes) -> bytes:
    """Send ``head`` (a request line and headers, without the blank line) and the blank
    line; the answer's bytes (whatever came before the server closed)."""
    host, port = hub.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        # Refused before all of it was sent: the answer is still there to read.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(head + b"\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and answer.endswith(b"}"):
                break
        return answer


@pytest.mark.parametrize("head", [
    b"GET /api/webjobs/public_sink?" + b"a=1&" * 300_000 + b" HTTP/1.1\r\nHost: x",
    b"GET /api/webjobs/public_sink HTTP/1.1\r\nHost: x\r\nCookie: a=\"" + b"\\101" * 50_000
    + b"\"",
    b"GET /api/webjobs/public_sink HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * 5_000_000,
    b"GET /api/webjobs/public_sink HTTP/1.1\r\nHost: x" + b"\r\na:b" * 20_000,
], ids=["url", "cookie", "header", "many-headers"])
def test_a_head_over_64_kb_is_refused(head_hub: HubProcess, head: bytes) -> None:
    answer = _raw(head_hub, head)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b'"code": "SYS-431"' in answer and b"nosniff" in answer


def test_ordinary_heads_are_untouched(head_hub: HubProcess) -> None:
    cookie = "; ".join(f"c{i}={'x' * 100}" for i in range(40))  # 4 KB of cookies
    resp = httpx.get(f"{head_hub.url}/api/webjobs/public_sink?raw=1&a=1", timeout=10,
                     headers={"Cookie": cookie, "X-Long": "y" * 8000})
    assert resp.status_code == 200 and resp.json() == {"n": 1}
    body = b'{"x": "' + b"z" * 200_000 + b'"}'  # a body is not a head, however large
    resp = httpx.post(f"{head_hub.url}/api/webjobs/public_sink?raw=1", content=body,
                      headers={"Content-Type": "application/json"}, timeout=30)
    assert resp.json() == {"n": 1}


def test_a_48_mb_header_does_not_hold_the_loop(head_hub: HubProcess) -> None:
    with Watcher(head_hub.url) as watcher:
        for _ in range(3):
            _raw(head_hub, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * 48_000_000)
    assert max(watcher.waits) < 1.0, sorted(watcher.waits)[-3:]


def _open(hub: HubProcess) -> socket.socket:
    host, port = hub.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def test_a_body_still_coming_after_the_answer_closes_the_connection(
        head_hub: HubProcess) -> None:
    """A chunked body to a route that answers without reading it: the client could keep
    the parser busy with tiny chunks for ever; the connection is closed instead."""
    with _open(head_hub) as sock:
        sock.sendall(b"POST /api/nope HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 404")
        closed = False
        for _ in range(200):  # at most 200 sends of 60 KB of 1-byte chunks
            try:
                sock.sendall(b"1\r\na\r\n" * 10_000)
                sock.settimeout(0.05)
                if sock.recv(1024) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except OSError:
                closed = True
                break
        assert closed


def test_a_connection_holds_few_pipelined_requests(head_hub: HubProcess) -> None:
    with _open(head_hub) as sock:
        sock.sendall(b"GET /api/webjobs/health HTTP/1.1\r\nHost: x\r\n\r\n" * 2000)
        answers = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answers += chunk
    assert answers.count(b"HTTP/1.1 200") <= 20, answers.count(b"HTTP/1.1 200")


def test_empty_lines_before_a_request_are_no_end_of_its_head(head_hub: HubProcess) -> None:
    """httptools skips empty lines before a request line: they never end the count."""
    answer = _raw(head_hub, b"\r\n\r\nGET /api/webjobs/public_sink HTTP/1.1\r\nHost: x\r\n"
                            b"X-Big: " + b"v" * 100_000)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]


def test_a_bare_lf_head_is_answered_as_not_http(head_hub: HubProcess) -> None:
    """httptools takes no bare-LF head: its end is still found by the count, and the
    parser's refusal is the hub's JSON HUB-001."""
    answer = _raw(head_hub, b"GET /api/webjobs/health HTTP/1.1\nHost: x")
    assert answer.startswith(b"HTTP/1.1 400") and b'"code": "HUB-001"' in answer
