"""PostgreSQL ``LISTEN/NOTIFY`` for the hub: one node tells the others that something
changed (a job saved, a schedule edited, a run to stop), so they need not poll.

A :class:`Listener` (made by :meth:`hub.store.hubdb.HubDatabase.listen`) holds one
dedicated psycopg connection in a daemon thread that ``LISTEN``\\ s on its channels
and waits on the socket. When the connection is lost (a restart, an outage, its
session terminated) it connects again, with a growing pause between tries, and calls
``on_resync()`` after every connect, the first included: what was sent while it was
away is gone, so the owner reloads what it caches. ``on_lost()`` (optional) when a
connection it had is lost, before it tries again: until the next ``on_resync()``
nothing is heard, so an owner that trusts what it caches because it would be told of
a change must stop trusting it (a listener can be away while the owner's other
connections still work: its session ended, or no connection slot free for it). It
is not called when the first connect fails (no ``on_resync()`` came before), nor
for :meth:`Listener.close`. ``on_message(channel, payload)``, ``on_resync()`` and
``on_lost()`` run on the listener's own thread, one at a time, in order.

Channel names are identifiers (letters, digits, ``_``; at most 63 characters, the
case kept); a payload is text under PostgreSQL's 8000 bytes (:func:`check_notification`).
"""

from __future__ import annotations

import contextlib
import logging
import re
import select
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from shared.errors import BadRequest, StoreUnavailable

if TYPE_CHECKING:
    from hub.store.pgconn import PsycopgDriver

__all__ = ["MAX_PAYLOAD_BYTES", "Listener", "check_notification"]

log = logging.getLogger("webhub.db.notify")

MAX_PAYLOAD_BYTES = 8000   # PostgreSQL's limit (payloads must be shorter)
RETRY_FIRST_S = 0.1
RETRY_MOST_S = 5.0
KEEPALIVE_S = 30.0         # an idle listener pings this often: a silent loss shows
_CHANNEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_channel(channel: str) -> str:
    if not isinstance(channel, str) or not _CHANNEL.fullmatch(channel):
        raise BadRequest(f"A notification channel is a name of letters, digits and _ "
                         f"(at most 63), not {channel!r:.80}")
    return channel


def check_notification(channel: str, payload: str) -> None:
    """A BadRequest unless ``channel`` is a channel name and ``payload`` text under
    PostgreSQL's 8000 bytes (UTF-8)."""
    check_channel(channel)
    if not isinstance(payload, str):
        raise BadRequest("A notification's payload is text")
    if len(payload.encode("utf-8", "surrogatepass")) >= MAX_PAYLOAD_BYTES:
        raise BadRequest(f"A notification's payload must be under {MAX_PAYLOAD_BYTES} bytes")


class Listener:
    """``LISTEN`` on some channels in a thread of its own (see the module doc)."""

    def __init__(self, driver: PsycopgDriver, channels: Iterable[str],
                 on_message: Callable[[str, str], None], on_resync: Callable[[], None],
                 on_lost: Callable[[], None] | None = None) -> None:
        self.channels = tuple(check_channel(c) for c in channels)
        if not self.channels:
            raise BadRequest("A listener needs at least one channel")
        self._driver = driver
        self._on_message = on_message
        self._on_resync = on_resync
        self._on_lost = on_lost
        self._stop = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._lock = threading.Lock()
        self._conn: Any = None
        self._pending: deque[tuple[str, str]] = deque()  # received, not yet delivered
        self.connects = 0   # how many times it has connected (the first included)
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"webhub-listen-{'+'.join(self.channels)[:40]}")
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def connected(self) -> bool:
        """Whether it holds a connection now (between a loss and the next connect
        notifications can be missed: ``on_resync`` follows the next connect)."""
        return self._conn is not None

    @property
    def backend_pid(self) -> int | None:
        """The server process of the connection it holds now (None between them)."""
        conn = self._conn
        try:
            return None if conn is None or conn.closed else int(conn.info.backend_pid)
        except Exception:  # closing under us: no connection
            return None

    def close(self, timeout: float = 5.0) -> None:
        """Stop: the thread ends (waits up to ``timeout``), its connection is closed.
        Safe to call more than once, and from a callback (the thread then ends after
        the callback returns)."""
        self._stop.set()
        with contextlib.suppress(OSError):  # already closed: the thread has gone
            self._wake_w.send(b"x")
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    # -- the thread -------------------------------------------------------------

    def _run(self) -> None:
        pause = RETRY_FIRST_S
        try:
            while not self._stop.is_set():
                if self._session(first_try=pause == RETRY_FIRST_S):
                    pause = RETRY_FIRST_S
                    continue  # it was connected: try again at once
                if self._stop.wait(pause):
                    break
                pause = min(pause * 2, RETRY_MOST_S)
        finally:
            self._drop()
            self._wake_r.close()
            self._wake_w.close()

    def _session(self, *, first_try: bool) -> bool:
        """Connect, resync and serve until the connection is lost or the listener is
        closed; whether it got connected. A lost connection (or a first connect that
        fails) is a warning; the tries to connect again after it are logged quietly.
        A connection lost after its resync is told to the owner (``on_lost``)."""
        connected = False
        try:
            self._connect()
            connected = True
            if self.connects > 1:
                log.info("Listener on %s is listening again", ",".join(self.channels))
            self._call(self._on_resync)
            self._serve()
        except Exception as exc:  # any loss, the server's or the network's: connect again
            reason = exc.message if isinstance(exc, StoreUnavailable) else \
                self._driver.message(exc)
            if not self._stop.is_set():
                self._log_failure(reason, connected=connected, first_try=first_try)
        finally:
            self._drop()
        if connected and self._on_lost is not None:
            self._call(self._on_lost)  # skipped once closed: the owner stopped it
        return connected

    def _log_failure(self, reason: str, *, connected: bool, first_try: bool) -> None:
        names = ",".join(self.channels)
        if connected:
            log.warning("Listener on %s lost its connection (%s); reconnecting", names, reason)
        else:
            (log.warning if first_try and self.connects == 0 else log.info)(
                "Listener on %s cannot connect (%s); trying again", names, reason)

    def _connect(self) -> None:
        from psycopg import sql

        conn = self._driver.connect(application_name="webhub-listen")
        conn.add_notify_handler(self._received)
        with self._lock:
            self._conn = conn
        for channel in self.channels:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        self.connects += 1

    def _serve(self) -> None:
        """Wait on the socket (and the wake-up pipe) until stopped or disconnected.
        psycopg hands every notification it parses, here or under a statement, to
        :meth:`_received`; they are delivered in order between waits."""
        conn = self._conn
        pgconn = conn.pgconn
        poller = select.poll()  # not select(): no limit on the socket's number
        poller.register(conn.fileno(), select.POLLIN)
        poller.register(self._wake_r.fileno(), select.POLLIN)
        while not self._stop.is_set():
            self._deliver()
            ready = {fd for fd, _ in poller.poll(KEEPALIVE_S * 1000)}
            if self._wake_r.fileno() in ready:
                return
            if not ready:
                conn.execute("SELECT 1")  # raises when the connection is gone
                continue
            pgconn.consume_input()  # raises when the server has closed it
            while (note := pgconn.notifies()) is not None:
                self._pending.append((note.relname.decode("utf-8", "replace"),
                                      note.extra.decode("utf-8", "replace")))
            if pgconn.status != self._driver.psycopg.pq.ConnStatus.OK:
                raise self._driver.psycopg.OperationalError("the connection was closed")

    def _received(self, note: Any) -> None:
        self._pending.append((note.channel, note.payload))

    def _deliver(self) -> None:
        while self._pending and not self._stop.is_set():
            channel, payload = self._pending.popleft()
            self._call(self._on_message, channel, payload)

    def _call(self, callback: Callable[..., None], *args: str) -> None:
        if self._stop.is_set():
            return
        try:
            callback(*args)
        except Exception:
            log.exception("A notification callback on %s failed", ",".join(self.channels))

    def _drop(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            self._driver.close(conn)
