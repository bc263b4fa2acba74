"""What every database connection in the hub shares, below both of its users.

The jobs' ``db.exec`` pool (:mod:`hub.outside.database`) and the hub's own tables
(:mod:`hub.store.hubdb`) take the same two URL forms and open ODBC connections the
same way, so the parsing and the per-connection fixes live here, once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from shared.errors import BadRequest


@dataclass(frozen=True)
class DatabaseUrl:
    """A parsed database URL: ``kind`` says the driver, ``target`` what it opens."""

    kind: Literal["sqlite", "odbc"]
    target: str  # the SQLite file path, or the ODBC connection string

    def __str__(self) -> str:  # never shows an ODBC connection string (passwords)
        return f"sqlite:///{self.target}" if self.kind == "sqlite" else "odbc:<connection string>"


def parse_database_url(url: str, setting: str) -> DatabaseUrl:
    """``sqlite:///path`` or ``odbc:<connection string>``; anything else is a BadRequest
    naming ``setting``, the setting the URL came from."""
    text = url.strip()
    if text.startswith("sqlite:///"):
        path = text[len("sqlite:///"):]
        if not path or path == ":memory:":
            raise BadRequest(f"{setting}: a sqlite URL needs a file path, e.g. sqlite:///webjobs.db")
        return DatabaseUrl("sqlite", path)
    if text.lower().startswith("odbc:"):
        conn_str = text[len("odbc:"):].strip()
        if not conn_str:
            raise BadRequest(f"{setting}: an odbc URL needs a connection string after 'odbc:'")
        return DatabaseUrl("odbc", conn_str)
    raise BadRequest(
        f"{setting} must be sqlite:///<path> or odbc:<ODBC connection string>, "
        f"not {text.split(':', 1)[0]!r}"
    )


def utf8_parameters(pyodbc: Any, conn: Any) -> None:
    """MariaDB's ODBC driver garbles text parameters of 254 characters and more sent
    as UTF-16 (pyodbc's default): its connections send UTF-8 instead."""
    dbms = str(conn.getinfo(pyodbc.SQL_DBMS_NAME)).lower()
    if "maria" in dbms or "mysql" in dbms:
        conn.setencoding(encoding="utf-8")
