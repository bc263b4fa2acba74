"""The hub's HTTP/1.1 server protocol: uvicorn's (httptools), with the answer to bytes
that are not HTTP in the hub's own shape.

uvicorn answers a request its parser refuses (a bad request line, a header that is
not one, a broken chunked body) with a plain-text ``Invalid HTTP request received.``
before any route sees it. A webhook sender or a script reading the hub's answers
expects the JSON failure every other refusal has: here it is ``HUB-001``, with
``nosniff`` like every answer, and the connection closed as uvicorn closes it.
"""

from __future__ import annotations

import json

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from hub.api.security_headers import NOSNIFF
from shared.errors import BadRequest

__all__ = ["HubHttpProtocol", "not_http_answer"]


def not_http_answer() -> bytes:
    """The JSON body of the answer to bytes the HTTP parser refused."""
    failure = BadRequest("The request is not valid HTTP/1.1: the server could not read "
                         "its request line, headers or body")
    return json.dumps(failure.to_wire()).encode()


class HubHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, its 400 a coded JSON failure (see the module doc)."""

    def send_400_response(self, msg: str) -> None:
        body = not_http_answer()
        content = [STATUS_LINE[400]]
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
