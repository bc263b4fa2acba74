"""The hub's HTTP/1.1 server protocol: uvicorn's (httptools), with the answer to bytes
that are not HTTP in the hub's own shape, and a deadline for a request's headers.

uvicorn answers a request its parser refuses (a bad request line, a header that is
not one, a broken chunked body) with a plain-text ``Invalid HTTP request received.``
before any route sees it. A webhook sender or a script reading the hub's answers
expects the JSON failure every other refusal has: here it is ``HUB-001``, with
``nosniff`` like every answer, and the connection closed as uvicorn closes it.

uvicorn waits for a request's headers for as long as the client likes: a client that
sends a byte every few seconds (or nothing at all after connecting) holds a connection,
and enough of them hold the hub. Here a request's headers must all arrive within
``WEBHUB_HEADER_TIMEOUT_S`` of its first byte (of the connection, for the first
request); past it the connection is closed. Between requests the keep-alive timeout
applies as before.

Nor does anything bound their size: uvicorn and httptools build a URL and each header
value by copying it whole for every piece that arrives (a 48 MB one costs seconds, in
one call), and Starlette parses every cookie in Python. So a request's line and headers
may take :data:`MAX_HEAD_BYTES` together, counted as the bytes come, before the parser
sees them; past that the answer is ``SYS-431`` and the connection is closed. Browsers
and webhook senders send a few KB.

A request may be answered before its body is all in (a ``SYS-413`` by its
Content-Length, a 404, a refused sign-in). If the rest, by its Content-Length, is at most
:data:`MAX_UNREAD_BODY`, it is read on and the connection kept. Otherwise (more, or of
unknown size: a chunked one can come in millions of tiny chunks for as long as the client
likes, each costing the parser; or one whose client waits for a ``100 Continue`` that did
not go) the answer says ``connection: close`` and the connection *lingers* after it: the
hub's sending side is shut and what the client still sends is discarded unparsed until
it closes, for at most :data:`LINGER_S` and :data:`MAX_LINGER_BYTES`. Closing at once
would reset the connection while the client was still sending, and the reset can take
the answer with it, unread (a client sending 1 MB + 1 byte lost its ``SYS-413``, or got
it and then a reset on its next request). Either way the rest must come within
:data:`LINGER_S`.

Two more ways to keep the parser busy are cut short: a connection may have at most
:data:`MAX_PIPELINED` requests waiting behind the one being answered, and one whose
answer its client stops reading for :data:`WRITE_STALL_S` is dropped (the answer would
stay in memory, whole, for as long as the client liked).
"""

from __future__ import annotations

import asyncio
import json
import re
import weakref
from typing import Any

from uvicorn._types import (
    ASGI3Application,
    ASGIReceiveCallable,
    ASGISendCallable,
    ASGISendEvent,
    Scope,
)
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from hub.api.security_headers import NOSNIFF
from shared.errors import BadRequest, HeadTooLarge, WebJobsError

__all__ = ["MAX_HEAD_BYTES", "HubHttpProtocol", "hub_http_protocol", "not_http_answer"]

MAX_HEAD_BYTES = 64 * 1024
MAX_PIPELINED = 16
# The most of a body, still to come after its answer, read on with the connection kept.
MAX_UNREAD_BODY = 256 * 1024
# A connection lingering after its answer (see the module doc) is closed past these; a
# kept one whose body's rest is not all in LINGER_S after its answer is closed too.
LINGER_S = 10.0
MAX_LINGER_BYTES = 64 * 1024 * 1024
# An answer its client stops reading stays in memory, whole, for as long as the client
# keeps the socket: a connection whose writes stay paused this long is closed.
WRITE_STALL_S = 30.0
# A head ends at its first empty line (httptools takes bare LFs too); empty lines before
# a request line are skipped, never taken for that end.
_END_OF_HEAD = re.compile(rb"\n\r?\n")


def not_http_answer(failure: WebJobsError | None = None) -> bytes:
    """The JSON body of the answer to bytes the HTTP parser refused (or ``failure``)."""
    failure = failure or BadRequest("The request is not valid HTTP/1.1: the server could not "
                                    "read its request line, headers or body")
    return json.dumps(failure.to_wire()).encode()


class HubHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, its 400 a coded JSON failure and a deadline for
    headers (see the module doc)."""

    header_timeout_s: float = 10.0
    _header_timer: asyncio.TimerHandle | None = None
    # The request's head (line and headers) so far: open from the connection, or from a
    # request's first byte, until its headers are complete.
    _head_open = True
    _head_bytes = 0
    _head_tail = b""  # its last three bytes, for an end that spans two pieces
    _overflowed = False  # more requests pipelined than MAX_PIPELINED: closing
    # What the request being parsed has still to send of its body: bytes by its
    # Content-Length, None when of unknown size (chunked), 0 when it is all in.
    _body_left: int | None = 0
    _lingering = False  # closing after an answer: the client's bytes are discarded
    _lingered = 0
    _rest_timer: asyncio.TimerHandle | None = None  # for the rest of an answered body
    _stopping = False  # the server is shutting down: no lingering

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._lingering:  # nobody's bytes: discarded, never parsed
            self._lingered += len(data)
            if self._lingered > MAX_LINGER_BYTES:
                self.transport.close()
            return
        if self._overflowed:
            return  # closing once the request being answered is: the rest goes unread
        if self._head_open:
            seen = self._head_tail + data
            start = len(seen) - len(seen.lstrip(b"\r\n")) if self._head_bytes == 0 else 0
            end = _END_OF_HEAD.search(seen, start)
            taken = len(data) if end is None else end.end() - len(self._head_tail)
            if self._head_bytes + taken > MAX_HEAD_BYTES:
                self._refuse_head()
                return
            self._head_bytes += taken
            self._head_tail = seen[-3:]
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_open = True
        if self._header_timer is None:
            self._start_header_timer()

    def on_headers_complete(self) -> None:
        self._stop_header_timer()
        self._head_open, self._head_bytes, self._head_tail = False, 0, b""
        self._body_left = _body_length(self.headers)
        before = self.cycle
        super().on_headers_complete()
        if self.cycle is not before:  # a new request (an upgrade makes none)
            self.cycle.transport = _AnswerTransport(self)
        if len(self.pipeline) > MAX_PIPELINED:
            # Not queued: this connection is closed once the request being answered is,
            # and what else it sent is not read.
            self.pipeline.popleft()
            self._overflowed = True
            self.flow.pause_reading()

    def on_body(self, body: bytes) -> None:
        if self._body_left is not None:
            self._body_left -= len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._body_left = 0
        self._rest_timer = _cancelled(self._rest_timer)  # the rest came in time

    def on_response_complete(self) -> None:
        if self._lingering:  # closing: no keep-alive wait, nothing pipelined behind
            self.server_state.total_requests += 1
            return
        if self._overflowed and not self.transport.is_closing():
            self.transport.close()
            return
        if self._body_left != 0 and not self.transport.is_closing():
            self._start_rest_timer()  # kept open for the rest: it must come in time
        super().on_response_complete()

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        # The answer's start is where it is decided whether it says `connection: close`.
        # Wrapped here, not on the cycle: nothing the cycle holds may refer back to it or
        # to this protocol (a reference cycle keeps a request's memory until a full GC).
        async def answered(scope: Scope, receive: ASGIReceiveCallable,
                           send: ASGISendCallable) -> None:
            async def send_answer(message: ASGISendEvent) -> None:
                if not cycle.response_started and not self._may_stay_open(cycle):
                    cycle.keep_alive = False  # uvicorn says `connection: close`, closes
                await send(message)

            await app(scope, receive, send_answer)

        super()._start_asgi_task(cycle, answered)

    def _may_stay_open(self, cycle: RequestResponseCycle) -> bool:
        """Whether the connection may stay open past ``cycle``'s answer, about to start:
        its request's body is all in, or the rest is known and small enough to read."""
        if cycle is not self.cycle or self._body_left == 0:
            return True  # all in (the parser is past an older request's body)
        if cycle.waiting_for_100_continue:
            return False  # no `100 Continue` went: its client may never send the rest
        return self._body_left is not None and self._body_left <= MAX_UNREAD_BODY

    def close_after_answer(self) -> None:
        """Close the connection, as an answer's end (or its failure) asks: lingering
        while the request's body is still arriving (see the module doc)."""
        if (self._body_left == 0 or self._stopping or self._overflowed
                or self.transport.is_closing()):
            self.transport.close()
            return
        self._lingering = True
        if self.transport.can_write_eof():  # not over TLS: there the client's close ends it
            self.transport.write_eof()  # after the answer: the client reads it, then EOF
        self.flow.resume_reading()  # a paused read would stall the client's sending
        self._start_rest_timer()

    def shutdown(self) -> None:
        self._stopping = True
        if self._lingering:
            self.transport.close()  # the server is stopping: the client waits no longer
        else:
            super().shutdown()

    def _refuse_head(self) -> None:
        self._stop_header_timer()
        self._head_open = False
        failure = HeadTooLarge(f"The request line and headers are over "
                               f"{MAX_HEAD_BYTES // 1024} KB together")
        self._send_failure(431, not_http_answer(failure))

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_timer()
        self._rest_timer = _cancelled(self._rest_timer)
        self._write_timer = _cancelled(self._write_timer)
        super().connection_lost(exc)

    _write_timer: asyncio.TimerHandle | None = None

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(WRITE_STALL_S, self._write_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._write_timer = _cancelled(self._write_timer)

    def _write_stalled(self) -> None:
        self._write_timer = None
        if not self.transport.is_closing():
            self.transport.abort()  # close() would wait for the unread bytes to go

    def _start_header_timer(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _stop_header_timer(self) -> None:
        self._header_timer = _cancelled(self._header_timer)

    def _headers_late(self) -> None:
        self._header_timer = None
        self._close_if_open()

    def _start_rest_timer(self) -> None:
        if self._rest_timer is None:
            self._rest_timer = self.loop.call_later(LINGER_S, self._close_if_open)

    def _close_if_open(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        self._send_failure(400, not_http_answer())

    def _send_failure(self, status: int, body: bytes) -> None:
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend([
            b"content-type: application/json\r\n",
            NOSNIFF[0], b": ", NOSNIFF[1], b"\r\n",
            b"content-length: ", str(len(body)).encode("ascii"), b"\r\n",
            b"connection: close\r\n",
            b"\r\n",
            body,
        ])
        self.transport.write(b"".join(content))
        self.transport.close()


class _AnswerTransport(asyncio.Transport):
    """The connection as an answer (uvicorn's request cycle) sees it: its close is the
    protocol's :meth:`~HubHttpProtocol.close_after_answer`."""

    def __init__(self, protocol: HubHttpProtocol) -> None:
        super().__init__()
        self._transport = protocol.transport
        # Weak: the protocol holds the cycle that holds this (see _start_asgi_task).
        self._protocol = weakref.ref(protocol)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._transport.write(data)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def close(self) -> None:
        protocol = self._protocol()
        if protocol is None:  # the connection is gone: nothing to linger for
            self._transport.close()
        else:
            protocol.close_after_answer()


def _body_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """A request's body size by its headers (names lowercased, checked by llhttp); None
    when it is of unknown size (chunked)."""
    fields = dict(headers)
    if b"transfer-encoding" in fields:
        return None
    declared = fields.get(b"content-length", b"0").strip()
    return int(declared) if declared.isdigit() else None


def _cancelled(timer: asyncio.TimerHandle | None) -> asyncio.TimerHandle | None:
    """Cancel ``timer`` if there is one; what its slot holds next (nothing)."""
    if timer is not None:
        timer.cancel()
    return None


def hub_http_protocol(header_timeout_s: float) -> type[HubHttpProtocol]:
    """The protocol class uvicorn is given, with the hub's header deadline."""
    return type("HubHttpProtocol", (HubHttpProtocol,), {"header_timeout_s": header_timeout_s})
