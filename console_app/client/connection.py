"""One hub, over HTTP: JSON calls and NDJSON streams, with failures as classes.

Every method blocks; the GUI calls them through :mod:`console_app.tasks`, never on
its own thread. A stream checks its :class:`CancelToken` between chunks and closes
the response when asked, so the hub sees the client go and stops the run."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from console_app.client.errors import HubUnreachable, NotAHub
from console_app.client.gui_guard import check_not_gui_thread
from shared.errors import WebJobsError, error_from_wire
from shared.ndjson import StreamEvent, read_stream
from shared.wire import ShapeError, decode

API = "/api/webjobs"
T = TypeVar("T")


class CancelToken:
    """Set from any thread. A stream under it closes its connection at once, even
    while waiting for a run that prints nothing."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._hooks: list[Callable[[], None]] = []

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            with contextlib.suppress(Exception):  # closing twice or late is harmless
                hook()

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when cancelled (at once if it already is)."""
        with self._lock:
            if not self._event.is_set():
                self._hooks.append(hook)
                return
        hook()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass(frozen=True)
class Answer:
    """A non-JSON answer (a file, a page): bytes with what the hub said of them."""

    status: int
    content_type: str
    body: bytes
    headers: dict[str, str]


def _failure(response: httpx.Response) -> WebJobsError:
    try:
        obj = response.json()
    except ValueError:
        obj = None
    if isinstance(obj, dict) and obj.get("success") is False and "code" in obj:
        return error_from_wire(obj)
    if isinstance(obj, dict) and "detail" in obj:  # a framework-level refusal
        return error_from_wire({"code": "HUB-001", "error": str(obj["detail"])})
    return NotAHub(f"The server answered HTTP {response.status_code}, not as a WebJobs hub")


class HubConnection:
    """A hub at ``url``, signed in with an API ``token`` (or none, for public calls)."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout,
                                  follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HubConnection:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, **kw: Any) -> httpx.Response:
        check_not_gui_thread(path)
        try:
            response = self._http.request(method, path, **kw)
        except httpx.TransportError as err:
            raise HubUnreachable(f"No answer from {self.url}: {type(err).__name__}") from None
        except httpx.InvalidURL:
            raise HubUnreachable(f"Not a usable hub address: {self.url}") from None
        if response.status_code >= 400:
            raise _failure(response)
        return response

    def call(self, method: str, path: str, **kw: Any) -> Any:
        """A management call answered with JSON; a hub failure raises its class."""
        response = self._send(method, path, **kw)
        try:
            return response.json()
        except ValueError:
            raise NotAHub(f"{path} did not answer JSON") from None

    def typed(self, shape: type[T], method: str, path: str, **kw: Any) -> T:
        """A management call whose answer is read as ``shape`` (a ``shared.wire``
        dataclass); an answer of another shape is a hub this console does not know."""
        answer = self.call(method, path, **kw)
        try:
            return decode(shape, answer)
        except ShapeError as err:
            raise NotAHub(f"{method} {path} answered in a shape this console does not "
                          f"know ({err})") from None

    def get(self, path: str, **params: Any) -> Any:
        clean = {k: v for k, v in params.items() if v is not None}
        return self.call("GET", path, params=clean)

    def post(self, path: str, json: Any = None, **kw: Any) -> Any:
        return self.call("POST", path, json=json, **kw)

    def put(self, path: str, json: Any = None) -> Any:
        return self.call("PUT", path, json=json)

    def delete(self, path: str) -> Any:
        return self.call("DELETE", path)

    def fetch(self, method: str, path: str, **kw: Any) -> Answer:
        """Any answer as bytes (job results that are files or pages)."""
        response = self._send(method, path, **kw)
        return Answer(response.status_code, response.headers.get("content-type", ""),
                      response.content, dict(response.headers))

    def stream(self, method: str, path: str, cancel: CancelToken,
               **kw: Any) -> Iterator[StreamEvent]:
        """NDJSON events as they arrive; stops quietly once ``cancel`` is set."""
        check_not_gui_thread(path)
        headers = {"Accept": "application/x-ndjson", **kw.pop("headers", {})}
        try:
            with self._http.stream(method, path, headers=headers, timeout=httpx.Timeout(
                    30.0, read=None), **kw) as response:
                if response.status_code >= 400:
                    response.read()
                    raise _failure(response)
                cancel.on_cancel(lambda: _hang_up(response))
                yield from read_stream(_chunks(response, cancel))
        except (httpx.TransportError, httpx.StreamClosed) as err:
            if not cancel.cancelled:
                raise HubUnreachable(f"The hub at {self.url} went away: "
                                     f"{type(err).__name__}") from None


def _hang_up(response: httpx.Response) -> None:
    """Close the socket under a stream from another thread. ``response.close()``
    would wait for the reader, which may be blocked on a run that prints nothing;
    shutting the socket down wakes it at once."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        sock.shutdown(socket.SHUT_RDWR)


def _chunks(response: httpx.Response, cancel: CancelToken) -> Iterator[bytes]:
    for chunk in response.iter_raw():
        if cancel.cancelled:
            return  # leaving the with-block closes the connection: the hub stops the run
        yield chunk
