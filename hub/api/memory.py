"""Giving memory back after a large answer.

A job's result crosses the hub as one ``bytes`` object (up to
``WEBJOB_MAX_RESULT_MB``). Once it is sent Python frees it, but the allocator keeps
the freed pages, so a few large answers at once would leave the hub hundreds of MB
bigger for good. After an answer of at least ``TRIM_FROM_BYTES`` the allocator is
asked to return what it no longer uses (hub.services.memory: off the event loop and
once for a burst of large answers).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.services.memory import HeapTrim, malloc_trim

TRIM_FROM_BYTES = 4 * 1024 * 1024


class GiveBackMemory:
    """Plain ASGI: counts what each answer sends, and asks for a trim after a large one."""

    def __init__(self, app: ASGIApp, heap: HeapTrim | None = None) -> None:
        self.app = app
        self.heap = heap if heap is not None else HeapTrim(malloc_trim())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.heap.available:
            await self.app(scope, receive, send)
            return
        sent = 0

        async def counting_send(message: Message) -> None:
            nonlocal sent
            if message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            if sent >= TRIM_FROM_BYTES:
                self.heap.ask()
