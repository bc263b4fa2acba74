"""Requests for a debug session that lives on another node are passed on to it.

A debug session is held in the memory of the node that opened it (its paused run is
there), but behind a load balancer the owner's console and the browser tab it drives
may land on any node. A session's id names its node (:func:`session_node`), so any node
can tell where a request belongs:

* ``/api/webjobs/debug-session/<id>/...`` (the console's events stream and commands);
* any ``/api/webjobs/...`` request tagged ``?_debug=<id>`` or by the ``webhub_debug``
  cookie (the browser tab under the debugger).

Such a request for another node's session is sent there as it came (method, path,
query, headers with its ``Host``, body) and its answer streamed back, so the owning node
does every check itself: sign-in (an Origin check sees the Host the browser used), the
session's owner, the job. The address this node saw is appended to
``X-Forwarded-For``: the nodes list each other in ``WEBHUB_TRUSTED_PROXIES``, so the
owning node counts limits against the client, never against a header the client wrote.
Only the two shapes above are passed on, spelled plainly (a path with escapes or dot
segments stays here, where it is refused or runs normally), and only whole bodies (a
client that hangs up mid-body gets nothing run). A forwarded request carries
``X-WebHub-Forwarded`` and is never passed on again (no loops). A node that is not
known, or has no address, leaves the request to this node: an unknown session then
runs normally or is a 404, as on one node.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import parse_qs

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.auth import DEBUG_COOKIE
from hub.services.debugging import session_node

__all__ = ["FORWARDED", "ForwardToSessionNode"]

log = logging.getLogger("webhub.forward")
FORWARDED = "x-webhub-forwarded"
PREFIX = "/api/webjobs/"
SESSION_PATH = PREFIX + "debug-session/"
TAG = "_debug"
# Hop-by-hop headers (RFC 9110 §7.6.1) and the one httpx sets itself.
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                  "te", "trailer", "transfer-encoding", "upgrade", "content-length"})
_SESSION_ID = re.compile(r"dbg_[0-9a-f]{16}\.[0-9a-f]{2,512}")
# What may be passed on: a session's events and commands, a tagged run of a job.
_FORWARDED_PATH = re.compile(r"/api/webjobs/(?:debug-session/[0-9a-z_.]+/[a-z]+"
                             r"|[A-Za-z0-9_-]+)")

PeerUrl = Callable[[str], Awaitable[str | None]]


def _cookie(scope: Scope, name: str) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name and v:
                    return str(v)
    return None


def tagged_session(scope: Scope) -> str | None:
    """The debug session a request is for, if it is one that may be passed on (see the
    module docstring)."""
    path: str = scope.get("path", "")
    raw = scope.get("raw_path")
    if not _FORWARDED_PATH.fullmatch(path) or (raw is not None and raw != path.encode()):
        return None
    found = _tag(scope, path)
    return found if found is not None and _SESSION_ID.fullmatch(found) else None


def _tag(scope: Scope, path: str) -> str | None:
    if path.startswith(SESSION_PATH):
        return str(path[len(SESSION_PATH):].split("/", 1)[0]) or None
    query: dict[str, list[str]] = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if query.get(TAG):
        return query[TAG][0]
    return _cookie(scope, DEBUG_COOKIE)


class ForwardToSessionNode:
    """ASGI middleware: another node's debug requests go to that node."""

    def __init__(self, app: ASGIApp, *, node: str, peer_url: PeerUrl,
                 max_body_bytes: int) -> None:
        self.app = app
        self.node = node
        self.peer_url = peer_url
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = await self._target(scope) if scope["type"] == "http" else None
        if target is None:
            await self.app(scope, receive, send)
            return
        await self._forward(target, scope, receive, send)

    async def _target(self, scope: Scope) -> str | None:
        if any(k == FORWARDED.encode() for k, _ in scope.get("headers", ())):
            return None
        session = tagged_session(scope)
        owner = session_node(session) if session else None
        if owner is None or owner == self.node:
            return None
        try:
            return await self.peer_url(owner)
        except Exception as exc:  # the directory is down: this node answers as it can
            log.info("debug session %s: node %s not found: %s", session, owner, exc)
            return None

    async def _forward(self, base: str, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_body(receive, self.max_body_bytes)
        if body is _GONE:
            return  # the client hung up mid-body: nothing to run, nobody to answer
        if body is None:
            await _plain(send, 413, b'{"success":false,"code":"SYS-413",'
                                    b'"error":"The request body is too large"}')
            return
        headers = _passed_on_headers(scope, self.node)
        url = base.rstrip("/") + scope["path"]
        query = scope.get("query_string", b"").decode("latin-1")
        # A client of its own per request: debug requests are few, and nothing is left
        # open when the hub stops.
        async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None),
                                     follow_redirects=False) as client:
            try:
                request = client.build_request(
                    scope["method"], url + (f"?{query}" if query else ""), headers=headers,
                    content=body)
                upstream = await client.send(request, stream=True)
            except httpx.InvalidURL:
                await _plain(send, 400, b'{"success":false,"code":"HUB-001",'
                                        b'"error":"The request is not valid"}')
                return
            except httpx.TransportError as exc:
                log.warning("debug request for node at %s failed: %s", base,
                            type(exc).__name__)
                await _plain(send, 503, b'{"success":false,"code":"SYS-503",'
                                        b'"error":"The node holding this debug session '
                                        b'cannot be reached"}')
                return
            try:
                await _until_gone(_relay(upstream, send), receive)
            finally:
                await upstream.aclose()


def _passed_on_headers(scope: Scope, node: str) -> list[tuple[str, str]]:
    """The request's headers for the owning node, with the peer this node saw appended
    to ``X-Forwarded-For`` and the loop guard added."""
    headers: list[tuple[str, str]] = []
    forwarded_for: list[str] = []
    for raw_key, raw_value in scope["headers"]:
        key, value = raw_key.decode("latin-1").lower(), raw_value.decode("latin-1")
        if key == "x-forwarded-for":
            forwarded_for.append(value)
        elif key not in _HOP and key != FORWARDED:
            headers.append((key, value))
    client = scope.get("client")
    if client:
        forwarded_for.append(str(client[0]))
    if forwarded_for:
        headers.append(("x-forwarded-for", ", ".join(forwarded_for)))
    headers.append((FORWARDED, node))
    return headers


_GONE = b"\0gone"  # _read_body: the client hung up before its body was in


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return _GONE
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _until_gone(relay: Awaitable[None], receive: Receive) -> None:
    """``relay``, cut short when the client hangs up: an events stream never ends by
    itself, and a server ignores what is sent to a client that has gone."""
    async def gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    relaying = asyncio.ensure_future(relay)
    watching = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({relaying, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (relaying, watching):
            task.cancel()
        await asyncio.gather(relaying, watching, return_exceptions=True)
    if relaying.done() and not relaying.cancelled() and relaying.exception():
        raise relaying.exception()  # type: ignore[misc]


async def _relay(upstream: httpx.Response, send: Send) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1"))
               for k, v in upstream.headers.multi_items() if k.lower() not in _HOP]
    await send({"type": "http.response.start", "status": upstream.status_code,
                "headers": headers})
    chunks: AsyncIterator[bytes] = upstream.aiter_raw()
    async for chunk in chunks:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
