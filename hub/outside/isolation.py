"""Whether the business database (``WEBJOB_DB``) reaches the hub's own tables.

The hub keeps its users, password hashes, sessions and tokens, schedules and secrets
in ``WEBHUB_DB`` (also the jobs with ``WEBJOB_STORE=db`` and the run history with
``WEBJOB_HISTORY_STORE=sql``), and the embedded run history in
``WEBHUB_HOME/history.db``. A job's ``db.exec`` runs whatever SQL the job (or a public
job's caller) gives it, so when the business database *is* one of those, every job
reads and writes them. That is a set-up mistake only the configuration shows, so the
hub says so once at start (:func:`warn_if_hub_tables_reachable`) and serves on.

Two URLs are the same place when:

* both are SQLite files (``sqlite:///`` or the SQLite3 ODBC driver's ``Database=``)
  and the paths are one file (resolved, or the same inode: links count), or the
  business file is ``hub.db`` or ``history.db`` in ``WEBHUB_HOME``;
* both name the same server (engine, host — every loopback spelling is one host —
  and port) and either the same database, or — on MariaDB/MySQL and SQL Server, where
  one login reaches every database it is granted — the same user.

Different logins on one server, or PostgreSQL databases apart, do not reach the hub's
tables by themselves, but only the server's grants and settings keep them apart (see
the README on the business user): the hub says so at start too, naming what it cannot
rule out (:func:`shared_server`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from hub.dburl import parse_database_url
from hub.outside.own_servers import odbc_fields, odbc_host
from hub.settings import Settings

__all__ = ["hub_tables_reachable", "shared_server", "warn_if_hub_tables_reachable"]

log = logging.getLogger("webhub.outside")

HUB_FILE_NAMES = ("hub.db", "history.db")  # hub.store.identity and hub.history.local
_DEFAULT_PORTS = {"postgresql": "5432", "mariadb": "3306", "sqlserver": "1433"}
_HOST_KEYS = ("server", "host", "address", "servername", "hostname")
_DATABASE_KEYS = ("database", "db", "dbname", "initial catalog")
_USER_KEYS = ("uid", "user", "username", "user id")


@dataclass(frozen=True)
class _Server:
    engine: str
    host: str
    port: str
    database: str
    user: str


def _engine(driver: str, dsn: str) -> str:
    lowered = driver.lower()
    for needle, engine in (("postgres", "postgresql"), ("maria", "mariadb"),
                           ("mysql", "mariadb"), ("sql server", "sqlserver"),
                           ("tds", "sqlserver"), ("sqlite", "sqlite")):
        if needle in lowered:
            return engine
    return f"dsn:{dsn.lower()}" if dsn else lowered


def _first(fields: dict[str, str], keys: tuple[str, ...]) -> str:
    return next((fields[k] for k in keys if fields.get(k)), "")


def _host_and_port(value: str, port: str, engine: str) -> tuple[str, str]:
    host = odbc_host(value).lower() or "localhost"
    after_comma = value.split(",", 1)[1].strip() if "," in value else ""
    port = port or after_comma or _DEFAULT_PORTS.get(engine, "")
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return ("loopback" if loopback else host.rstrip(".")), port


def _place(url: str) -> Path | _Server | None:
    """A SQLite file, a server's database, or None for a URL that cannot be read."""
    try:
        parsed = parse_database_url(url, "WEBJOB_DB", native_postgresql=True)
    except Exception:  # the hub reports bad URLs where it opens them
        return None
    if parsed.kind == "sqlite":
        return Path(parsed.target)
    if parsed.kind == "postgresql":  # the hub's own psycopg URL
        parts = urlsplit(parsed.target)
        user = unquote(parts.username or "").lower()
        host, port = _host_and_port(parts.hostname or "", str(parts.port or ""), "postgresql")
        return _Server("postgresql", host, port, unquote(parts.path[1:]).lower() or user, user)
    fields = dict(odbc_fields(parsed.target))
    engine = _engine(fields.get("driver", ""), fields.get("dsn", ""))
    database = _first(fields, _DATABASE_KEYS)
    if engine == "sqlite":
        return Path(database) if database else None
    user = _first(fields, _USER_KEYS).lower()
    host, port = _host_and_port(_first(fields, _HOST_KEYS), fields.get("port", ""), engine)
    if engine == "postgresql" and not database:
        database = user  # libpq's default database is the user's name
    return _Server(engine, host, port, database.lower(), user)


def _same_file(one: Path, other: Path) -> bool:
    if one.resolve() == other.resolve():
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist (yet): a different file
        return False


def _same_server_tables(business: _Server, hub: _Server) -> str | None:
    if (business.engine, business.host, business.port) != (hub.engine, hub.host, hub.port):
        return None
    if business.database == hub.database:
        return "the same database as WEBHUB_DB"
    if business.engine in ("mariadb", "sqlserver") and business.user == hub.user:
        return "the same server and login as WEBHUB_DB"
    return None


def _what_hub_db_holds(settings: Settings) -> str:
    held = ["users, sessions and tokens", "schedules", "secrets"]
    if settings.job_store == "db":
        held.append("jobs")
    if settings.history_store == "sql":
        held.append("run history")
    return ", ".join(held)


def hub_tables_reachable(settings: Settings) -> str | None:
    """Why ``WEBJOB_DB`` reaches the hub's own tables, or None when it does not."""
    business = _place(settings.job_db)
    hub = _place(settings.hub_db)
    if isinstance(business, Path):
        hub_files = [settings.home / name for name in HUB_FILE_NAMES]
        if isinstance(hub, Path):
            hub_files.insert(0, hub)
        for hub_file in hub_files:
            if _same_file(business, hub_file):
                holds = ("run history" if hub_file.name == "history.db" and hub_file != hub
                         else _what_hub_db_holds(settings))
                return f"it is the hub's own file {hub_file.name} ({holds})"
        return None
    if isinstance(business, _Server) and isinstance(hub, _Server):
        why = _same_server_tables(business, hub)
        if why is not None:
            return f"it is {why} ({_what_hub_db_holds(settings)})"
    return None


def shared_server(settings: Settings) -> str | None:
    """The server ``WEBJOB_DB`` shares with ``WEBHUB_DB`` (another database or login on
    it), or None when they are on different servers or one is a file."""
    business, hub = _place(settings.job_db), _place(settings.hub_db)
    if not (isinstance(business, _Server) and isinstance(hub, _Server)):
        return None
    if (business.engine, business.host, business.port) != (hub.engine, hub.host, hub.port):
        return None
    return f"{business.engine} at {business.host}:{business.port}"


_SHARED_SERVER_RISKS = (
    "db.exec refuses what a statement shows (LOAD … LOCAL and the server's file "
    "functions, login and role changes, SQL built at run time), but it cannot rule out: "
    "grants the business login holds on the hub's database (PostgreSQL gives PUBLIC "
    "CONNECT and TEMP on every new database); the server's file rights (FILE, "
    "pg_read_server_files) and its local_infile for other clients; a job's load — long "
    "queries, locks, connections — slowing the hub's own work; procedures and functions "
    "already on the server that run SQL built at run time or as their definer. Keep the "
    "hub's tables on another server, or check those grants and settings")


def warn_if_hub_tables_reachable(settings: Settings) -> bool:
    """One WARNING line when jobs' SQL could reach the hub's own tables, or shares their
    server; True if so."""
    why = hub_tables_reachable(settings)
    if why is None:
        where = shared_server(settings)
        if where is None:
            return False
        log.warning("WEBJOB_DB shares its server with WEBHUB_DB (%s), in another database "
                    "or login. %s.", where, _SHARED_SERVER_RISKS)
        return True
    log.warning("WEBJOB_DB reaches the hub's own tables: %s. Every job's db.exec could "
                "read and change them; give WEBJOB_DB a database and a user that see only "
                "the business tables.", why)
    return True
