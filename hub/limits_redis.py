"""Limits counted in Redis (``WEBHUB_REDIS_URL``), shared by every node that uses it.

Request rates go through the ``limits`` library's moving window, which is what the
in-memory :class:`hub.abuse.RateLimiter` counts: at most N requests in any 60 s,
refused requests not recorded. Sign-in failures need two things ``limits`` has not
(taking back one counted attempt, and a lock that lasts its own time from the
failure that set it), so they are one small Lua script per step over the same
connection pool: a sorted set of failures per key, scored by Redis's own clock
(nodes' clocks may differ), and a lock key that expires by itself.

Every key lives under ``<prefix>:`` so that several hubs, or tests, share one Redis.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from limits import RateLimitItemPerMinute
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from hub.abuse import Allowance
from hub.store.limits_store import SignInCounts

__all__ = ["REDIS_ERRORS", "RedisCounters"]

# A Redis that does not answer within this is taken for down (the node counts alone).
SOCKET_TIMEOUT_S = 0.5
REDIS_ERRORS: tuple[type[BaseException], ...] = (RedisError, StorageError, OSError,
                                                  TimeoutError)

# KEYS: n failure sets, then their n lock keys. ARGV: window ms, lock ms, the attempt's
# member, then each key's lock_after and how many failures to keep. Returns the
# longest lock left (ms; 0: none) and each key's failures before this one.
_ATTEMPT = """
local n = #KEYS / 2
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, lock, member = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local longest = 0
for i = 1, n do
  local left = redis.call('PTTL', KEYS[n + i])
  if left > longest then longest = left end
end
if longest > 0 then return {longest} end
local counts = {0}
for i = 1, n do
  local failures, lock_after = KEYS[i], tonumber(ARGV[2 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', failures, '-inf', now - window)
  local before = redis.call('ZCARD', failures)
  counts[i + 1] = before
  redis.call('ZADD', failures, now, member)
  redis.call('ZREMRANGEBYRANK', failures, 0, -(tonumber(ARGV[3 + 2 * i]) + 1))
  redis.call('PEXPIRE', failures, window)
  if lock_after > 0 and before + 1 >= lock_after then
    redis.call('SET', KEYS[n + i], member, 'PX', lock)
  end
end
return counts
"""

# KEYS: failure sets, then their lock keys. ARGV: the attempt's member.
_WITHDRAW = """
local n = #KEYS / 2
for i = 1, n do
  redis.call('ZREM', KEYS[i], ARGV[1])
  if redis.call('GET', KEYS[n + i]) == ARGV[1] then redis.call('DEL', KEYS[n + i]) end
end
return n
"""


class RedisCounters:
    """The counters of one node, in the Redis at ``url`` under ``prefix``."""

    where = "Redis"
    errors = REDIS_ERRORS

    def __init__(self, url: str, prefix: str) -> None:
        self.prefix = prefix
        # One retry at once (a connection Redis closed since), none with a backoff: a
        # limit is not worth holding a request up; the node counts alone instead.
        self._client: Redis = Redis.from_url(url, socket_timeout=SOCKET_TIMEOUT_S,
                                             socket_connect_timeout=SOCKET_TIMEOUT_S,
                                             retry=Retry(NoBackoff(), 1))
        shared: dict[str, Any] = {"connection_pool": self._client.connection_pool}
        storage = RedisStorage(f"async+{url}", implementation="redispy", key_prefix=prefix,
                               wrap_exceptions=True, **shared)
        self._window = MovingWindowRateLimiter(storage)
        self._items: dict[int, RateLimitItemPerMinute] = {}
        self._attempt: Any = self._client.register_script(_ATTEMPT)
        self._withdraw: Any = self._client.register_script(_WITHDRAW)

    def _item(self, per_minute: int) -> RateLimitItemPerMinute:
        item = self._items.get(per_minute)
        if item is None:
            item = self._items[per_minute] = RateLimitItemPerMinute(per_minute)
        return item

    async def hit(self, counter: str, per_minute: int) -> float:
        """Count one request; 0 when it is let through, else seconds until one frees."""
        item = self._item(per_minute)
        if await self._window.hit(item, counter):
            return 0.0
        stats = await self._window.get_window_stats(item, counter)
        return max(0.0, stats.reset_time - time.time())

    def _keys(self, counters: Sequence[str]) -> list[str]:
        return ([f"{self.prefix}:failures/{c}" for c in counters]
                + [f"{self.prefix}:lock/{c}" for c in counters])

    async def sign_in_attempt(self, counters: Sequence[str], allowances: Sequence[Allowance],
                              at: float, window: float,
                              lock: tuple[float, int]) -> SignInCounts:
        """See :meth:`hub.store.limits_store.LimitsStore.sign_in_attempt` (``at`` is
        not needed: Redis's clock scores the failures)."""
        args: list[Any] = [int(window * 1000), max(1, int(lock[0] * 1000)), str(lock[1])]
        for allowance in allowances:  # as much history as the lock and the delays need
            args += [allowance.lock_after, max(allowance.lock_after, allowance.free + 4, 1)]
        answer = await self._attempt(keys=self._keys(counters), args=args)
        if len(answer) == 1:
            return SignInCounts(int(answer[0]) / 1000, ())
        return SignInCounts(0.0, tuple(int(count) for count in answer[1:]))

    async def withdraw(self, counters: Sequence[str], at: float, serial: int) -> None:
        await self._withdraw(keys=self._keys(counters), args=[str(serial)])

    async def clear(self, counter: str) -> None:
        await self._client.delete(*self._keys([counter]))

    async def close(self) -> None:
        await self._client.aclose()
