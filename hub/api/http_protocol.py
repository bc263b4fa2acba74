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

Two more ways to keep the parser busy are cut short: a request body that goes on
arriving after its answer has been sent (a chunked one can come in millions of tiny
chunks for as long as the client likes) closes the connection past
:data:`MAX_UNREAD_BODY`, a connection may have at most
:data:`MAX_PIPELINED` requests waiting behind the one being answered, and one whose
answer its client stops reading for :data:`WRITE_STALL_S` is dropped (the answer would
stay in memory, whole, for as long as the client liked).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from hub.api.security_headers import NOSNIFF
from shared.errors import BadRequest, HeadTooLarge, WebJobsError

__all__ = ["MAX_HEAD_BYTES", "HubHttpProtocol", "hub_http_protocol", "not_http_answer"]

MAX_HEAD_BYTES = 64 * 1024
MAX_PIPELINED = 16
MAX_UNREAD_BODY = 256 * 1024
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
    _unread_body: int | None = None  # bytes of a body that came after its answer went

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._overflowed:
            return  # closing once the request being answered is: the rest goes unread
        if self._unread_body is not None:  # a body whose answer has gone: nobody's
            self._unread_body += len(data)
            if self._unread_body > MAX_UNREAD_BODY:
                self.transport.close()
                return
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
        super().on_headers_complete()
        if len(self.pipeline) > MAX_PIPELINED:
            # Not queued: this connection is closed once the request being answered is,
            # and what else it sent is not read.
            self.pipeline.popleft()
            self._overflowed = True
            self.flow.pause_reading()

    def on_response_complete(self) -> None:
        # The request just answered is the newest one when its answer is complete (an
        # older one, pipelined, had all its body in before the next began): its body
        # may still be on its way. It is read on (closing now would reset a client still
        # sending a small body, its answer lost), up to MAX_UNREAD_BODY.
        cycle = self.cycle
        if cycle is not None and cycle.response_complete and cycle.more_body:
            self._unread_body = 0
        if self._overflowed and not self.transport.is_closing():
            self.transport.close()
            return
        super().on_response_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._unread_body = None  # that body is all in

    def _refuse_head(self) -> None:
        self._stop_header_timer()
        self._head_open = False
        failure = HeadTooLarge(f"The request line and headers are over "
                               f"{MAX_HEAD_BYTES // 1024} KB together")
        self._send_failure(431, not_http_answer(failure))

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_timer()
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


def _cancelled(timer: asyncio.TimerHandle | None) -> asyncio.TimerHandle | None:
    """Cancel ``timer`` if there is one; what its slot holds next (nothing)."""
    if timer is not None:
        timer.cancel()
    return None


def hub_http_protocol(header_timeout_s: float) -> type[HubHttpProtocol]:
    """The protocol class uvicorn is given, with the hub's header deadline."""
    return type("HubHttpProtocol", (HubHttpProtocol,), {"header_timeout_s": header_timeout_s})
