"""Headers every answer of the hub carries, whatever route (or failure) made it."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF = (b"x-content-type-options", b"nosniff")


class NoSniff:
    """``X-Content-Type-Options: nosniff`` on every answer, replacing any a job set: a
    browser must not take a job's ``text/plain`` or JSON for HTML or a script.

    Plain ASGI (not Starlette's BaseHTTPMiddleware), so a streamed answer and a
    client's disconnect pass through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() != NOSNIFF[0]]
                message = {**message, "headers": [*headers, NOSNIFF]}
            await send(message)

        await self.app(scope, receive, send_with_nosniff)
