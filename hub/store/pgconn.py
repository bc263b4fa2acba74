"""PostgreSQL through psycopg 3: the hub's own tables over ``postgresql://`` URLs.

What :class:`hub.store.hubdb.HubDatabase` asks of this driver:

* connections open in autocommit, with a short ``connect_timeout``, so a database
  that is down fails at once as :class:`~shared.errors.StoreUnavailable`;
* the stores' ``?`` placeholders become psycopg's ``%s`` (a literal ``%`` doubled,
  quoted text left alone), translated once per statement text (cached);
* a transaction is an explicit ``BEGIN`` ... ``COMMIT``, sent like any statement,
  so a pooled connection that died is found at ``BEGIN`` (before anything of the
  transaction was sent) and replaced;
* a pooled connection is checked before reuse (:meth:`PsycopgDriver.usable`):
  whether psycopg still holds it open, whether the server sent anything while it sat
  idle (a terminated session leaves its farewell in the socket), and, after a few
  idle seconds or such a message, a ``SELECT 1``;
* driver errors become the hub's by SQLSTATE (:meth:`PsycopgDriver.translate`);
  no message ever carries the URL's password.

psycopg is imported only when a ``postgresql://`` URL is opened.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
import select
from collections.abc import Sequence
from typing import Any

from hub.dburl import DatabaseUrl
from hub.store.dialects import DIALECTS
from shared.errors import BadRequest, Conflict, InternalError, StoreUnavailable

__all__ = ["CONNECT_S", "PsycopgDriver", "placeholders"]

CONNECT_S = 3   # libpq's connect_timeout: a server that does not answer fails fast
IDLE_CHECK_S = 5.0
# What a URL does not say itself: fail fast, and find out when the peer is gone (an
# unanswered send gives up after 30 s, an idle connection is probed by keepalives).
_DEFAULTS = {"connect_timeout": CONNECT_S, "keepalives": 1, "keepalives_idle": 30,
             "keepalives_interval": 10, "keepalives_count": 3, "tcp_user_timeout": 30000}
# Outages and transient refusals: the client should try again later.
_UNAVAILABLE_STATES = ("08", "57P0", "53", "40001", "40P01", "55P03", "57014")
# Quoted text, quoted names and comments pass through as they are; a ``?`` or ``%``
# outside them is a placeholder or an operator.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|\?|%")


@functools.lru_cache(maxsize=2048)
def placeholders(sql: str) -> str:
    """``sql`` with each ``?`` placeholder as ``%s`` and every ``%`` as ``%%``
    (psycopg reads ``%`` anywhere in a statement sent with parameters, quoted text
    included)."""
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        return token.replace("%", "%%")
    return _TOKENS.sub(replace, sql)


def _readable(fd: int) -> bool:
    """Whether the socket has something to read now (poll: no limit on fd numbers)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class PsycopgDriver:
    """Opens, checks and reads the errors of psycopg connections to one database."""

    dialect = DIALECTS["postgresql"]

    def __init__(self, url: DatabaseUrl, label: str, setting: str) -> None:
        try:
            self.psycopg: Any = importlib.import_module("psycopg")
        except ImportError:
            raise BadRequest(f"{setting}: postgresql URLs need the psycopg package") from None
        self.url = url
        self.label = label
        self.idle_check_s = IDLE_CHECK_S
        try:
            given = importlib.import_module("psycopg.conninfo").conninfo_to_dict(url.target)
        except self.psycopg.Error:
            raise BadRequest(f"{setting}: the PostgreSQL URL cannot be read: {url}") from None
        self._password = str(given.get("password") or "")
        self._options = {k: v for k, v in _DEFAULTS.items() if k not in given}

    # -- connections ----------------------------------------------------------------

    def connect(self, *, application_name: str = "webhub") -> Any:
        """A new connection, autocommit; StoreUnavailable (soon: ``connect_timeout``)
        when the server cannot be reached or refuses it."""
        options = {"application_name": application_name, **self._options}
        try:
            conn = self.psycopg.connect(self.url.target, autocommit=True, **options)
        except self.psycopg.Error as exc:
            raise StoreUnavailable(f"The {self.label} ({self.url}) is unavailable: "
                                   f"{self.message(exc)}") from None
        # Every int a BIGINT, as ODBC sends it: psycopg would type 300 a smallint, and
        # ``? * ?`` of two of them would overflow.
        numeric = importlib.import_module("psycopg.types.numeric")
        conn.adapters.register_dumper(int, numeric.Int8Dumper)
        conn.adapters.register_dumper(int, numeric.Int8BinaryDumper)
        return conn

    def usable(self, conn: Any, idle_s: float) -> bool:
        """Whether a pooled connection may be handed out again (see the module doc)."""
        if conn.closed or conn.broken:
            return False
        if conn.info.transaction_status != self.psycopg.pq.TransactionStatus.IDLE:
            return False
        try:
            spoken = _readable(conn.fileno())
        except (OSError, ValueError):
            return False
        if not spoken and idle_s < self.idle_check_s:
            return True
        try:
            conn.execute("SELECT 1").fetchone()
        except self.psycopg.Error:
            return False
        return True

    @staticmethod
    def close(conn: Any) -> None:
        with contextlib.suppress(Exception):  # a connection that is gone is closed enough
            conn.close()

    # -- statements -----------------------------------------------------------------

    @staticmethod
    def execute(conn: Any, sql: str, params: Sequence[Any], *,
                fresh_plan: bool = False) -> Any:
        """``fresh_plan``: never prepared (psycopg prepares a statement sent often)."""
        prepare = False if fresh_plan else None
        if not params:  # sent as it is: no placeholders to fill, ``%`` means itself
            return conn.execute(sql, prepare=prepare)
        return conn.execute(placeholders(sql), list(params), prepare=prepare)

    def begin(self, conn: Any) -> None:
        conn.execute("BEGIN")

    def end(self, conn: Any, *, commit: bool) -> None:
        conn.execute("COMMIT" if commit else "ROLLBACK")

    @staticmethod
    def new_id(cursor: Any) -> int | None:
        row = cursor.fetchone()
        return None if row is None or row[0] is None else int(row[0])

    # -- errors ---------------------------------------------------------------------

    def lost_connection(self, exc: Exception) -> bool:
        """A failure of the connection, not of the statement."""
        state = getattr(exc, "sqlstate", None) or ""
        if state.startswith(("08", "57P0")):
            return True
        return isinstance(exc, (self.psycopg.OperationalError, self.psycopg.InterfaceError)) \
            and not state

    def translate(self, exc: Exception) -> Exception:
        """The hub's error for a psycopg one, by SQLSTATE class: 23 a Conflict, 42 a
        refused statement, 22 a refused value (both the statement's fault, not an
        outage), connection failures and transient refusals StoreUnavailable."""
        if not isinstance(exc, self.psycopg.Error):
            return exc
        state = getattr(exc, "sqlstate", None) or ""
        if state.startswith("23"):
            return Conflict(f"That clashes with a row already in the {self.label}")
        if state.startswith("42"):
            return InternalError(f"The {self.label} refused a statement: {self.message(exc)}")
        if state.startswith("22"):
            return InternalError(f"The {self.label} refused a value: {self.message(exc)}")
        if self.lost_connection(exc) or state.startswith(_UNAVAILABLE_STATES):
            return StoreUnavailable(f"The {self.label} is unavailable: {self.message(exc)}")
        return InternalError(f"The {self.label} failed: {self.message(exc)}")

    def message(self, exc: Exception) -> str:
        """The server's or libpq's first line, without psycopg's prefix and never with
        the password (libpq does not quote it; this makes sure)."""
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = text.removeprefix("connection failed: ")
        text = re.sub(r"^connection to server at .*? failed: (FATAL:\s+)?", "", text)
        if self._password:
            text = text.replace(self._password, "***")
        return text[:300] or type(exc).__name__
