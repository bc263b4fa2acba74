"""Slow clients are cut off: a request's headers must all arrive within
``WEBHUB_HEADER_TIMEOUT_S`` (1 s here) of its first byte, or of the connection for the
first request; a client that dribbles a header, or connects and says nothing, loses
its connection. A client that is merely slow but in time is answered."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from tests.hub.conftest import HubProcess

DEADLINE_S = 1


def _connect(hub: HubProcess) -> socket.socket:
    host, port = hub.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.settimeout(0.2)
    return sock


def _closed_within(sock: socket.socket, seconds: float, dribble: bool) -> float | None:
    """Seconds until the server closed ``sock`` (None if it never did), sending a
    header line every 0.5 s meanwhile when ``dribble``."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if dribble:
            try:
                sock.sendall(b"X-Slow: a\r\n")
            except OSError:
                return time.monotonic() - started
        try:
            if sock.recv(1024) == b"":
                return time.monotonic() - started
        except TimeoutError:
            pass
        except OSError:
            return time.monotonic() - started
        time.sleep(0.3)  # the client's own pace: it is the slow party here
    return None


def test_a_dribbled_header_loses_its_connection(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_HEADER_TIMEOUT_S": str(DEADLINE_S)})
    sock = _connect(hub)
    try:
        sock.sendall(b"GET /api/webjobs/health HTTP/1.1\r\nHost: x\r\n")
        closed = _closed_within(sock, 4 * DEADLINE_S, dribble=True)
    finally:
        sock.close()
    assert closed is not None and closed < DEADLINE_S + 1.5, closed


def test_a_silent_connection_is_closed(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_HEADER_TIMEOUT_S": str(DEADLINE_S)})
    sock = _connect(hub)
    try:
        closed = _closed_within(sock, 4 * DEADLINE_S, dribble=False)
    finally:
        sock.close()
    assert closed is not None and closed < DEADLINE_S + 1.5, closed


def test_slow_headers_in_time_are_answered(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_HEADER_TIMEOUT_S": str(DEADLINE_S)})
    sock = _connect(hub)
    try:
        for line in (b"GET /api/webjobs/health HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"):
            sock.sendall(line)
            time.sleep(0.2)
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        # The same connection's next request gets its own deadline.
        time.sleep(DEADLINE_S / 2)
        sock.sendall(b"GET /api/webjobs/health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        sock.close()
