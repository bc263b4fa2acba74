"""A connection whose client stops reading its answer is dropped after WRITE_STALL_S:
the answer would otherwise stay in the hub's memory, whole, for as long as the client
kept the socket (a never-reading client pinned 45 MB a request)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from hub.api import http_protocol


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.aborted = False
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name in ("sockname", "peername") else default

    def is_closing(self) -> bool:
        return self.closing or self.aborted

    def abort(self) -> None:
        self.aborted = True

    def close(self) -> None:
        self.closing = True

    def write(self, data: Any) -> None:
        pass


async def _app(scope: Any, receive: Any, send: Any) -> None:
    pass


def _protocol(loop: asyncio.AbstractEventLoop) -> http_protocol.HubHttpProtocol:
    config = uvicorn.Config(app=_app, log_config=None)
    config.load()
    cls = http_protocol.hub_http_protocol(60)
    return cls(config=config, server_state=ServerState(), app_state={}, _loop=loop)


@pytest.mark.parametrize("resumed", [False, True])
def test_a_stalled_write_drops_the_connection(resumed: bool,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_protocol, "WRITE_STALL_S", 0.05)

    async def main() -> bool:
        protocol, transport = _protocol(asyncio.get_running_loop()), _Transport()
        protocol.connection_made(transport)
        protocol.pause_writing()
        if resumed:
            protocol.resume_writing()  # the client read on: nothing happens
        await asyncio.sleep(0.2)  # past the (patched) deadline: a timer's own wait
        protocol.connection_lost(None)
        return transport.aborted

    assert asyncio.run(main()) is not resumed
