"""What every database connection in the hub shares, below both of its users.

The jobs' ``db.exec`` pool (:mod:`hub.outside.database`) and the hub's own tables
(:mod:`hub.store.hubdb`) take the same URL forms and open ODBC connections the same
way, so the parsing and the per-connection fixes live here, once:

* ``sqlite:///path`` — a SQLite file (Python's :mod:`sqlite3`);
* ``odbc:<connection string>`` — any ODBC driver (:mod:`pyodbc`);
* ``postgresql://user:password@host:port/database?option=value`` (or ``postgres://``)
  — PostgreSQL through psycopg 3, for the hub's own tables only
  (``native_postgresql=True``); the jobs' ``db.exec`` keeps ODBC.

A :class:`DatabaseUrl` printed (logs, ``/store``, error messages) never shows a
password: an ODBC connection string is not shown at all, a PostgreSQL URL without
its password and options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import SplitResult, unquote, urlsplit

from shared.errors import BadRequest

POSTGRESQL_SCHEMES = ("postgresql", "postgres")


@dataclass(frozen=True)
class DatabaseUrl:
    """A parsed database URL: ``kind`` says the driver, ``target`` what it opens."""

    kind: Literal["sqlite", "odbc", "postgresql"]
    target: str  # the SQLite file path, the ODBC connection string, or the libpq URL

    @property
    def is_server(self) -> bool:
        """A database server (reached over a connection that can be slow or down), not
        the embedded SQLite file."""
        return self.kind != "sqlite"

    def __str__(self) -> str:  # never shows a password
        if self.kind == "sqlite":
            return f"sqlite:///{self.target}"
        if self.kind == "postgresql":
            return postgresql_display(self.target)
        return "odbc:<connection string>"


def postgresql_display(url: str) -> str:
    """``postgresql://user@host:port/database`` out of a libpq URL: no password, no
    options (a ``password=`` may hide among them)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "postgresql://<unreadable URL>"
    user = f"{unquote(parts.username)}@" if parts.username else ""
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    return f"postgresql://{user}{host}{port}{parts.path}"


def _parse_postgresql(text: str, setting: str) -> DatabaseUrl:
    scheme, rest = text.split(":", 1)
    url = f"postgresql:{rest}"
    try:
        parts: SplitResult = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise BadRequest(f"{setting}: the {scheme}:// URL cannot be read: "
                         f"{postgresql_display(url)}") from None
    if not rest.startswith("//") or parts.fragment:
        raise BadRequest(f"{setting}: a PostgreSQL URL is postgresql://user:password@host:"
                         "port/database")
    return DatabaseUrl("postgresql", url)


def parse_database_url(url: str, setting: str, *,
                       native_postgresql: bool = False) -> DatabaseUrl:
    """``sqlite:///path`` or ``odbc:<connection string>`` (and, with
    ``native_postgresql``, ``postgresql://`` / ``postgres://``); anything else is a
    BadRequest naming ``setting``, the setting the URL came from."""
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
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    if native_postgresql and scheme in POSTGRESQL_SCHEMES:
        return _parse_postgresql(text, setting)
    forms = ("sqlite:///<path>, odbc:<ODBC connection string> or "
             "postgresql://user:password@host:port/database" if native_postgresql
             else "sqlite:///<path> or odbc:<ODBC connection string>")
    hint = ("; postgresql:// is for WEBHUB_DB (the hub's own tables), jobs reach PostgreSQL "
            "through odbc:DRIVER={PostgreSQL Unicode};..."
            if scheme in POSTGRESQL_SCHEMES and not native_postgresql else "")
    raise BadRequest(f"{setting} must be {forms}, not {text.split(':', 1)[0]!r}{hint}")


def utf8_parameters(pyodbc: Any, conn: Any) -> None:
    """MariaDB's ODBC driver garbles text parameters of 254 characters and more sent
    as UTF-16 (pyodbc's default): its connections send UTF-8 instead."""
    dbms = str(conn.getinfo(pyodbc.SQL_DBMS_NAME)).lower()
    if "maria" in dbms or "mysql" in dbms:
        conn.setencoding(encoding="utf-8")
