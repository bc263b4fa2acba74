"""The public rate limit and sign-in throttling of one node, counted where the cluster
shares them.

:func:`node_limits` decides where, from the settings:

* ``WEBHUB_REDIS_URL`` set: in Redis (:mod:`hub.limits_redis`);
* else a server hub database (``WEBHUB_DB`` not a SQLite file; several nodes share
  it): in that database (:mod:`hub.limits_database`, :mod:`hub.store.limits_store`);
* else (the embedded default, one node alone): in this node's memory, the
  :mod:`hub.abuse` structures as they are, with nothing added to a request's path.

When Redis or the database cannot be reached, each node counts alone (its own
in-memory limiter and throttle, as if it were the only node) until the shared
store answers again: a public webhook keeps answering, and sign-in keeps a throttle
that at worst lets each node's allowance through. Failing closed would lock every
owner out of every node for as long as Redis is down. The outage is logged as a
warning at most once a minute; after a failure the shared store is tried again
only every few seconds, so a hung server costs no request more than one timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import logging
import secrets
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hub.abuse import (
    Allowance,
    RateLimiter,
    SignInAttempt,
    SignInThrottle,
    failure_delay,
    rate_refusal,
    sign_in_keys,
    sign_in_refusal,
)
from hub.limits_database import DatabaseCounters, HitOutcome
from hub.settings import Settings
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.limits_store import CarryingHit, SignInCounts, Step

__all__ = ["SHARED_PREFIX", "CarriedHit", "CarryingHit", "CarryingLimit", "DatabaseCounters",
           "HitOutcome", "Limits", "RequestLimit", "SignInGuard", "canonical_address",
           "carried_hit", "cluster_prefix", "counter_key", "database_limits", "node_limits",
           "redis_limits"]

log = logging.getLogger("webhub.limits")
SHARED_PREFIX = "webjobs"       # Redis keys: webjobs:<cluster>:...
WARN_EVERY_S = 60.0
RETRY_SHARED_AFTER_S = 5.0
REFUSALS_KEPT = 10_000          # refused counters remembered per limit (their waits)


def canonical_address(text: str) -> str:
    """An address in one spelling: IPv6 compressed and lower case, IPv4-mapped IPv6
    as IPv4; anything that is no IP (a test client's name, ``unknown``) as it is."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return text
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def counter_key(kind: str, *parts: str) -> str:
    """``kind:<32 hex digits>``: a fixed-length name for a counter of ``parts``, so a
    shared store never holds an address or a user name, and no part can spell another
    key (each part goes in with its length)."""
    digest = hashlib.blake2b(digest_size=16, person=b"webjobs-limits")
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return f"{kind}:{digest.hexdigest()}"


class RequestLimit(Protocol):
    """A request rate limit as the routes call it (:class:`RateLimiter` is one)."""

    async def admit(self, key: str) -> None:
        """Count one request for ``key``, or raise ``TooManyRequests`` (``retry_after``)."""


class SignInGuard(Protocol):
    """Sign-in throttling as the routes call it (:class:`SignInThrottle` is one)."""

    async def begin(self, name: str, address: str) -> SignInAttempt:
        """Count a password check as a failure, or raise ``TooManyRequests``."""

    async def passed(self, attempt: SignInAttempt) -> None:
        """The password was right."""

    async def take_back(self, attempt: SignInAttempt) -> None:
        """The password could not be checked."""


class Counters(Protocol):
    """A shared store of counters (Redis or the hub database)."""

    where: str
    errors: tuple[type[BaseException], ...]

    async def hit(self, counter: str, per_minute: int) -> float: ...

    async def sign_in_attempt(self, counters: Sequence[str], allowances: Sequence[Allowance],
                              at: float, window: float,
                              lock: tuple[float, int]) -> SignInCounts: ...

    async def withdraw(self, counters: Sequence[str], at: float, serial: int) -> None: ...

    async def clear(self, counter: str) -> None: ...

    async def close(self) -> None: ...


class Outage:
    """Whether the shared store is worth asking, and the once-a-minute warning."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.retry_after_s = RETRY_SHARED_AFTER_S
        self._retry_at = 0.0
        self._warned_at = -WARN_EVERY_S
        self.down = False

    def usable(self) -> bool:
        return not self.down or time.monotonic() >= self._retry_at

    def failed(self, exc: BaseException) -> None:
        now = time.monotonic()
        self.down, self._retry_at = True, now + self.retry_after_s
        if now - self._warned_at >= WARN_EVERY_S:
            self._warned_at = now
            reason = ("no answer in time" if isinstance(exc, TimeoutError)
                      else getattr(exc, "message", None) or str(exc) or type(exc).__name__)
            log.warning("%s unreachable (%s): rate limits and sign-in throttling are "
                        "counted on this node alone until it answers", self.where, reason)

    def answered(self) -> None:
        if self.down:
            self.down = False
            log.info("%s answers again: limits are counted cluster-wide", self.where)


class SharedRequestLimit:
    """At most ``per_minute`` requests per key in any 60 s across the cluster.

    ``public``: the public limit. Counted in a PostgreSQL hub database, a key refused
    there is refused on this node without a statement until the wait it was given is
    over (only hits free a place, and none leaves the window before), and a public hit
    may carry other writes in its statement (:meth:`carried_hit`: a run's row in the
    cluster's registry)."""

    def __init__(self, counters: Counters, outage: Outage, per_minute: int, kind: str, *,
                 public: bool = False) -> None:
        self.per_minute = per_minute
        self._counters, self._outage, self._kind = counters, outage, kind
        self._local = RateLimiter(per_minute)
        self._remembers = (public and isinstance(counters, DatabaseCounters)
                           and counters.carries)
        # counter -> monotonic end of its wait, oldest refusal first
        self._refused: dict[str, float] = {}

    async def admit(self, key: str) -> None:
        if self.per_minute <= 0:
            return
        if not self._outage.usable():
            self._local.hit(key)
            return
        counter = counter_key(self._kind, canonical_address(key))
        if self._remembers:
            self._refuse_if_known(counter)
        try:
            wait = await self._counters.hit(counter, self.per_minute)
        except self._counters.errors as exc:
            self._outage.failed(exc)
            self._local.hit(key)
            return
        self._judge(counter, wait)

    def carried_hit(self, key: str) -> CarriedHit | None:
        """A hit for ``key`` whose statement may carry other writes: where this limit
        counts public hits in PostgreSQL and the database is answering. None: ``admit``
        as ever. A key refused and still waiting: ``TooManyRequests``."""
        counters = self._counters
        if not (self._remembers and isinstance(counters, DatabaseCounters)
                and self.per_minute > 0 and self._outage.usable()):
            return None
        counter = counter_key(self._kind, canonical_address(key))
        self._refuse_if_known(counter)
        return CarriedHit(self, counters, key, counter)

    async def settle(self, key: str, counter: str, writing: asyncio.Future[HitOutcome],
                     wait_s: float) -> bool:
        """Whether the carried hit ``writing`` was counted in the database. False: it
        failed or did not answer within ``wait_s``, and ``key`` is counted on this node
        alone (its statement may still land while ``writing`` is not done)."""
        try:
            _, wait = await asyncio.wait_for(asyncio.shield(writing), wait_s)
        except self._counters.errors as exc:
            self._outage.failed(exc)
            self._local.hit(key)
            return False
        self._judge(counter, wait)
        return True

    def _judge(self, counter: str, wait: float) -> None:
        """The shared store's answer: counted, or ``TooManyRequests`` for ``wait``."""
        self._outage.answered()
        if wait > 0:
            if self._remembers:
                self._remember_refusal(counter, wait)
            raise rate_refusal(wait)

    def _refuse_if_known(self, counter: str) -> None:
        until = self._refused.get(counter)
        if until is None:
            return
        left = until - time.monotonic()
        if left > 0:
            raise rate_refusal(left)
        del self._refused[counter]

    def _remember_refusal(self, counter: str, wait: float) -> None:
        """Kept at most ``REFUSALS_KEPT``: a new one pushes out the oldest (forgotten,
        that key costs a statement again, nothing more)."""
        self._refused.pop(counter, None)
        if len(self._refused) >= REFUSALS_KEPT:
            del self._refused[next(iter(self._refused))]
        self._refused[counter] = time.monotonic() + wait


class CarriedHit:
    """One public hit whose statement (PostgreSQL) also makes other writes:
    :meth:`start` sends it with them, in the limits' threads; :meth:`settle` judges it
    as :meth:`SharedRequestLimit.admit` would. The started future is done only when the
    statement is over, whoever gave up waiting for it."""

    def __init__(self, limit: SharedRequestLimit, counters: DatabaseCounters, key: str,
                 counter: str) -> None:
        self._limit, self._counters, self._key, self._counter = limit, counters, key, counter

    def start(self, steps: Sequence[Step]) -> asyncio.Future[HitOutcome]:
        return self._counters.start_hit_with(self._counter, self._limit.per_minute, steps)

    async def settle(self, writing: asyncio.Future[HitOutcome]) -> bool:
        return await self._limit.settle(self._key, self._counter, writing,
                                        self._counters.wait_s)


@runtime_checkable
class CarryingLimit(RequestLimit, Protocol):
    """A request limit whose hits may carry other writes (:class:`SharedRequestLimit`, or
    a counting wrapper around one, hub.telemetry)."""

    def carried_hit(self, key: str) -> CarryingHit | None:
        """A hit for ``key`` carrying other writes, or None: ``admit`` as ever."""


def carried_hit(limit: RequestLimit, key: str) -> CarryingHit | None:
    """``limit``'s :meth:`CarryingLimit.carried_hit`; None for any other limit."""
    return limit.carried_hit(key) if isinstance(limit, CarryingLimit) else None


@dataclass(frozen=True)
class SharedAttempt(SignInAttempt):
    """An attempt counted in the shared store, under these counters."""

    counters: tuple[str, str, str]


class SharedSignInGuard:
    """:class:`SignInThrottle`'s rules, counted across the cluster."""

    def __init__(self, counters: Counters, outage: Outage, throttle: SignInThrottle) -> None:
        self._counters, self._outage, self._local = counters, outage, throttle

    async def begin(self, name: str, address: str) -> SignInAttempt:
        if not self._outage.usable():
            return self._local.attempt(name, address)
        keys = sign_in_keys(name, canonical_address(address))
        folded, spelled = keys[2], keys[1]
        counters = (counter_key("signin-pair", folded, spelled),
                    counter_key("signin-address", spelled), counter_key("signin-name", folded))
        allowances, at = self._local.allowances, time.time()
        serial = secrets.randbits(62) + 1  # names this attempt on every node
        try:
            found = await self._counters.sign_in_attempt(
                counters, allowances, at, self._local.window_seconds,
                (self._local.lock_seconds, serial))
        except self._counters.errors as exc:
            self._outage.failed(exc)
            return self._local.attempt(name, address)
        self._outage.answered()
        if found.locked_for > 0:
            raise sign_in_refusal(found.locked_for)
        delay = max(failure_delay(count, allowance.free)
                    for count, allowance in zip(found.before, allowances, strict=True))
        return SharedAttempt(keys, at, serial, delay, counters)

    async def passed(self, attempt: SignInAttempt) -> None:
        if not isinstance(attempt, SharedAttempt):
            self._local.succeeded(attempt)
            return
        pair, address, name = attempt.counters
        await self._quietly(self._counters.clear(pair))
        await self._quietly(self._counters.withdraw((address, name), attempt.at, attempt.serial))

    async def take_back(self, attempt: SignInAttempt) -> None:
        if not isinstance(attempt, SharedAttempt):
            self._local.withdraw(attempt)
            return
        await self._quietly(self._counters.withdraw(attempt.counters, attempt.at,
                                                    attempt.serial))

    async def _quietly(self, step: Awaitable[None]) -> None:
        """A take-back the shared store missed leaves one failure too many counted,
        which expires with its window: no reason to fail the sign-in that is done."""
        try:
            await step
        except self._counters.errors as exc:
            self._outage.failed(exc)


@dataclass
class Limits:
    """One node's limits; ``shared`` says where they are counted."""

    public: RequestLimit
    sign_in: SignInGuard
    sign_in_rate: RequestLimit
    shared: str  # memory | redis | database
    counters: Counters | None = None
    outage: Outage | None = None

    async def close(self) -> None:
        if self.counters is not None:
            await self.counters.close()


def _shared(counters: Counters, public_rate: int, sign_in_rate: int, throttle: SignInThrottle,
            shared: str) -> Limits:
    outage = Outage(counters.where)
    return Limits(SharedRequestLimit(counters, outage, public_rate, "public", public=True),
                  SharedSignInGuard(counters, outage, throttle),
                  SharedRequestLimit(counters, outage, sign_in_rate, "signin-rate"),
                  shared, counters, outage)


def redis_limits(url: str, public_rate: int, sign_in_rate: int, *,
                 prefix: str = SHARED_PREFIX, throttle: SignInThrottle | None = None) -> Limits:
    from hub.limits_redis import RedisCounters  # the redis client only when it is used

    return _shared(RedisCounters(url, prefix), public_rate, sign_in_rate,
                   throttle or SignInThrottle(), "redis")


def database_limits(db: HubDatabase, public_rate: int, sign_in_rate: int, *,
                    throttle: SignInThrottle | None = None) -> Limits:
    throttle = throttle or SignInThrottle()
    counters = DatabaseCounters(db, sign_in_window=throttle.window_seconds)
    return _shared(counters, public_rate, sign_in_rate, throttle, "database")


def cluster_prefix(settings: Settings) -> str:
    """``webjobs:<8 hex digits>``: the Redis keys of one cluster. Its nodes share
    ``WEBHUB_SECRET`` (a node with another refuses to start), so they share the
    prefix, and two clusters (or test hubs) on one Redis never count together. The
    digits are an HMAC of a fixed label: they tell nothing of the secret."""
    digest = hmac.new(settings.secret.encode(), b"webjobs limits prefix v1", hashlib.sha256)
    return f"{SHARED_PREFIX}:{digest.hexdigest()[:8]}"


def node_limits(settings: Settings, sign_in_rate: int) -> Limits:
    """This node's limits (see the module doc for where they are counted)."""
    if settings.redis_url:
        return redis_limits(settings.redis_url, settings.public_rate, sign_in_rate,
                            prefix=cluster_prefix(settings))
    if not settings.hub_db.strip().startswith("sqlite:"):
        db = open_hub_database(settings.hub_db, label="hub database (limits)")
        if db.dialect.name != "sqlite":
            return database_limits(db, settings.public_rate, sign_in_rate)
        db.close()
    return Limits(RateLimiter(settings.public_rate), SignInThrottle(), RateLimiter(sign_in_rate),
                  "memory")
