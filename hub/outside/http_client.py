"""The host side of a job's ``http(url, options)``: one checked, pinned HTTP exchange.

Every hop (the first request and each redirect) goes through
:func:`~hub.outside.netpolicy.check_url` first, which resolves the name once;
the connection then goes to that checked address (the request URL carries the
IP) while the ``Host`` header and TLS SNI / certificate check use the original
name. No second resolution happens, so DNS rebinding cannot move the call.

Everything that goes wrong becomes ``JobFailed("http(): ...")``: no traceback,
no hang (one deadline covers resolution, connect, redirects and reading).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import codecs
import json
import logging
import re
import ssl
import time
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from hub.outside.netpolicy import (
    DEFAULT_PORTS,
    NetPolicy,
    Resolver,
    Target,
    check_url,
    display_url,
    system_resolver,
)
from shared.errors import JobFailed

__all__ = ["MAX_BYTES", "MAX_HOPS", "CallBudget", "fetch"]

log = logging.getLogger(__name__)

MAX_BYTES = 10 * 1024 * 1024
MAX_HOPS = 10
DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 60_000
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HOP_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
    "te", "trailer", "proxy-authorization", "proxy-connection",
})
_TOKEN_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BAD_VALUE_RE = re.compile(r"[\x00\r\n]")


def _refuse(reason: str) -> JobFailed:
    return JobFailed(f"http(): {reason}")


class CallBudget:
    """At most ``limit`` ``http()`` calls per run; ``take()`` once per call."""

    def __init__(self, limit: int = 50) -> None:
        self.limit = limit
        self.used = 0

    def take(self) -> None:
        if self.used >= self.limit:
            raise _refuse(f"at most {self.limit} calls per run")
        self.used += 1


@dataclass(frozen=True)
class _Request:
    method: str
    headers: dict[str, str]
    body: bytes | None
    auth: str | None  # a ready Authorization value, or None


@dataclass(frozen=True)
class _Options:
    request: _Request
    timeout_ms: int
    follow: bool
    explicit_auth: bool


def _basic(username: str, password: str) -> str:
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def _url_auth(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return None
    if username is None:
        return None
    return _basic(unquote(username), unquote(password or ""))


def _parse_headers(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _refuse("options.headers must be an object")
    headers: dict[str, str] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not _TOKEN_RE.fullmatch(name):
            raise _refuse(f"invalid header name {name!r}")
        if name.lower() in _HOP_HEADERS:
            raise _refuse(f"the {name} header is set by the hub and cannot be given")
        if value is None or isinstance(value, dict | list):
            raise _refuse(f"header {name} must be a string")
        text = value if isinstance(value, str) else json.dumps(value)
        if _BAD_VALUE_RE.search(text):
            raise _refuse(f"header {name} contains a line break or NUL")
        if not text.isascii():
            raise _refuse(f"header {name} must contain only ASCII characters")
        headers[name] = text
    return headers


def _has_header(headers: dict[str, str], name: str) -> bool:
    return any(key.lower() == name for key in headers)


def _encode_body(body: Any, headers: dict[str, str]) -> bytes | None:
    if body is None:
        return None
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, dict) and set(body) == {"base64"} and isinstance(body["base64"], str):
        try:
            return base64.b64decode(body["base64"], validate=True)
        except (binascii.Error, ValueError):
            raise _refuse("options.body.base64 is not valid base64") from None
    try:
        encoded = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError):
        raise _refuse("options.body cannot be sent as JSON") from None
    if not _has_header(headers, "content-type"):
        headers["Content-Type"] = "application/json"
    return encoded


def _parse_timeout(raw: Any) -> int:
    if raw is None:
        return DEFAULT_TIMEOUT_MS
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw != raw:
        raise _refuse("options.timeoutMs must be a number of milliseconds")
    if raw <= 0:
        raise _refuse("options.timeoutMs must be positive")
    return max(1, int(min(raw, MAX_TIMEOUT_MS)))


def _parse_auth(options: dict[str, Any]) -> str | None:
    username, password = options.get("username"), options.get("password")
    if username is None and password is None:
        return None
    if not isinstance(username, str) or not isinstance(password, str | None):
        raise _refuse("options.username and options.password must be strings")
    return _basic(username, password or "")


def _parse_options(url: str, options: Any) -> _Options:
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise _refuse("options must be an object")
    method = options.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in _METHODS:
        raise _refuse(f"options.method must be one of {', '.join(sorted(_METHODS))}")
    headers = _parse_headers(options.get("headers"))
    body = _encode_body(options.get("body"), headers)
    follow = options.get("followRedirects", True)
    if not isinstance(follow, bool):
        raise _refuse("options.followRedirects must be true or false")
    auth = _parse_auth(options)
    explicit = auth is not None or _has_header(headers, "authorization")
    if auth is None and not explicit:
        auth = _url_auth(url)
    request = _Request(method.upper(), headers, body, auth)
    return _Options(request, _parse_timeout(options.get("timeoutMs")), follow, explicit)


def _host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    if target.port != DEFAULT_PORTS[target.scheme]:
        host = f"{host}:{target.port}"
    return host


def _build(client: httpx.AsyncClient, target: Target, req: _Request) -> httpx.Request:
    """A request whose URL names the checked IP; Host and SNI keep the real name."""
    address = f"[{target.address}]" if ":" in target.address else target.address
    url = f"{target.scheme}://{address}:{target.port}{target.path_and_query}"
    headers = dict(req.headers)
    headers["Host"] = _host_header(target)
    if req.auth is not None:
        headers["Authorization"] = req.auth
    extensions: dict[str, Any] = {}
    if target.scheme == "https" and not target.host_is_ip:
        extensions["sni_hostname"] = target.host
    return client.build_request(
        req.method, url, headers=headers, content=req.body, extensions=extensions
    )


async def _read_capped(response: httpx.Response) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BYTES:
        raise _refuse("the response is larger than 10 MB")
    data = bytearray()
    async for chunk in response.aiter_bytes():
        if len(data) + len(chunk) > MAX_BYTES:
            raise _refuse("the response is larger than 10 MB")
        data.extend(chunk)
    return bytes(data)


async def _send(
    client: httpx.AsyncClient, target: Target, req: _Request, read_body: bool
) -> tuple[httpx.Response, bytes]:
    response = await client.send(_build(client, target, req), stream=True)
    try:
        body = await _read_capped(response) if read_body else b""
    finally:
        await response.aclose()
        client.cookies.clear()  # nothing carries over between hops or calls
    return response, body


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


def _next_request(req: _Request, status: int, old_url: str, new_url: str) -> _Request:
    """The request for the next hop, the way browsers and curl rewrite it."""
    method, body, headers = req.method, req.body, dict(req.headers)
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        method, body = "GET", None
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
    auth = req.auth
    if _origin(old_url) != _origin(new_url):
        auth = _url_auth(new_url)
        headers = {k: v for k, v in headers.items() if k.lower() not in ("authorization", "cookie")}
    elif _url_auth(new_url) is not None:
        auth = _url_auth(new_url)
    return replace(req, method=method, headers=headers, body=body, auth=auth)


async def _exchange(
    client: httpx.AsyncClient, url: str, opts: _Options, policy: NetPolicy, resolver: Resolver
) -> tuple[httpx.Response, bytes, str]:
    current, req = url, opts.request
    for hop in range(MAX_HOPS + 1):
        target = await check_url(current, policy, resolver)
        log.debug("http(): %s %s", req.method, display_url(current))
        response, body = await _send(client, target, req, read_body=True)
        location = response.headers.get("location")
        if not opts.follow or response.status_code not in _REDIRECTS or not location:
            return response, body, current
        if hop == MAX_HOPS:
            break
        try:
            next_url = urljoin(current, location)
        except ValueError:
            raise _refuse("the server sent an invalid redirect location") from None
        req = _next_request(req, response.status_code, current, next_url)
        current = next_url
    raise _refuse(f"more than {MAX_HOPS} redirects")


def _decode(body: bytes, response: httpx.Response) -> str:
    charset = response.charset_encoding or "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    return body.decode(charset, errors="replace")


def _result(response: httpx.Response, body: bytes, url: str, started: float) -> dict[str, Any]:
    headers: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return {
        "status": response.status_code,
        "ok": 200 <= response.status_code < 300,
        "statusText": response.reason_phrase,
        "headers": headers,
        "text": _decode(body, response),
        "base64": base64.b64encode(body).decode("ascii"),
        "url": display_url(url),
        "ms": int((time.monotonic() - started) * 1000),
    }


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 20:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _connect_reason(exc: httpx.ConnectError, shown: str) -> str:
    chain = _causes(exc)
    text = " ".join(repr(e) for e in chain).upper()
    if any(isinstance(e, ssl.SSLError) for e in chain) or "CERTIFICATE" in text:
        return f"the TLS connection to {shown} failed (certificate or handshake)"
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "REFUSED" in text:
        return f"the connection to {shown} was refused"
    return f"could not connect to {shown}"


def _network_failure(exc: Exception, shown: str, timeout_ms: int) -> JobFailed:
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return _refuse(f"no complete response from {shown} within {timeout_ms} ms")
    if isinstance(exc, httpx.ConnectError):
        return _refuse(_connect_reason(exc, shown))
    if isinstance(exc, httpx.RemoteProtocolError):
        return _refuse(f"{shown} sent an invalid HTTP response or closed the connection")
    if isinstance(exc, httpx.DecodingError):
        return _refuse(f"{shown} sent a body that could not be decompressed")
    return _refuse(f"the request to {shown} failed ({type(exc).__name__})")


async def fetch(
    url: str,
    options: dict[str, Any] | None,
    policy: NetPolicy,
    resolver: Resolver = system_resolver,
) -> dict[str, Any]:
    """Perform a job's ``http(url, options)``; the result is plain JSON-able data."""
    started = time.monotonic()
    opts = _parse_options(url, options)
    seconds = opts.timeout_ms / 1000
    shown = display_url(url) if isinstance(url, str) else "the URL"
    client = httpx.AsyncClient(
        trust_env=False, follow_redirects=False, timeout=httpx.Timeout(seconds)
    )
    try:
        async with client, asyncio.timeout(seconds):
            response, body, final = await _exchange(client, url, opts, policy, resolver)
    except JobFailed:
        raise
    except (TimeoutError, OSError, httpx.HTTPError, httpx.InvalidURL, httpx.StreamError,
            ValueError) as exc:
        raise _network_failure(exc, shown, opts.timeout_ms) from None
    return _result(response, body, final, started)
