"""A counting pass-through in front of PostgreSQL: every statement a client sends.

The server's own counters cannot say this: ``pg_stat_statements`` is not loaded on
the server the bench shares, ``log_statement`` needs its log, and
``pg_stat_database`` counts transactions (several statements each, flushed up to
seconds late). So the hub is given a ``postgresql://`` URL to this proxy, which
copies bytes both ways and reads the messages the client sends:

* a simple query (``Q``) is one statement;
* an extended-protocol ``Execute`` (``E``) is one statement: the text of the
  prepared statement its portal was bound to (``P`` then ``B``), so a statement
  psycopg prepared once and executes again is counted each time it runs.

Each statement is put in a kind by its text (:func:`kind_of`): ``hub`` for the
hub's own reads and writes, ``transaction`` (BEGIN, COMMIT, ROLLBACK, savepoints),
``session`` (SET, RESET, DISCARD, SHOW, a bare ``SELECT 1`` pool check) and
``listen`` (LISTEN, UNLISTEN). The proxy answers an SSL or GSS request itself with
"no", so the stream stays plain text it can read.
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
import threading
from collections import Counter
from dataclasses import dataclass, field

SSL_REQUEST = 80877103
GSS_REQUEST = 80877104
CANCEL_REQUEST = 80877102
TRANSACTION = ("BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION", "SAVEPOINT", "RELEASE",
               "END")
SESSION = ("SET ", "RESET ", "DISCARD ", "SHOW ", "DEALLOCATE ")
PARAMETER_LIST = re.compile(r"\(\$\d+(?:, \$\d+)*\)(?:, \(\$\d+(?:, \$\d+)*\))*")
KINDS = ("hub", "transaction", "session", "listen")


def kind_of(text: str) -> str:
    """The kind of statement ``text`` is (see the module's docstring)."""
    head = " ".join(text.split()).upper().rstrip(";")
    if head.startswith(TRANSACTION):
        return "transaction"
    if head.startswith(SESSION) or head in ("SELECT 1", ""):
        return "session"
    if head.startswith(("LISTEN ", "UNLISTEN ")):
        return "listen"
    return "hub"


@dataclass
class Tally:
    """Statements counted so far: by kind, and by text (whitespace folded)."""

    kinds: Counter[str] = field(default_factory=Counter)
    texts: Counter[str] = field(default_factory=Counter)

    def add(self, text: str) -> None:
        self.kinds[kind_of(text)] += 1
        # One key for a statement whatever the length of its lists of parameters.
        self.texts[PARAMETER_LIST.sub("(…)", " ".join(text.split()))] += 1

    def copy(self) -> Tally:
        return Tally(Counter(self.kinds), Counter(self.texts))

    def minus(self, other: Tally) -> Tally:
        kinds = Counter({k: self.kinds[k] - other.kinds[k] for k in self.kinds})
        texts = Counter({t: self.texts[t] - other.texts[t] for t in self.texts})
        return Tally(kinds, texts)


class CountingProxy:
    """Listens on 127.0.0.1 (``port``) and passes each connection on to the server."""

    def __init__(self, server_host: str = "127.0.0.1", server_port: int = 5432) -> None:
        self._server = (server_host, server_port)
        self._lock = threading.Lock()
        self._tally = Tally()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, name="pg-counter", daemon=True).start()

    def snapshot(self) -> Tally:
        with self._lock:
            return self._tally.copy()

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self._server, timeout=10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        threading.Thread(target=_copy, args=(upstream, client), daemon=True).start()
        try:
            if self._startup(client, upstream):
                self._messages(client, upstream)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                _shut(sock)

    def _startup(self, client: socket.socket, upstream: socket.socket) -> bool:
        """Pass the startup message on, refusing encryption first; False: nothing follows."""
        while True:
            head = _read(client, 8)
            (length, code) = struct.unpack("!II", head)
            body = _read(client, length - 8)
            if code in (SSL_REQUEST, GSS_REQUEST):
                client.sendall(b"N")
                continue
            upstream.sendall(head + body)
            return bool(code != CANCEL_REQUEST)

    def _messages(self, client: socket.socket, upstream: socket.socket) -> None:
        prepared: dict[bytes, str] = {}
        portals: dict[bytes, bytes] = {}
        while True:
            head = _read(client, 5)
            kind, length = head[:1], struct.unpack("!I", head[1:])[0]
            body = _read(client, length - 4)
            # Counted before it is passed on: counted after, the server's answer could
            # reach the client first, and a count read then would miss the statement.
            self._note(kind, body, prepared, portals)
            upstream.sendall(head + body)
            if kind == b"X":
                return

    def _note(self, kind: bytes, body: bytes, prepared: dict[bytes, str],
              portals: dict[bytes, bytes]) -> None:
        """Count a simple query or an execute; remember what parse and bind name."""
        if kind == b"Q":
            self._count(body.rstrip(b"\x00").decode(errors="replace"))
        elif kind == b"P":
            name, rest = body.split(b"\x00", 1)
            prepared[name] = rest.split(b"\x00", 1)[0].decode(errors="replace")
        elif kind == b"B":
            portal, rest = body.split(b"\x00", 1)
            portals[portal] = rest.split(b"\x00", 1)[0]
        elif kind == b"E":
            portal = body.split(b"\x00", 1)[0]
            self._count(prepared.get(portals.get(portal, b""), "?"))

    def _count(self, text: str) -> None:
        with self._lock:
            self._tally.add(text)


def _read(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionResetError("closed")
        data += chunk
    return bytes(data)


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        _shut(target)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
