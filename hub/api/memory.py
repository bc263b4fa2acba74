"""Giving memory back after a large answer.

A job's result crosses the hub as one ``bytes`` object (up to
``WEBJOB_MAX_RESULT_MB``). Once it is sent Python frees it, but glibc keeps the
freed pages of its heap for the next allocation, so a few large answers at once
would leave the hub hundreds of MB bigger for good. After an answer of at least
``TRIM_FROM_BYTES`` the allocator is asked to return what it no longer uses
(``malloc_trim``), off the event loop and once for a burst of large answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.engine.background import background

TRIM_FROM_BYTES = 4 * 1024 * 1024
# Long enough for the request's frames (and the body they hold) to be gone.
_TRIM_AFTER_S = 0.05


def _malloc_trim() -> Callable[[int], int] | None:
    with contextlib.suppress(OSError, AttributeError):
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim  # glibc only
        return trim
    return None


class GiveBackMemory:
    """Plain ASGI: counts what each answer sends, and trims after a large one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._trim = _malloc_trim()
        self._pending = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._trim is None:
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
            if sent >= TRIM_FROM_BYTES and not self._pending:
                self._pending = True
                asyncio.get_running_loop().call_later(_TRIM_AFTER_S, self._start_trim)

    def _start_trim(self) -> None:
        background(asyncio.to_thread(self._run_trim))

    def _run_trim(self) -> None:
        self._pending = False
        if self._trim is not None:
            self._trim(0)
