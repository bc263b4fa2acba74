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
    "Allowance",
    "Network",
    "RateLimiter",
    "SignInAttempt",
    "SignInThrottle",
    "client_address",
    "equal_secrets",
    "failure_delay",
    "parse_trusted_proxies",
    "rate_refusal",
    "sign_in_keys",
    "sign_in_refusal",
]

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
_Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

DEFAULT_MAX_KEYS = 100_000
RATE_WINDOW_SECONDS = 60.0


def _retry_after(seconds: float) -> int:
    """Whole seconds until something frees, never below 1 (a Retry-After of 0 invites a loop)."""
    return max(1, math.ceil(seconds))


def rate_refusal(wait: float) -> TooManyRequests:
    """The answer to a request over its rate, ``wait`` seconds before one frees."""
    seconds = _retry_after(wait)
    return TooManyRequests(f"Too many requests from this address; try again in {seconds} s",
                           retry_after=seconds)


def sign_in_refusal(wait: float) -> TooManyRequests:
    """The answer to a sign-in while a key is locked, ``wait`` seconds before it ends."""
    seconds = _retry_after(wait)
    return TooManyRequests(f"Too many failed sign-ins; try again in {seconds} s",
                           retry_after=seconds)


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
                raise rate_refusal(hits[0] - horizon)
            hits.append(now)
            self._hits.move_to_end(key)

    async def admit(self, key: str) -> None:
        """:meth:`hit`, as the routes call every limit (a cluster's shared limit,
        :mod:`hub.limiting`, awaits its store; this one never waits)."""
        self.hit(key)

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


@dataclass(frozen=True)
class Allowance:
    """Failures one key gets within the window: ``free`` cost nothing, then each check
    is slowed, and at ``lock_after`` the key is locked (``lock_after <= 0`` never locks)."""

    free: int
    lock_after: int


# One address guessing one name: the usual attacker. It is stopped by its own lock, which
# leaves the owner free to sign in from anywhere else.
PAIR_ALLOWANCE = Allowance(free=3, lock_after=10)
# One address trying many names (password spraying).
ADDRESS_ALLOWANCE = Allowance(free=10, lock_after=30)
# One name guessed from many addresses. A single address adds at most its pair's ten
# failures before its own lock refuses it, so this slows the name from 3 addresses on and
# locks it from everywhere only once 10 or more addresses have guessed.
NAME_ALLOWANCE = Allowance(free=20, lock_after=100)


@dataclass
class _Failures:
    times: deque[float]
    locked_until: float = -math.inf
    locked_by: int = 0  # the attempt that set the lock, so withdrawing it lifts the lock


@dataclass(frozen=True)
class SignInAttempt:
    """One password check, counted as a failure until it is known to have succeeded."""

    keys: tuple[str, str, str]  # (pair, address, name), as the tables key them
    at: float
    serial: int
    delay: float  # seconds to wait before checking the password


class _FailureTable:
    """Recent failures per key, bounded in memory; not locked itself (the throttle is)."""

    def __init__(self, allowance: Allowance, max_keys: int) -> None:
        self.allowance = allowance
        self._max_keys = max_keys
        # Enough history to reach the lock and the delay cap; more would change nothing.
        self._history = max(allowance.lock_after, allowance.free + 4, 1)
        # Ordered by most recent failure, oldest first.
        self._records: OrderedDict[str, _Failures] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def locked_for(self, key: str, now: float) -> float:
        """Seconds until ``key``'s lock ends; 0 when it is not locked."""
        record = self._records.get(key)
        return max(0.0, record.locked_until - now) if record is not None else 0.0

    def count(self, key: str, now: float, window: float) -> int:
        record = self._records.get(key)
        return _prune(record, now - window) if record is not None else 0

    def add(self, key: str, now: float, window: float, lock: tuple[float, int]) -> None:
        """One more failure at ``now``; ``lock`` is (lock seconds, the attempt's serial)."""
        record = self._records.get(key)
        if record is None:
            while len(self._records) >= self._max_keys:
                self._records.popitem(last=False)
            record = self._records[key] = _Failures(deque(maxlen=self._history))
        _prune(record, now - window)
        record.times.append(now)
        self._records.move_to_end(key)
        if 0 < self.allowance.lock_after <= len(record.times):
            record.locked_until, record.locked_by = now + lock[0], lock[1]

    def withdraw(self, key: str, at: float, serial: int) -> None:
        """Take back one failure counted at ``at`` (and the lock it set, if it did)."""
        record = self._records.get(key)
        if record is None:
            return
        if at in record.times:
            record.times.remove(at)
        if record.locked_by == serial:
            record.locked_until, record.locked_by = -math.inf, 0

    def clear(self, key: str) -> None:
        self._records.pop(key, None)

    def forget_idle(self, now: float, window: float) -> None:
        # Front = oldest last failure; a record is idle once out of the window and unlocked.
        while self._records:
            record = next(iter(self._records.values()))
            idle = not record.times or record.times[-1] <= now - window
            if not idle or now < record.locked_until:
                return
            self._records.popitem(last=False)


def _prune(record: _Failures, horizon: float) -> int:
    """Drop failures at or before ``horizon``; how many remain."""
    while record.times and record.times[0] <= horizon:
        record.times.popleft()
    return len(record.times)


class SignInThrottle:
    """Slows, then locks, password guessing per (name, address) pair, per address and
    per name, each with its own :class:`Allowance` within ``window_seconds``.

    :meth:`attempt` is called BEFORE the password is checked and counts the attempt as a
    failure at once, in the same critical section as the lock check: parallel guesses
    each see the ones before them, so no more are checked than the allowance lets
    through. A delay starts at 0.5 s past a key's free failures, doubling per further
    failure up to 4 s (the largest of the three keys' delays applies). A key that
    reaches its ``lock_after`` is locked for ``lock_seconds`` from that failure.
    :meth:`succeeded` clears the pair and takes back the attempt from the address and
    the name, whose other failures stay: clearing them would let one valid account
    reset an attacker's count. Names are compared case-insensitively.
    """

    MAX_DELAY = 4.0
    FIRST_DELAY = 0.5

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        per_pair: Allowance = PAIR_ALLOWANCE,
        per_address: Allowance = ADDRESS_ALLOWANCE,
        per_name: Allowance = NAME_ALLOWANCE,
        lock_seconds: float = 900,
        window_seconds: float = 900,
        max_keys: int = DEFAULT_MAX_KEYS,
    ) -> None:
        self._clock = clock
        self.lock_seconds = lock_seconds
        self.window_seconds = window_seconds
        keys = max(1, max_keys)
        self._tables = (_FailureTable(per_pair, keys), _FailureTable(per_address, keys),
                        _FailureTable(per_name, keys))
        self._serial = 0
        self._lock = threading.Lock()

    def tracked(self) -> tuple[int, int, int]:
        """How many (pairs, addresses, names) are tracked (for tests and metrics)."""
        pairs, addresses, names = self._tables
        return len(pairs), len(addresses), len(names)

    def attempt(self, name: str, address: str) -> SignInAttempt:
        """Count one password check as a failure, or raise ``TooManyRequests`` if the
        pair, the address or the name is locked (then nothing is counted)."""
        keys = sign_in_keys(name, address)
        with self._lock:
            now, window = self._clock(), self.window_seconds
            for table, key in zip(self._tables, keys, strict=True):
                table.forget_idle(now, window)
                wait = table.locked_for(key, now)
                if wait > 0:
                    raise sign_in_refusal(wait)
            delay = max(failure_delay(table.count(key, now, window), table.allowance.free)
                        for table, key in zip(self._tables, keys, strict=True))
            self._serial += 1
            for table, key in zip(self._tables, keys, strict=True):
                table.add(key, now, window, (self.lock_seconds, self._serial))
            return SignInAttempt(keys, now, self._serial, delay)

    def succeeded(self, attempt: SignInAttempt) -> None:
        """The password was right: forget the pair's failures, and this attempt."""
        pairs, addresses, names = self._tables
        pair, address, name = attempt.keys
        with self._lock:
            pairs.clear(pair)
            addresses.withdraw(address, attempt.at, attempt.serial)
            names.withdraw(name, attempt.at, attempt.serial)

    def withdraw(self, attempt: SignInAttempt) -> None:
        """The password could not be checked (say the user store is down): the attempt
        is not a failure."""
        with self._lock:
            for table, key in zip(self._tables, attempt.keys, strict=True):
                table.withdraw(key, attempt.at, attempt.serial)

    # The routes' calls, shared with the cluster-wide throttle of hub.limiting (which
    # awaits its store; these never wait).

    async def begin(self, name: str, address: str) -> SignInAttempt:
        """:meth:`attempt`."""
        return self.attempt(name, address)

    async def passed(self, attempt: SignInAttempt) -> None:
        """:meth:`succeeded`."""
        self.succeeded(attempt)

    async def take_back(self, attempt: SignInAttempt) -> None:
        """:meth:`withdraw`."""
        self.withdraw(attempt)

    @property
    def allowances(self) -> tuple[Allowance, Allowance, Allowance]:
        """The (pair, address, name) allowances, for a cluster-wide throttle to share."""
        pairs, addresses, names = self._tables
        return pairs.allowance, addresses.allowance, names.allowance


def sign_in_keys(name: str, address: str) -> tuple[str, str, str]:
    """The (pair, address, name) keys one attempt counts against; names fold case."""
    folded = name.casefold()
    return f"{folded}\n{address}", address, folded


def failure_delay(failures: int, free: int) -> float:
    """Seconds to wait before a check after ``failures`` of which ``free`` cost nothing:
    0.5 s past them, doubling per further failure up to 4 s."""
    extra = failures - free
    if extra < 0:
        return 0.0
    return min(SignInThrottle.MAX_DELAY, SignInThrottle.FIRST_DELAY * 2.0 ** min(extra, 16))


def equal_secrets(a: str, b: str) -> bool:
    """Constant-time comparison of two secrets (as UTF-8 bytes)."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
