"""An engine on its own event-loop thread, for synchronous callers (tests, the
benchmarks, tools): ``call`` runs a coroutine there and waits for its result."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

from hub.engine.engine import BridgeHost, Engine, EngineConfig

T = TypeVar("T")


class ThreadedEngine:
    def __init__(self, config: EngineConfig, bridge: BridgeHost | None = None) -> None:
        # uvloop, as in production: libuv reaps worker processes itself (asyncio's
        # threaded child watcher misreports them from a non-main-thread loop).
        self.loop = uvloop.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.engine = Engine(config, bridge)
        self.call(self.engine.start())

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.call(self.engine.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()
