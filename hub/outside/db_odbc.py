"""The business database through ODBC (:mod:`pyodbc`, imported only for ``odbc:`` URLs).

What the driver adds to the pool (:mod:`hub.outside.database`):

* **a reading of every job statement** before it runs — the SQLite3 driver's
  (:func:`~hub.outside.sqlite_guard.refused_in_sqlite_text`), or the servers'
  (:func:`~hub.outside.server_sql.refused_in_server_text`): no file of the hub's host,
  no change to the login, no SQL built at run time;
* **MariaDB's client-side file loading off** (:mod:`hub.outside.mariadb_client`) and
  checked on the first connection;
* **a statement that never outlives its run**: ``SQLCancel`` first, then on
  PostgreSQL and MariaDB the server is asked on a second connection — the statement
  (``pg_cancel_backend``, ``KILL QUERY``), then, if the statement's thread is still
  not back, the whole session (``pg_terminate_backend``, ``KILL CONNECTION``);
* **a session reset** between statements: ``DISCARD ALL`` on PostgreSQL; a fresh
  connection everywhere else (MariaDB Connector/ODBC has no working reset).
"""

from __future__ import annotations

import importlib
import logging
import threading
from typing import Any, Literal, cast

from hub.dburl import utf8_parameters
from hub.outside import mariadb_client
from hub.outside.db_drivers import Call, Driver
from hub.outside.server_sql import Dialect, Quoting, dialect_of, refused_in_server_text
from hub.outside.sqlite_guard import refusal, refused_in_sqlite_text
from shared.errors import JobFailed

__all__ = ["MAX_LOGIN_S", "OdbcDriver"]

log = logging.getLogger("webhub.outside")

# Longest an ODBC login may take, whatever time the run has left.
MAX_LOGIN_S = 10.0
CANCEL_LOGIN_S = 5
# The session's id (for a cancel from another connection) and the quoting settings the
# statement reader must lex by, read from the server with every new connection.
_SESSION = {
    "postgresql": "SELECT pg_catalog.pg_backend_pid(), "
                  "pg_catalog.current_setting('standard_conforming_strings')",
    "mariadb": "SELECT CONNECTION_ID(), @@SESSION.sql_mode",
}


class OdbcConnection:
    """A pyodbc connection, the server's id for its session and its quoting settings
    (None where unknown)."""

    __slots__ = ("quoting", "raw", "session")

    def __init__(self, raw: Any, session: int | None = None,
                 quoting: Quoting | None = None) -> None:
        self.raw = raw
        self.session = session
        self.quoting = quoting

    def cursor(self) -> Any:
        return self.raw.cursor()

    def close(self) -> None:
        self.raw.close()


class OdbcDriver(Driver):
    def __init__(self, conn_str: str) -> None:
        self.conn_str = conn_str
        self.pyodbc: Any = cast(Any, importlib.import_module("pyodbc"))
        self.pyodbc.native_uuid = True  # uuid columns as uuid.UUID, so values.py maps them
        self.dbms = ""  # the server's SQL_DBMS_NAME, lower case, once connected
        self.dialect: Dialect | Literal["sqlite"] | None = None
        # None until the first MariaDB connection was checked, then what it showed.
        self.local_files_refused: bool | None = None
        self._checking = threading.Lock()

    def connect(self, login_s: float) -> OdbcConnection:
        timeout = max(1, round(min(login_s, MAX_LOGIN_S)))
        conn_str = self.conn_str
        raw = self._open(conn_str, timeout)
        if self.dialect == "mariadb" and conn_str != (
                guarded := mariadb_client.business_connection_string(conn_str)):
            raw.close()  # learnt only now that it is MariaDB: again, with files off
            self.conn_str = guarded
            raw = self._open(guarded, timeout)
        try:
            if self.dialect == "mariadb" and self.local_files_refused is None:
                self._check_local_files(raw)
            return self._described(raw)
        except Exception:
            raw.close()
            raise

    def _open(self, conn_str: str, timeout: int) -> Any:
        raw = self.pyodbc.connect(conn_str, autocommit=True, timeout=timeout)
        self.dbms = str(raw.getinfo(self.pyodbc.SQL_DBMS_NAME)).lower()
        self.dialect = "sqlite" if "sqlite" in self.dbms else dialect_of(self.dbms)
        utf8_parameters(self.pyodbc, raw)
        return raw

    def _check_local_files(self, raw: Any) -> None:
        with self._checking:
            if self.local_files_refused is not None:
                return
            self.local_files_refused = mariadb_client.local_files_refused(
                raw, self.pyodbc.Error)
        if not self.local_files_refused:
            log.error(
                "WEBJOB_DB: this MariaDB connector would send a file of the hub's host when "
                "the server asks for one (LOAD DATA LOCAL INFILE). db.exec still refuses "
                "such statements, but set local_infile=OFF on the server, and leave "
                "MARIADB_HOME unset or give its my.cnf an [odbc] group with local-infile=0")

    def _described(self, raw: Any) -> OdbcConnection:
        sql = _SESSION.get(str(self.dialect))
        if sql is None:
            return OdbcConnection(raw)
        cursor = raw.cursor()
        try:
            session, setting = cursor.execute(sql).fetchone()
        finally:
            cursor.close()
        setting = str(setting or "")
        if self.dialect == "postgresql":
            quoting = Quoting(backslash_escapes=setting.lower() != "on")
        else:
            modes = setting.upper().split(",")
            quoting = Quoting("NO_BACKSLASH_ESCAPES" not in modes, "ANSI_QUOTES" in modes)
        return OdbcConnection(raw, int(session), quoting)

    def before_statement(self, conn: Any, sql: str, hub_statement: bool,
                         with_params: bool = False) -> None:
        if hub_statement:
            return
        if self.dialect == "sqlite":
            refused = refused_in_sqlite_text(sql)
        else:
            refused = refused_in_server_text(sql, self.dialect or "other",
                                             getattr(conn, "quoting", None), with_params)
        if refused is not None:
            raise refusal(refused)

    def reset(self, conn: Any) -> bool:
        if self.dialect != "postgresql":
            return False  # a fresh session for the next statement (see the module text)
        cursor = conn.cursor()
        try:
            try:
                cursor.execute("DISCARD ALL")
            except self.pyodbc.Error:  # it cannot run inside the transaction a job left open
                cursor.execute("ROLLBACK")
                cursor.execute("DISCARD ALL")
        finally:
            cursor.close()
        return True

    def cancel(self, call: Call) -> None:
        if call.cursor is not None:
            call.cursor.cancel()

    def cancel_on_server(self, call: Call, end_session: bool) -> None:
        session = getattr(call.conn, "session", None)
        if session is None or self.dialect not in ("postgresql", "mariadb"):
            return
        if self.dialect == "postgresql":
            verb = "pg_terminate_backend" if end_session else "pg_cancel_backend"
            sql = f"SELECT pg_catalog.{verb}({int(session)})"  # never a job's own function
        else:
            sql = f"KILL {'CONNECTION' if end_session else 'QUERY'} {int(session)}"
        other = self.pyodbc.connect(self.conn_str, autocommit=True, timeout=CANCEL_LOGIN_S)
        try:
            cursor = other.cursor()
            cursor.execute(sql)
            if cursor.description is not None:
                cursor.fetchall()
        finally:
            other.close()

    def failure(self, exc: Exception, conn: Any = None) -> JobFailed | None:
        if not isinstance(exc, self.pyodbc.Error):
            return None
        state = str(exc.args[0]) if len(exc.args) > 1 else None
        message = str(exc.args[-1]) if exc.args else type(exc).__name__
        return JobFailed(message, sqlstate=state)

    def broken(self, exc: Exception) -> bool:
        state = str(exc.args[0]) if len(exc.args) > 1 else ""
        return state.startswith(("08", "HYT")) or isinstance(exc, self.pyodbc.InterfaceError)
