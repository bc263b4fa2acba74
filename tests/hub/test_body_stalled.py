"""A request body that stops arriving (shorter than its Content-Length, a client gone
quiet) is refused with SYS-408 once no byte has come for ``BODY_IDLE_S``; a slow body
that keeps coming is read whole."""

from __future__ import annotations

import asyncio

import pytest
from starlette.requests import Request
from starlette.types import Message

from hub.api import inbound
from shared.errors import BodyStalled


def _request(pieces: list[bytes], then_wait: bool, gap_s: float = 0.0) -> Request:
    """A POST whose body comes as ``pieces`` (``gap_s`` apart), then either ends or
    never says more."""
    queue = list(pieces)
    forever = asyncio.Event()

    async def receive() -> Message:
        if queue:
            await asyncio.sleep(gap_s)
            piece = queue.pop(0)
            more = bool(queue) or then_wait
            return {"type": "http.request", "body": piece, "more_body": more}
        await forever.wait()  # a client holding the socket open, sending nothing
        return {"type": "http.disconnect"}

    scope = {"type": "http", "method": "POST", "path": "/", "headers": [
        (b"content-length", b"1000")], "query_string": b""}
    return Request(scope, receive)


def test_a_body_that_stops_coming_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inbound, "BODY_IDLE_S", 0.2)
    with pytest.raises(BodyStalled) as refused:
        asyncio.run(inbound.read_body(_request([b'{"a": 1, '], then_wait=True), 10_000))
    assert refused.value.code == "SYS-408" and refused.value.http_status == 408
    assert "0.2 s" in refused.value.message


def test_a_slow_body_that_keeps_coming_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inbound, "BODY_IDLE_S", 0.2)
    pieces = [b"x" * 10] * 5  # 0.5 s in all, never 0.2 s without a byte
    body = asyncio.run(inbound.read_body(_request(pieces, then_wait=False, gap_s=0.1), 10_000))
    assert body == b"x" * 50
