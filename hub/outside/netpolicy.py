"""Which URLs a job's ``http()`` call may reach, decided before any connection.

:func:`check_url` parses a URL the way a browser or curl would (numeric hosts in
every spelling are normalised), resolves the host name ONCE through a
:data:`Resolver`, and refuses unless every address is public. The one checked
address comes back in :class:`Target`; the client connects to it and nothing
else, so a DNS answer that changes later (rebinding) cannot redirect the call.

Host names are read as a browser reads them: a name with non-ASCII characters or an
``xn--`` label is mapped by UTS #46 (non-transitional, so ``faß.de`` is
``xn--fa-hia.de``, not ``fass.de``) and encoded by IDNA 2008, and the allow/deny lists
are encoded the same way, so they match the host the request really goes to.

Refusals are :class:`~shared.errors.JobFailed` with a message starting
``http():`` that names the address class. Credentials in a URL are allowed but
never appear in a message: use :func:`display_url` for anything shown or logged.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

import idna

from shared.errors import JobFailed
from shared.text import clean_text

__all__ = [
    "NetPolicy",
    "Resolver",
    "Target",
    "browser_host",
    "check_url",
    "display_url",
    "system_resolver",
]

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Net = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]

DEFAULT_PORTS = {"http": 80, "https": 443}

_NAME_RE = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
_NUMERIC_PART_RE = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_BAD_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\]")


def _nets(*cidrs: str) -> tuple[Net, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


# Checked in order: the first match names the class in the refusal.
_V4_RULES = (
    (_nets("0.0.0.0/8"), "an unspecified ('this network') address"),
    (_nets("127.0.0.0/8"), "a loopback address"),
    (_nets("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"), "a private address"),
    (_nets("169.254.169.254/32"), "the cloud metadata address (link-local)"),
    (_nets("169.254.0.0/16"), "a link-local address"),
    (_nets("100.64.0.0/10"), "a carrier-grade NAT (shared) address"),
    (_nets("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"), "a documentation address"),
    (_nets("192.0.0.0/24"), "an IETF protocol address"),
    (_nets("198.18.0.0/15"), "a benchmarking address"),
    (_nets("192.88.99.0/24"), "a reserved (6to4 relay) address"),
    (_nets("224.0.0.0/4"), "a multicast address"),
    (_nets("255.255.255.255/32"), "the broadcast address"),
    (_nets("240.0.0.0/4"), "a reserved address"),
)

_V6_RULES = (
    (_nets("::/128"), "an unspecified address"),
    (_nets("::1/128"), "a loopback address"),
    (_nets("64:ff9b:1::/48"), "a local-use NAT64 address"),
    (_nets("2001::/32"), "a Teredo tunnel address"),
    (_nets("2001:db8::/32", "3fff::/20"), "a documentation address"),
    (_nets("fc00::/7"), "a unique-local address"),
    (_nets("fe80::/10"), "a link-local address"),
    (_nets("fec0::/10"), "a site-local address"),
    (_nets("ff00::/8"), "a multicast address"),
    (_nets("100::/64"), "a discard-only address"),
    (_nets("2001::/23"), "an IETF protocol address"),
)

# IPv6 ranges that carry an IPv4 address in their last 32 bits.
_V6_EMBEDDING = (
    (ipaddress.ip_network("::ffff:0:0/96"), "an IPv4-mapped form of"),
    (ipaddress.ip_network("::ffff:0:0:0/96"), "an IPv4-translated form of"),
    (ipaddress.ip_network("64:ff9b::/96"), "a NAT64 form of"),
    (ipaddress.ip_network("::/96"), "an IPv4-compatible form of"),
)


@dataclass(frozen=True)
class NetPolicy:
    """What the hub lets jobs reach. Empty ``allow_hosts`` means any public host."""

    allow_hosts: frozenset[str] = frozenset()
    deny: tuple[str, ...] = ()
    test_loopback_port: int | None = None
    own_servers: tuple[str, ...] = ()  # the hub's database servers: names and addresses

    @classmethod
    def from_settings(cls, allow: str, deny: str, test_port: str) -> NetPolicy:
        """Build from comma lists (settings strings); bad entries raise ValueError."""
        allow_hosts = frozenset(_list_entry(entry) for entry in _split_list(allow))
        deny_entries = tuple(_list_entry(entry) for entry in _split_list(deny))
        for entry in deny_entries:
            if "/" in entry or _parse_ip_literal(entry) is not None:
                ipaddress.ip_network(entry, strict=False)  # raises ValueError if malformed
        port: int | None = None
        if test_port.strip():
            port = int(test_port.strip())
            if not 0 < port < 65536:
                raise ValueError(f"test loopback port out of range: {port}")
        return cls(allow_hosts=allow_hosts, deny=deny_entries, test_loopback_port=port)


@dataclass(frozen=True)
class Target:
    """A checked URL: connect to ``address``; ``host`` goes in Host and TLS SNI."""

    scheme: str
    host: str
    port: int
    path_and_query: str
    address: str

    @property
    def host_is_ip(self) -> bool:
        return _parse_ip_literal(self.host) is not None


def _split_list(text: str) -> list[str]:
    return [item.strip().lower() for item in text.split(",") if item.strip()]


def _refuse(reason: str) -> JobFailed:
    return JobFailed(f"http(): {reason}")


def browser_host(name: str) -> str:
    """``name`` as a browser puts it on the wire: lower-case ASCII as it is, anything
    else (non-ASCII, or an ``xn--`` label to validate) through UTS #46 and IDNA 2008.
    Raises ``idna.IDNAError`` (a ``UnicodeError``) for a name IDNA refuses."""
    lowered = name.lower()
    if name.isascii() and not any(label.startswith("xn--") for label in lowered.split(".")):
        return lowered
    return idna.encode(name, uts46=True, transitional=False).decode("ascii")


def _list_entry(entry: str) -> str:
    """An allow/deny entry in the form hosts are compared in; ``*.`` stays a wildcard.
    A name IDNA refuses raises ValueError, like any other malformed entry."""
    wildcard = "*." if entry.startswith("*.") else ""
    name = entry[len(wildcard):]
    if "/" in name or _parse_ip_literal(name) is not None:
        return entry
    try:
        return wildcard + browser_host(name)
    except UnicodeError as exc:
        raise ValueError(f"'{entry}' is not a valid host name ({exc})") from None


def display_url(url: str) -> str:
    """The URL with any ``user:password@`` removed, safe to show or log."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return re.sub(r"//[^/?#]*@", "//", url)


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address (IPv4 and IPv6) the system resolver gives for ``host``."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM)
    found: list[str] = []
    for *_rest, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in found:
            found.append(address)
    return found


def _parse_ip_literal(text: str) -> IP | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def _parse_ipv4_number(part: str) -> int:
    if part.startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)  # ValueError for 8/9 digits: not a valid host
    return int(part)


def _parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """WHATWG/inet_aton IPv4: ``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``.

    Returns None when the host is a name; raises JobFailed when it looks numeric
    but is not a valid address (a browser refuses those too)."""
    parts = host.split(".")
    if not parts[-1] or not _NUMERIC_PART_RE.match(parts[-1]):
        return None
    if len(parts) > 4 or not all(_NUMERIC_PART_RE.match(p) for p in parts):
        raise _refuse(f"'{host}' is not a valid host")
    try:
        numbers = [_parse_ipv4_number(p) for p in parts]
    except ValueError:
        raise _refuse(f"'{host}' is not a valid numeric host") from None
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (4 - len(numbers)):
        raise _refuse(f"'{host}' is not a valid numeric host")
    value = last
    for index, number in enumerate(numbers):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _normalise_host(raw: str, bracketed: bool) -> tuple[str, IP | None]:
    """(host name or IP text, parsed IP or None) the way a browser reads the host."""
    if bracketed:
        if "%" in raw:
            raise _refuse("IPv6 zone identifiers are not allowed")
        try:
            ip6 = ipaddress.IPv6Address(raw)
        except ValueError:
            raise _refuse(f"'[{raw}]' is not a valid IPv6 host") from None
        return str(ip6), ip6
    try:
        host = browser_host(raw)
    except UnicodeError as exc:  # idna's errors, and a codec's on text it cannot take
        raise _refuse(f"'{clean_text(raw)}' is not a valid international domain name "
                      f"({clean_text(str(exc))})") from None
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise _refuse("the URL has no host")
    ip4 = _parse_ipv4(host)
    if ip4 is not None:
        return str(ip4), ip4
    if not _NAME_RE.fullmatch(host) or len(host) > 253:
        raise _refuse(f"'{host}' is not a valid host name")
    return host, None


def _class_from(rules: tuple[tuple[tuple[Net, ...], str], ...], ip: IP) -> str | None:
    for networks, label in rules:
        if any(ip in net for net in networks):
            return label
    return None


def _v4_class(ip: ipaddress.IPv4Address) -> str | None:
    label = _class_from(_V4_RULES, ip)
    if label is None and not ip.is_global:
        label = "a non-public address"
    return label


def _embedded_v4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    for network, form in _V6_EMBEDDING:
        if ip in network:
            return ipaddress.IPv4Address(ip.packed[12:]), form
    if ip.sixtofour is not None:
        return ip.sixtofour, "a 6to4 form of"
    return None


def address_class(ip: IP) -> str | None:
    """Why ``ip`` is not public ("a loopback address", ...), or None if it is public."""
    if isinstance(ip, ipaddress.IPv4Address):
        return _v4_class(ip)
    label = _class_from(_V6_RULES, ip)
    if label is not None:
        return label
    embedded = _embedded_v4(ip)
    if embedded is not None:
        v4, form = embedded
        inner = _v4_class(v4)
        if inner is not None:
            return f"{form} {inner}"
        if form == "an IPv4-compatible form of":
            return "a deprecated IPv4-compatible address"
        return None
    if not ip.is_global:
        return "a non-public address"
    return None


def _host_matches(host: str, pattern: str) -> bool:
    pattern = pattern.lower().rstrip(".")
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return host == pattern


def _denied_by(ip: IP, deny: tuple[str, ...]) -> str | None:
    candidates: list[IP] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_v4(ip)
        if embedded is not None:
            candidates.append(embedded[0])
    for entry in deny:
        if "/" not in entry and _parse_ip_literal(entry) is None:
            continue
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            continue
        if any(c.version == network.version and c in network for c in candidates):
            return entry
    return None


def _check_host_lists(host: str, policy: NetPolicy) -> None:
    if policy.allow_hosts and not any(_host_matches(host, a) for a in policy.allow_hosts):
        raise _refuse(f"host '{host}' is not in the hub's list of allowed hosts")
    for entry in policy.deny:
        if "/" not in entry and _parse_ip_literal(entry) is None and _host_matches(host, entry):
            raise _refuse(f"host '{host}' is denied by the hub's network policy")
    if any(host == server.lower().rstrip(".") for server in policy.own_servers):
        raise _refuse(f"host '{host}' is one of the hub's own database servers")


def _check_address(ip: IP, port: int, policy: NetPolicy, shown: str) -> None:
    """Refuse unless ``ip`` is public (``shown`` prefixes the message)."""
    entry = _denied_by(ip, policy.deny)
    if entry is not None:
        raise _refuse(f"{shown} is denied by the hub's network policy ({entry})")
    if ip.is_loopback and port == policy.test_loopback_port:
        return  # the one test port; the hub warns loudly when this is set
    if _denied_by(ip, policy.own_servers) is not None:
        raise _refuse(f"{shown} is one of the hub's own database servers")
    label = address_class(ip)
    if label is not None:
        raise _refuse(f"{shown} is {label}; only public addresses are allowed")


def _split(url: str) -> tuple[SplitResult, str, int]:
    if not isinstance(url, str) or not url:
        raise _refuse("the URL must be a non-empty string")
    if _BAD_URL_CHARS.search(url):
        raise _refuse("the URL contains spaces, control characters or backslashes")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise _refuse(f"'{display_url(url)}' is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise _refuse(f"only http and https URLs are allowed, not '{scheme or '(none)'}'")
    if port == 0:
        raise _refuse("port 0 is not allowed")
    return parts, scheme, port if port is not None else DEFAULT_PORTS[scheme]


async def _resolve_once(host: str, port: int, resolver: Resolver) -> list[IP]:
    try:
        answers = await resolver(host, port)
    except (OSError, UnicodeError):
        raise _refuse(f"cannot resolve host '{host}'") from None
    addresses: list[IP] = []
    for answer in answers:
        ip = _parse_ip_literal(str(answer).split("%")[0])
        if ip is None:
            raise _refuse(f"host '{host}' resolved to an invalid address")
        addresses.append(ip)
    if not addresses:
        raise _refuse(f"cannot resolve host '{host}'")
    return addresses


async def check_url(url: str, policy: NetPolicy, resolver: Resolver) -> Target:
    """Check ``url`` against ``policy``; resolve once; return where to connect."""
    parts, scheme, port = _split(url)
    hostport = parts.netloc.rpartition("@")[2]
    raw_host = parts.hostname or ""
    if not raw_host:
        raise _refuse("the URL has no host")
    host, literal = _normalise_host(raw_host, hostport.startswith("["))
    _check_host_lists(host, policy)
    if literal is not None:
        addresses = [literal]
        _check_address(literal, port, policy, raw_host if raw_host == host else
                       f"{raw_host} (= {host})")
    else:
        addresses = await _resolve_once(host, port, resolver)
        for ip in addresses:
            _check_address(ip, port, policy, f"{host} resolves to {ip}, which")
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    return Target(scheme, host, port, path + query, str(addresses[0]))
