"""Defences against abuse: who a request comes from, request rate limits, sign-in throttling.

Pure standard library; the API layer wires these in. Every structure here is bounded in
memory (idle keys are forgotten, and past ``max_keys`` the least recently active key is
evicted), and every structure takes an injectable ``clock`` so tests never sleep.
All classes are safe to share between threads.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from shared.errors import BadRequest, TooManyRequests

__all__ = [
    "Network",
    "RateLimiter",
    "SignInThrottle",
    "client_address",
    "equal_secrets",
    "parse_trusted_proxies",
]

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
_Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

DEFAULT_MAX_KEYS = 100_000
RATE_WINDOW_SECONDS = 60.0


def _retry_after(seconds: float) -> int:
    """Whole seconds until something frees, never below 1 (a Retry-After of 0 invites a loop)."""
    return max(1, math.ceil(seconds))


# --- client address --------------------------------------------------------------------------


def parse_trusted_proxies(text: str) -> list[Network]:
    """Networks from comma/space separated IPs or CIDRs, e.g. ``"127.0.0.1, 10.0.0.0/8, ::1"``.

    A bare address is a one-address network; host bits in a CIDR are ignored
    (``10.1.2.3/8`` means ``10.0.0.0/8``). An invalid entry raises ``BadRequest`` naming it.
    """
    networks: list[Network] = []
    for entry in re.split(r"[\s,]+", text.strip()):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise BadRequest(f"Invalid trusted proxy entry: {entry!r}") from None
    return networks


def _parse_address(text: str) -> _Address | None:
    """An IP address, IPv4-mapped IPv6 folded to IPv4; ``None`` when malformed."""
    try:
        addr = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def _is_trusted(addr: _Address, trusted: Sequence[Network]) -> bool:
    return any(addr in net for net in trusted)


def client_address(peer: str | None, forwarded_for: str | None, trusted: Sequence[Network]) -> str:
    """The address a request is attributed to.

    The socket ``peer``, unless the peer is a trusted proxy: then ``X-Forwarded-For`` is
    walked from the right, skipping trusted addresses, and the first untrusted one wins.
    A malformed entry ends the walk at the last good address (the peer if it is the first);
    a chain that is trusted all the way yields its leftmost address. The header of an
    untrusted peer is ignored entirely, since anyone can send one. Addresses come back in
    canonical form; a missing peer is ``"unknown"``, a peer that is not an IP (e.g. a test
    client's name) is returned as is.
    """
    if not peer:
        return "unknown"
    peer_addr = _parse_address(peer)
    if peer_addr is None:
        return peer
    if not forwarded_for or not _is_trusted(peer_addr, trusted):
        return str(peer_addr)
    last_good = peer_addr
    for entry in reversed(forwarded_for.split(",")):
        addr = _parse_address(entry)
        if addr is None:
            break
        last_good = addr
        if not _is_trusted(addr, trusted):
            break
    return str(last_good)


# --- request rate ----------------------------------------------------------------------------


class RateLimiter:
    """At most ``per_minute`` requests per key in any sliding 60 s window; ``<= 0`` disables.

    Refused requests are not recorded, so a client that keeps hammering is let back in as
    soon as its oldest accepted request leaves the window.
    """

    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_keys: int = DEFAULT_MAX_KEYS,
    ) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._max_keys = max(1, max_keys)
        # Ordered by most recent accepted hit, oldest first: idle keys sit at the front.
        self._hits: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many keys are tracked (for tests and metrics)."""
        return len(self._hits)

    def hit(self, key: str) -> None:
        """Record one request for ``key``, or raise ``TooManyRequests`` with ``retry_after``."""
        if self.per_minute <= 0:
            return
        with self._lock:
            now = self._clock()
            horizon = now - RATE_WINDOW_SECONDS
            self._forget_idle(horizon)
            hits = self._hits.get(key)
            if hits is None:
                hits = self._new_key(key)
            while hits and hits[0] <= horizon:
                hits.popleft()
            if len(hits) >= self.per_minute:
                wait = _retry_after(hits[0] - horizon)
                raise TooManyRequests(
                    f"Too many requests from this address; try again in {wait} s",
                    retry_after=wait,
                )
            hits.append(now)
            self._hits.move_to_end(key)

    def _new_key(self, key: str) -> deque[float]:
        while len(self._hits) >= self._max_keys:
            self._hits.popitem(last=False)
        hits: deque[float] = deque(maxlen=self.per_minute)
        self._hits[key] = hits
        return hits

    def _forget_idle(self, horizon: float) -> None:
        # The front is the least recently active key: amortised O(1) per hit.
        while self._hits:
            hits = next(iter(self._hits.values()))
            if hits and hits[-1] > horizon:
                return
            self._hits.popitem(last=False)


# --- sign-in throttling ----------------------------------------------------------------------


@dataclass
class _Failures:
    times: deque[float]
    locked_until: float = -math.inf


class SignInThrottle:
    """Slows, then locks, password guessing per account name and per client address.

    Within ``window_seconds``, the first ``free_failures`` failures cost nothing; after
    that each check waits 0.5 s, doubling per further failure up to 4 s. Once either the
    name or the address reaches ``lock_after`` failures it is locked for ``lock_seconds``
    from its last failure (``lock_after <= 0`` never locks). A success clears the name
    only: clearing the address would let one valid account reset an attacker's count.
    Names are compared case-insensitively.
    """

    MAX_DELAY = 4.0
    FIRST_DELAY = 0.5

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        free_failures: int = 3,
        lock_after: int = 10,
        lock_seconds: float = 900,
        window_seconds: float = 900,
        *,
        max_keys: int = DEFAULT_MAX_KEYS,
    ) -> None:
        self._clock = clock
        self.free_failures = free_failures
        self.lock_after = lock_after
        self.lock_seconds = lock_seconds
        self.window_seconds = window_seconds
        self._max_keys = max(1, max_keys)
        # Enough history to reach the lock and the delay cap; more would change nothing.
        self._history = max(lock_after, free_failures + 4, 1)
        # Ordered by most recent failure, oldest first.
        self._names: OrderedDict[str, _Failures] = OrderedDict()
        self._addresses: OrderedDict[str, _Failures] = OrderedDict()
        self._lock = threading.Lock()

    def tracked(self) -> tuple[int, int]:
        """How many (names, addresses) are tracked (for tests and metrics)."""
        return len(self._names), len(self._addresses)

    def check(self, name: str, address: str) -> float:
        """Seconds to wait before checking the password, or ``TooManyRequests`` if locked."""
        with self._lock:
            now = self._clock()
            counts: list[int] = []
            for table, key in ((self._names, name.casefold()), (self._addresses, address)):
                self._forget_idle(table, now)
                record = table.get(key)
                if record is None:
                    counts.append(0)
                    continue
                if now < record.locked_until:
                    wait = _retry_after(record.locked_until - now)
                    raise TooManyRequests(
                        f"Too many failed sign-ins; try again in {wait} s", retry_after=wait
                    )
                counts.append(self._prune(record, now))
            return self._delay(max(counts))

    def failed(self, name: str, address: str) -> None:
        """Record one failed sign-in against both the name and the address."""
        with self._lock:
            now = self._clock()
            for table, key in ((self._names, name.casefold()), (self._addresses, address)):
                self._forget_idle(table, now)
                record = table.get(key)
                if record is None:
                    record = self._new_record(table, key)
                self._prune(record, now)
                record.times.append(now)
                table.move_to_end(key)
                if 0 < self.lock_after <= len(record.times):
                    record.locked_until = now + self.lock_seconds

    def succeeded(self, name: str, address: str) -> None:
        """A correct password: forget the name's failures (the address's stay)."""
        del address  # deliberately kept: see the class docstring
        with self._lock:
            self._names.pop(name.casefold(), None)

    def _delay(self, failures: int) -> float:
        extra = failures - self.free_failures
        if extra < 0:
            return 0.0
        return min(self.MAX_DELAY, self.FIRST_DELAY * 2.0 ** min(extra, 16))

    def _prune(self, record: _Failures, now: float) -> int:
        """Drop failures older than the window; how many remain."""
        horizon = now - self.window_seconds
        while record.times and record.times[0] <= horizon:
            record.times.popleft()
        return len(record.times)

    def _new_record(self, table: OrderedDict[str, _Failures], key: str) -> _Failures:
        while len(table) >= self._max_keys:
            table.popitem(last=False)
        record = _Failures(deque(maxlen=self._history))
        table[key] = record
        return record

    def _forget_idle(self, table: OrderedDict[str, _Failures], now: float) -> None:
        # Front = oldest last failure; a record is idle once out of the window and unlocked.
        while table:
            record = next(iter(table.values()))
            idle = not record.times or record.times[-1] <= now - self.window_seconds
            if not idle or now < record.locked_until:
                return
            table.popitem(last=False)


def equal_secrets(a: str, b: str) -> bool:
    """Constant-time comparison of two secrets (as UTF-8 bytes)."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
