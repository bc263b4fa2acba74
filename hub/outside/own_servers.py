"""The hub's own database servers, which a job's ``http()`` may never call.

The hosts are read from the ODBC connection strings of ``WEBHUB_DB`` and
``WEBJOB_DB`` (``SERVER``/``HOST``/``ADDRESS``/``SERVERNAME`` keys, in their
``host,port``, ``tcp:host`` and ``host\\instance`` forms) and from the MongoDB URL
when history lives there; each is denied by name and by the addresses it resolves
to at start (a name that does not resolve is denied by name only).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["odbc_fields", "odbc_host", "own_server_entries", "own_server_hosts"]

_KEYS = ("server", "host", "address", "servername", "hostname")
_PAIR = re.compile(r"\s*([^=;]+?)\s*=\s*(\{[^}]*\}|[^;]*)\s*(?:;|$)")


def odbc_fields(conn_str: str) -> list[tuple[str, str]]:
    """An ODBC connection string's ``key=value`` pairs: keys lower case, values without
    their braces, in the order given."""
    return [(key.strip().lower(), value.strip().strip("{}").strip())
            for key, value in _PAIR.findall(conn_str)]


def odbc_host(value: str) -> str:
    """The host of a ``SERVER``-like value: ``tcp:host,port``, ``host\\instance`` and
    ``[v6 address]`` forms unwrapped."""
    text = re.sub(r"^(tcp|np|lpc):", "", value, flags=re.IGNORECASE)
    text = re.split(r"[,\\]", text, maxsplit=1)[0].strip()
    if text.startswith("[") and "]" in text:
        text = text[1:text.index("]")]
    return text


def _odbc_hosts(conn_str: str) -> list[str]:
    return [host for key, value in odbc_fields(conn_str)
            if key in _KEYS and (host := odbc_host(value))]


def _mongo_hosts(url: str) -> list[str]:
    rest = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
    hosts = []
    for part in rest.split(","):
        host = urlsplit(f"//{part}").hostname
        if host:
            hosts.append(host)
    return hosts


def own_server_hosts(database_urls: Iterable[str], mongo_url: str | None) -> list[str]:
    """Host names and literal addresses of every server the hub keeps data on."""
    hosts: list[str] = []
    for url in database_urls:
        if url.strip().lower().startswith("odbc:"):
            hosts.extend(_odbc_hosts(url.strip()[5:]))
    if mongo_url:
        hosts.extend(_mongo_hosts(mongo_url))
    return sorted(set(hosts))


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def own_server_entries(hosts: Iterable[str]) -> list[str]:
    """Deny-list entries: each host, and every address it resolves to now."""
    entries: list[str] = []
    for host in hosts:
        entries.append(host)
        if _is_address(host):
            continue
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            continue
        entries.extend(str(info[4][0]) for info in infos)
    return sorted(set(entries))
