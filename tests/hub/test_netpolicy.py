"""The host side of a job's http(): SSRF refusals, allow/deny lists, pinning, redirects.

No test sends traffic anywhere but 127.0.0.1: names are answered by fake resolvers,
"public" targets only go through check_url, and a guard fails any socket connect
to another address (and any system DNS lookup of a name)."""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import certifi
import httpx
import idna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.outside import CallBudget, NetPolicy, check_url, display_url, fetch
from hub.outside.http_client import _build, _parse_timeout, _Request
from hub.outside.netpolicy import Target
from shared.errors import JobFailed

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"

NAMES: dict[str, list[str]] = {
    "example.com": [PUBLIC_V4],
    "a.api.example.org": [PUBLIC_V4],
    "api.example.org": [PUBLIC_V4],
    "other.com": [PUBLIC_V4],
    "evil.example": [PUBLIC_V4],
    "x.corp.example": [PUBLIC_V4],
    "v6.example": [PUBLIC_V6],
    "localhost.test": ["127.0.0.1"],
    "loop6.test": ["::1"],
    "mixed.test": [PUBLIC_V4, "10.0.0.7"],
    "meta.test": ["169.254.169.254"],
    "private.test": ["192.168.1.1"],
    "cgnat.test": ["100.64.0.1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "nat64.test": ["64:ff9b::a9fe:a9fe"],
    "ula.test": ["fd00::1"],
    "linklocal6.test": ["fe80::1%eth0"],
    "zero.test": ["0.0.0.0"],
    "empty.test": [],
    "garbage.test": ["not-an-ip"],
}


async def fake_resolver(host: str, port: int) -> list[str]:
    if host not in NAMES:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return list(NAMES[host])


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def refused(url: str, policy: NetPolicy | None = None) -> str:
    with pytest.raises(JobFailed) as info:
        run(check_url(url, policy or NetPolicy(), fake_resolver))
    message = info.value.message
    assert message.startswith("http(): ")
    return message


@pytest.fixture(autouse=True)
def only_loopback_traffic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any connect to an address other than 127.0.0.1, and any real DNS lookup."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> None:
        assert address[0] == "127.0.0.1", f"test tried to connect to {address!r}"
        real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        assert host in ("127.0.0.1", b"127.0.0.1"), f"test tried to resolve {host!r}"
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


# --- check_url: hostile targets ---------------------------------------------------------

HOSTILE = [
    ("http://127.0.0.1/", "a loopback address"),
    ("http://127.0.0.2:8080/", "a loopback address"),
    ("http://2130706433/", "a loopback address"),
    ("http://0177.0.0.1/", "a loopback address"),
    ("http://0x7f.0.0.1/", "a loopback address"),
    ("http://0x7f000001/", "a loopback address"),
    ("http://017700000001/", "a loopback address"),
    ("http://127.1/", "a loopback address"),
    ("http://127.0.1/", "a loopback address"),
    ("http://0x7f.1./", "a loopback address"),
    ("http://LOCALHOST.test/", "resolves to 127.0.0.1, which is a loopback address"),
    ("http://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/", "a loopback address"),
    ("http://[::1]/", "a loopback address"),
    ("http://[::ffff:127.0.0.1]/", "an IPv4-mapped form of a loopback address"),
    ("http://[::ffff:7f00:1]/", "an IPv4-mapped form of a loopback address"),
    ("http://[::127.0.0.1]/", "an IPv4-compatible form of a loopback address"),
    ("http://[64:ff9b::127.0.0.1]/", "a NAT64 form of a loopback address"),
    ("http://[64:ff9b::a9fe:a9fe]/", "a NAT64 form of the cloud metadata address"),
    ("http://[2002:7f00:1::]/", "a 6to4 form of a loopback address"),
    ("http://[::ffff:169.254.169.254]/", "IPv4-mapped form of the cloud metadata address"),
    ("http://[::ffff:10.0.0.1]/", "IPv4-mapped form of a private address"),
    ("http://0.0.0.0/", "an unspecified"),
    ("http://0/", "an unspecified"),
    ("http://[::]/", "an unspecified address"),
    ("http://10.0.0.1/", "a private address"),
    ("http://172.16.5.4/", "a private address"),
    ("http://172.31.255.255:8443/", "a private address"),
    ("http://192.168.0.1/", "a private address"),
    ("http://169.254.169.254/latest/meta-data/", "the cloud metadata address"),
    ("http://169.254.1.1/", "a link-local address"),
    ("http://100.64.0.1/", "a carrier-grade NAT"),
    ("http://224.0.0.1/", "a multicast address"),
    ("http://255.255.255.255/", "the broadcast address"),
    ("http://240.0.0.1/", "a reserved address"),
    ("http://192.0.2.1/", "a documentation address"),
    ("http://198.51.100.7/", "a documentation address"),
    ("http://203.0.113.9/", "a documentation address"),
    ("http://198.18.0.1/", "a benchmarking address"),
    ("http://[2001:db8::1]/", "a documentation address"),
    ("http://[fc00::1]/", "a unique-local address"),
    ("http://[fd12:3456::1]/", "a unique-local address"),
    ("http://[fe80::1]/", "a link-local address"),
    ("http://[fec0::1]/", "a site-local address"),
    ("http://[ff02::1]/", "a multicast address"),
    ("http://[2001::1]/", "a Teredo tunnel address"),
    ("http://loop6.test/", "resolves to ::1, which is a loopback address"),
    ("http://mixed.test/", "resolves to 10.0.0.7, which is a private address"),
    ("http://meta.test/", "the cloud metadata address"),
    ("http://private.test:8080/", "a private address"),
    ("http://cgnat.test/", "a carrier-grade NAT"),
    ("http://mapped.test/", "an IPv4-mapped form of a loopback address"),
    ("http://nat64.test/", "a NAT64 form of the cloud metadata address"),
    ("http://ula.test/", "a unique-local address"),
    ("http://linklocal6.test/", "a link-local address"),
    ("http://zero.test/", "an unspecified"),
    ("http://empty.test/", "cannot resolve host 'empty.test'"),
    ("http://nowhere.test/", "cannot resolve host 'nowhere.test'"),
    ("http://garbage.test/", "resolved to an invalid address"),
    ("ftp://example.com/", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("gopher://127.0.0.1:70/", "only http and https"),
    ("javascript:alert(1)", "only http and https"),
    ("//example.com/", "only http and https"),
    ("http:///path", "no host"),
    ("http://user:secret@/", "no host"),
    ("http://127.0.0.1:0/", "port 0"),
    ("http://example.com:99999/", "not a valid URL"),
    ("http://256.0.0.1/", "not a valid numeric host"),
    ("http://08.0.0.1/", "not a valid numeric host"),
    ("http://1.2.3.4.5/", "not a valid host"),
    ("http://foo.123/", "not a valid host"),
    ("http://exa mple.com/", "spaces"),
    ("http://example.com\\@127.0.0.1/", "backslashes"),
    ("http://[fe80::1%25eth0]/", "zone"),
    ("http://ex_ample!.com/", "not a valid host name"),
    ("http://user:secret@127.0.0.1/", "a loopback address"),
    ("http://user:secret@[::1]:8080/", "a loopback address"),
]


def test_the_battery_is_big_enough() -> None:
    assert len(HOSTILE) >= 40


@pytest.mark.parametrize(("url", "expected"), HOSTILE)
def test_hostile_target_is_refused(url: str, expected: str) -> None:
    message = refused(url)
    assert expected in message
    assert "secret" not in message


def test_a_name_is_resolved_once_and_every_address_checked() -> None:
    calls: list[tuple[str, int]] = []

    async def counting(host: str, port: int) -> list[str]:
        calls.append((host, port))
        return [PUBLIC_V4, "192.168.7.7"]

    with pytest.raises(JobFailed, match=r"192\.168\.7\.7, which is a private address"):
        run(check_url("https://two.example/", NetPolicy(), counting))
    assert calls == [("two.example", 443)]


def test_rebinding_resolver_is_asked_once_per_check() -> None:
    answers = iter([[PUBLIC_V4], ["127.0.0.1"]])
    calls: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers)

    target = run(check_url("http://rebind.example/a", NetPolicy(), rebinding))
    assert target.address == PUBLIC_V4 and calls == ["rebind.example"]
    with pytest.raises(JobFailed, match="loopback"):
        run(check_url("http://rebind.example/a", NetPolicy(), rebinding))


# --- check_url: allowed targets ---------------------------------------------------------

ALLOWED = [
    ("http://example.com/", Target("http", "example.com", 80, "/", PUBLIC_V4)),
    ("HTTPS://Example.COM./a/b?x=1#frag",
     Target("https", "example.com", 443, "/a/b?x=1", PUBLIC_V4)),
    ("https://example.com:8443/x", Target("https", "example.com", 8443, "/x", PUBLIC_V4)),
    ("http://user:pw@example.com/p", Target("http", "example.com", 80, "/p", PUBLIC_V4)),
    (f"http://{PUBLIC_V4}/", Target("http", PUBLIC_V4, 80, "/", PUBLIC_V4)),
    ("http://1572395042/", Target("http", PUBLIC_V4, 80, "/", PUBLIC_V4)),
    (f"http://[{PUBLIC_V6}]:8080/", Target("http", PUBLIC_V6, 8080, "/", PUBLIC_V6)),
    ("http://v6.example/", Target("http", "v6.example", 80, "/", PUBLIC_V6)),
    (f"http://[::ffff:{PUBLIC_V4}]/",
     Target("http", "::ffff:5db8:d822", 80, "/", "::ffff:5db8:d822")),
]


@pytest.mark.parametrize(("url", "expected"), ALLOWED)
def test_public_target_passes(url: str, expected: Target) -> None:
    assert run(check_url(url, NetPolicy(), fake_resolver)) == expected


def test_allow_list() -> None:
    policy = NetPolicy(allow_hosts=frozenset({"example.com", "*.api.example.org"}))
    assert run(check_url("http://EXAMPLE.com/", policy, fake_resolver)).host == "example.com"
    assert run(check_url("http://a.api.example.org/", policy, fake_resolver))
    assert "not in the hub's list of allowed hosts" in refused("http://other.com/", policy)
    assert "allowed hosts" in refused("http://api.example.org/", policy)
    assert "allowed hosts" in refused(f"http://{PUBLIC_V4}/", policy)
    # listed or not, the address must still be public
    listed_private = NetPolicy(allow_hosts=frozenset({"private.test"}))
    assert "a private address" in refused("http://private.test/", listed_private)


def test_deny_list() -> None:
    policy = NetPolicy(deny=("evil.example", "*.corp.example", "93.184.216.0/24"))
    assert "denied by the hub's network policy" in refused("http://Evil.Example/", policy)
    assert "denied" in refused("http://x.corp.example/", policy)
    assert "93.184.216.0/24" in refused("http://example.com/", policy)
    assert "93.184.216.0/24" in refused(f"http://[::ffff:{PUBLIC_V4}]/", policy)
    assert run(check_url("http://v6.example/", policy, fake_resolver))


def test_policy_from_settings() -> None:
    policy = NetPolicy.from_settings(" Example.com , *.x.org,", "10.0.0.0/8, Bad.Host", "8080")
    assert policy == NetPolicy(
        frozenset({"example.com", "*.x.org"}), ("10.0.0.0/8", "bad.host"), 8080
    )
    assert NetPolicy.from_settings("", "", "") == NetPolicy()
    with pytest.raises(ValueError):
        NetPolicy.from_settings("", "10.0.0.0/33", "")
    with pytest.raises(ValueError):
        NetPolicy.from_settings("", "", "70000")


def test_test_loopback_port_opens_exactly_one_port() -> None:
    policy = NetPolicy(test_loopback_port=8123)
    target = run(check_url("http://127.0.0.1:8123/x", policy, fake_resolver))
    assert target.address == "127.0.0.1"
    assert "loopback" in refused("http://127.0.0.1:8124/", policy)
    assert "loopback" in refused("http://127.0.0.1/", policy)
    assert "private" in refused("http://10.0.0.1:8123/", policy)


def test_display_url_strips_credentials() -> None:
    assert display_url("https://alice:s3cret@example.com:8443/p?q=1") == (
        "https://example.com:8443/p?q=1"
    )
    assert display_url("http://example.com/") == "http://example.com/"
    assert "s3cret" not in display_url("http://alice:s3cret@[::1/")


def test_call_budget() -> None:
    budget = CallBudget()
    for _ in range(50):
        budget.take()
    with pytest.raises(JobFailed, match=r"^http\(\): at most 50 calls per run$"):
        budget.take()


def test_request_is_pinned_to_the_checked_address() -> None:
    async def build() -> httpx.Request:
        async with httpx.AsyncClient() as client:
            target = Target("https", "example.com", 8443, "/a?b=1", PUBLIC_V4)
            return _build(client, target, _Request("GET", {}, None, None))

    request = run(build())
    assert request.url.host == PUBLIC_V4 and request.url.port == 8443
    assert request.url.raw_path == b"/a?b=1"
    assert request.headers["host"] == "example.com:8443"
    assert request.extensions["sni_hostname"] == "example.com"


# --- fetch against a local server -------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _echo(self) -> None:
        body = self.body
        payload = {"method": self.command, "path": self.path,
                   "headers": {k.lower(): v for k, v in self.headers.items()},
                   "body": base64.b64encode(body).decode()}
        self._send(200, json.dumps(payload).encode(), {"Content-Type": "application/json"})

    def _big(self) -> None:
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"x" * (1024 * 1024)
        try:
            for _ in range(12):
                self.wfile.write(chunk)
        except OSError:
            pass
        self.close_connection = True

    def _route(self) -> None:
        self.body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        port = self.connection.getsockname()[1]
        redirects = {
            "/redirect-metadata": "http://169.254.169.254/latest/meta-data/",
            "/redirect-ok": "/hello",
            "/redirect-loop": "/redirect-loop",
            "/redirect-echo": "/echo",
            "/redirect-other-host": f"http://other.test:{port}/echo",
            "/redirect-other-port": "http://127.0.0.1:1/echo",
        }
        if self.path in redirects:
            self._send(302 if self.path != "/redirect-echo" else 303, b"moved",
                       {"Location": redirects[self.path]})
        elif self.path.startswith("/echo"):
            self._echo()
        elif self.path == "/big":
            self._big()
        elif self.path == "/slow":
            time.sleep(2)
            self._send(200, b"late")
        elif self.path == "/latin1":
            self._send(200, "café".encode("latin-1"),
                       {"Content-Type": "text/plain; charset=iso-8859-1"})
        else:
            self._send(200, b"hello", {"Content-Type": "text/plain; charset=utf-8",
                                       "X-Multi": "a"})

    do_GET = do_POST = do_PUT = do_HEAD = _route


@pytest.fixture(scope="module")
def server_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture()
def base(server_port: int) -> str:
    return f"http://127.0.0.1:{server_port}"


@pytest.fixture()
def policy(server_port: int) -> NetPolicy:
    return NetPolicy(test_loopback_port=server_port)


def do_fetch(url: str, policy: NetPolicy, options: dict[str, Any] | None = None,
             resolver: Any = fake_resolver) -> dict[str, Any]:
    result: dict[str, Any] = run(fetch(url, options, policy, resolver))
    return result


def echoed(result: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(result["text"])
    return payload


def test_fetch_returns_the_response(base: str, policy: NetPolicy) -> None:
    result = do_fetch(f"{base}/hello", policy)
    assert result["status"] == 200 and result["ok"] is True
    assert result["statusText"] == "OK"
    assert result["text"] == "hello"
    assert base64.b64decode(result["base64"]) == b"hello"
    assert result["headers"]["content-type"] == "text/plain; charset=utf-8"
    assert result["headers"]["x-multi"] == "a"
    assert result["url"] == f"{base}/hello"
    assert isinstance(result["ms"], int)


def test_fetch_decodes_with_the_response_charset(base: str, policy: NetPolicy) -> None:
    assert do_fetch(f"{base}/latin1", policy)["text"] == "café"


def test_fetch_refuses_before_connecting(policy: NetPolicy) -> None:
    with pytest.raises(JobFailed, match="cloud metadata"):
        do_fetch("http://169.254.169.254/", policy)


def test_redirect_to_metadata_is_refused(base: str, policy: NetPolicy) -> None:
    with pytest.raises(JobFailed, match=r"169\.254\.169\.254 is the cloud metadata address"):
        do_fetch(f"{base}/redirect-metadata", policy)


def test_redirect_to_another_port_is_rechecked(base: str, policy: NetPolicy) -> None:
    with pytest.raises(JobFailed, match="loopback"):
        do_fetch(f"{base}/redirect-other-port", policy)


def test_allowed_redirect_is_followed(base: str, policy: NetPolicy) -> None:
    result = do_fetch(f"{base}/redirect-ok", policy)
    assert result["text"] == "hello" and result["url"] == f"{base}/hello"


def test_redirects_can_be_switched_off(base: str, policy: NetPolicy) -> None:
    result = do_fetch(f"{base}/redirect-metadata", policy, {"followRedirects": False})
    assert result["status"] == 302 and result["ok"] is False
    assert result["headers"]["location"].startswith("http://169.254.169.254/")


def test_redirect_loop_stops(base: str, policy: NetPolicy) -> None:
    with pytest.raises(JobFailed, match="more than 10 redirects"):
        do_fetch(f"{base}/redirect-loop", policy)


def test_303_turns_post_into_get(base: str, policy: NetPolicy) -> None:
    result = do_fetch(f"{base}/redirect-echo", policy, {"method": "POST", "body": "x"})
    seen = echoed(result)
    assert seen["method"] == "GET" and seen["body"] == ""


def test_rebinding_cannot_move_the_connection(server_port: int, policy: NetPolicy) -> None:
    answers = iter([["127.0.0.1"], ["169.254.169.254"], ["10.0.0.1"]])
    calls: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers)

    result = do_fetch(f"http://rebind.test:{server_port}/echo", policy, resolver=rebinding)
    assert calls == ["rebind.test"]  # one resolution per hop; httpx never resolves
    assert echoed(result)["headers"]["host"] == f"rebind.test:{server_port}"
    assert result["url"] == f"http://rebind.test:{server_port}/echo"


def test_each_redirect_hop_resolves_once(base: str, policy: NetPolicy) -> None:
    calls: list[str] = []

    async def counting(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["127.0.0.1"]

    result = do_fetch(f"{base}/redirect-other-host", policy,
                      {"username": "alice", "password": "pw"}, counting)
    assert calls == ["other.test"]
    assert "authorization" not in echoed(result)["headers"]  # dropped across origins


def test_size_cap(base: str, policy: NetPolicy) -> None:
    with pytest.raises(JobFailed, match=r"^http\(\): the response is larger than 10 MB$"):
        do_fetch(f"{base}/big", policy)


def test_timeout(base: str, policy: NetPolicy) -> None:
    started = time.monotonic()
    with pytest.raises(JobFailed, match="within 300 ms"):
        do_fetch(f"{base}/slow", policy, {"timeoutMs": 300})
    assert time.monotonic() - started < 1.5


def test_connection_refused_is_a_clear_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(JobFailed, match="refused"):
        do_fetch(f"http://127.0.0.1:{port}/", NetPolicy(test_loopback_port=port))


def test_json_body(base: str, policy: NetPolicy) -> None:
    seen = echoed(do_fetch(f"{base}/echo", policy, {"method": "post", "body": {"a": [1, "é"]}}))
    assert seen["method"] == "POST"
    assert seen["headers"]["content-type"] == "application/json"
    assert json.loads(base64.b64decode(seen["body"])) == {"a": [1, "é"]}


def test_bytes_body(base: str, policy: NetPolicy) -> None:
    raw = bytes([0, 1, 254, 255])
    options = {"method": "PUT", "body": {"base64": base64.b64encode(raw).decode()},
               "headers": {"Content-Type": "application/octet-stream"}}
    seen = echoed(do_fetch(f"{base}/echo", policy, options))
    assert base64.b64decode(seen["body"]) == raw
    assert seen["headers"]["content-type"] == "application/octet-stream"


def test_string_body_and_headers(base: str, policy: NetPolicy) -> None:
    options = {"method": "POST", "body": "plain text", "headers": {"X-Token": "abc", "X-N": 5}}
    seen = echoed(do_fetch(f"{base}/echo", policy, options))
    assert base64.b64decode(seen["body"]) == b"plain text"
    assert seen["headers"]["x-token"] == "abc" and seen["headers"]["x-n"] == "5"


def test_basic_auth_from_options(base: str, policy: NetPolicy) -> None:
    seen = echoed(do_fetch(f"{base}/echo", policy, {"username": "alice", "password": "pw"}))
    assert seen["headers"]["authorization"] == "Basic " + base64.b64encode(b"alice:pw").decode()


def test_credentials_in_the_url(server_port: int, policy: NetPolicy) -> None:
    result = do_fetch(f"http://alice:s%40cret@127.0.0.1:{server_port}/echo", policy)
    expected = "Basic " + base64.b64encode(b"alice:s@cret").decode()
    assert echoed(result)["headers"]["authorization"] == expected
    assert result["url"] == f"http://127.0.0.1:{server_port}/echo"


@pytest.mark.parametrize(("options", "expected"), [
    ({"method": "TRACE"}, "options.method"),
    ({"headers": {"Host": "x"}}, "set by the hub"),
    ({"headers": {"X-A": "a\r\nX-B: b"}}, "line break"),
    ({"headers": {"bad name": "x"}}, "invalid header name"),
    ({"headers": {"X-A\n": "x"}}, "invalid header name"),  # a full match, not ^…$
    ({"headers": {"X-A": "caf\u00e9"}}, "only ASCII"),
    ({"headers": "x"}, "options.headers must be an object"),
    ({"body": float("nan")}, "cannot be sent as JSON"),
    ({"timeoutMs": -5}, "positive"),
    ({"body": {"base64": "***"}}, "not valid base64"),
    ({"timeoutMs": "soon"}, "timeoutMs"),
    ({"followRedirects": "yes"}, "followRedirects"),
    ({"username": 5}, "username"),
])
def test_bad_options_are_refused(base: str, policy: NetPolicy,
                                 options: dict[str, Any], expected: str) -> None:
    with pytest.raises(JobFailed, match=expected):
        do_fetch(f"{base}/echo", policy, options)


# --- TLS: SNI and certificate checks use the original name ------------------------------


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, list[str]]]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=pinned.test",
         "-addext", "subjectAltName=DNS:pinned.test"],
        check=True, capture_output=True,
    )
    names: list[str] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    def record_sni(_sock: Any, name: str | None, _ctx: Any) -> None:
        names.append(str(name))

    context.sni_callback = record_sni
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], str(cert), names
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


async def to_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def test_tls_uses_the_original_name(
    tls_server: tuple[int, str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, cert, names = tls_server
    monkeypatch.setattr(certifi, "where", lambda: cert)  # trust the test certificate
    policy = NetPolicy(test_loopback_port=port)
    names.clear()
    result = do_fetch(f"https://pinned.test:{port}/echo", policy, resolver=to_loopback)
    assert names == ["pinned.test"]  # SNI carries the name, the socket went to 127.0.0.1
    assert echoed(result)["headers"]["host"] == f"pinned.test:{port}"
    # the certificate is checked against the original name, not the pinned IP
    with pytest.raises(JobFailed, match=r"TLS connection to .* failed"):
        do_fetch(f"https://wrong.test:{port}/echo", policy, resolver=to_loopback)


def test_untrusted_certificate_is_a_clear_failure(tls_server: tuple[int, str, list[str]]) -> None:
    port, _cert, _names = tls_server
    with pytest.raises(JobFailed, match=r"TLS connection to .* failed"):
        do_fetch(f"https://pinned.test:{port}/", NetPolicy(test_loopback_port=port),
                 resolver=to_loopback)


def test_the_deadline_covers_a_slow_resolver() -> None:
    async def slow(host: str, port: int) -> list[str]:
        await asyncio.sleep(5)
        return ["127.0.0.1"]

    started = time.monotonic()
    with pytest.raises(JobFailed, match="within 200 ms"):
        do_fetch("http://slow.test/", NetPolicy(), {"timeoutMs": 200}, slow)
    assert time.monotonic() - started < 1.5


def test_timeout_is_capped_at_a_minute() -> None:
    assert _parse_timeout(None) == 10_000
    assert _parse_timeout(999_999) == 60_000
    assert _parse_timeout(1.5) == 1 and _parse_timeout(0.2) == 1


def test_head_request(base: str, policy: NetPolicy) -> None:
    result = do_fetch(f"{base}/hello", policy, {"method": "HEAD"})
    assert result["status"] == 200 and result["text"] == "" and result["base64"] == ""


# -- the hub's own database servers ---------------------------------------------


def test_own_database_hosts_come_from_every_url() -> None:
    from hub.outside.own_servers import own_server_entries, own_server_hosts

    hosts = own_server_hosts(
        ["odbc:DRIVER={ODBC Driver 18 for SQL Server};Server=tcp:sql.corp.example,1433;UID=a",
         "odbc:Driver={PostgreSQL Unicode};SERVER=203.0.113.9;PORT=5432;DATABASE=x",
         "odbc:Driver={FreeTDS};ServerName=tds.corp.example\\INST;TDS_Version=7.4",
         "odbc:DRIVER={MariaDB Unicode};HOST = [2001:db8::5] ;PWD={a;b}",
         "sqlite:////var/lib/webhub/hub.db"],
        "mongodb://user:pw@mongo1.corp.example:27017,mongo2.corp.example/?replicaSet=r")
    assert hosts == ["2001:db8::5", "203.0.113.9", "mongo1.corp.example", "mongo2.corp.example",
                     "sql.corp.example", "tds.corp.example"]
    assert own_server_entries(["203.0.113.9", "2001:db8::5"]) == ["2001:db8::5", "203.0.113.9"]


@pytest.mark.parametrize(("url", "words"), [
    ("http://sql.corp.example/", "host 'sql.corp.example' is one of the hub's own database"),
    ("http://SQL.corp.example:1433/", "host 'sql.corp.example' is one of the hub's own"),
    ("http://203.0.113.9:5432/", "'203.0.113.9' is one of the hub's own database servers"),
    ("http://x.corp.example/", "is one of the hub's own database servers"),
])
def test_the_hubs_own_database_servers_are_refused(url: str, words: str) -> None:
    policy = NetPolicy(own_servers=("sql.corp.example", "203.0.113.9", PUBLIC_V4))
    assert words in refused(url, policy)


# --- international host names ---------------------------------------------------------

async def any_name_is_public(host: str, port: int) -> list[str]:
    return [PUBLIC_V4]


def checked_host(url: str, policy: NetPolicy | None = None) -> str:
    return run(check_url(url, policy or NetPolicy(), any_name_is_public)).host


@pytest.mark.parametrize(("url", "host"), [
    ("http://faß.de/", "xn--fa-hia.de"),  # UTS #46 non-transitional: ß is kept
    ("http://FAß.DE./x", "xn--fa-hia.de"),
    ("http://faß。de/", "xn--fa-hia.de"),  # an ideographic full stop separates labels
    ("https://Bücher.example/", "xn--bcher-kva.example"),
    ("http://XN--FA-HIA.de/", "xn--fa-hia.de"),
    ("http://ＥＸＡＭＰＬＥ.com/", "example.com"),  # full-width letters map to ASCII
    ("http://under_score.example/", "under_score.example"),  # ASCII names as before
])
def test_an_international_name_is_encoded_as_a_browser_does(url: str, host: str) -> None:
    assert checked_host(url) == host


def test_the_resolver_is_asked_for_the_encoded_name() -> None:
    asked: list[str] = []

    async def recording(host: str, port: int) -> list[str]:
        asked.append(host)
        return [PUBLIC_V4]

    run(check_url("http://faß.de/", NetPolicy(), recording))
    assert asked == ["xn--fa-hia.de"]


@pytest.mark.parametrize("url", [
    "http://☃.net/",  # a symbol: valid in IDNA 2003, not in IDNA 2008
    "http://xn--zz.com/",  # not a valid A-label
    "http://-ä.com/",  # a label starting with a hyphen
    "http://\ud800.com/",  # a lone surrogate, as a job's string may carry
    "http://" + "ä" * 64 + ".com/",  # a label over 63 octets
    "http://a\u200db.com/",  # a zero-width joiner outside its allowed context
])
def test_a_name_idna_refuses_is_refused_clearly(url: str) -> None:
    message = refused(url)
    assert message.startswith("http(): '") and "is not a valid international domain name" in message
    message.encode("utf-8")  # no lone surrogate carried into the message


def test_the_lists_see_the_host_a_browser_would() -> None:
    policy = NetPolicy.from_settings("faß.de, *.Bücher.example", "", "")
    assert policy.allow_hosts == frozenset({"xn--fa-hia.de", "*.xn--bcher-kva.example"})
    assert checked_host("http://faß.de/", policy) == "xn--fa-hia.de"
    assert checked_host("http://shop.bücher.example/", policy) == "shop.xn--bcher-kva.example"
    assert "allowed hosts" in refused("http://fass.de/", policy)  # not the same host
    denied = NetPolicy.from_settings("", "xn--fa-hia.de, *.bücher.example", "")
    assert "denied" in refused("http://faß.de/", denied)
    assert "denied" in refused("http://shop.BÜCHER.example/", denied)
    assert checked_host("http://fass.de/", denied) == "fass.de"
    with pytest.raises(ValueError, match="not a valid host name"):
        NetPolicy.from_settings("☃.net", "", "")


# Anything a label may hold, without what would end the host inside a URL.
_LETTERS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs"),
                         exclude_characters="/?#@:[]\\%.")
_LABELS = st.text(_LETTERS, min_size=1, max_size=12)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=40))
def test_any_host_text_is_a_target_or_a_clear_refusal(host: str) -> None:
    try:
        target = run(check_url(f"http://{host}/", NetPolicy(), any_name_is_public))
    except JobFailed as exc:
        assert exc.message.startswith("http(): ")
        exc.message.encode("utf-8")
        return
    assert target.host.isascii() and target.host == target.host.lower()
    if not target.host_is_ip:
        assert checked_host(f"http://{target.host}/") == target.host  # already canonical
    if not host.isascii() and not any(c in host for c in "/?#@:[]"):
        assert target.host == idna.encode(host, uts46=True).decode("ascii").rstrip(".")


@settings(max_examples=300, deadline=None)
@given(st.lists(_LABELS, min_size=1, max_size=4))
def test_an_accepted_international_name_is_its_idna_encoding(labels: list[str]) -> None:
    name = ".".join(labels)
    try:
        host = checked_host(f"http://{name}/")
    except JobFailed:
        return
    if not name.isascii():
        expected = idna.encode(name, uts46=True, transitional=False).decode("ascii").rstrip(".")
        # Non-ASCII digits map to ASCII ones: a name that becomes numeric is an IPv4
        # address, as a browser reads it (１.０ is 1.0.0.0).
        assert host in (expected, _as_ipv4(expected)), (host, expected)
    assert checked_host(f"http://{host}/") == host


def test_a_name_of_fullwidth_digits_is_the_address_a_browser_reads() -> None:
    assert checked_host("http://\uff11.\uff10/") == "1.0.0.0"


def _as_ipv4(text: str) -> str | None:
    try:
        return str(ipaddress.IPv4Address(socket.inet_aton(text)))
    except OSError:
        return None
