"""Limits counted across nodes: three limiters ("nodes") on one Redis and on one fresh
server database let exactly the limit through between them, lock a name out after
ten wrong guesses wherever they land, and count alone (the warning logged once)
when the shared store is down. Real Redis at 127.0.0.1:6379 (each test under its
own key prefix), real PostgreSQL and MariaDB."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from redis import Redis

from hub.abuse import SignInThrottle
from hub.limiting import (
    DatabaseCounters,
    Limits,
    RequestLimit,
    SignInGuard,
    counter_key,
    database_limits,
    node_limits,
    redis_limits,
)
from hub.settings import load_settings
from hub.store.hubdb import HubDatabase, open_hub_database
from hub.store.limits_store import HIT_TABLE, LOCK_TABLE, WINDOW_TABLE, LimitsStore
from shared.errors import TooManyRequests
from tests.servers import database_nodes, fresh_database, pg_admin
from tests.store.set_clock import SetClock

REDIS_URL = "redis://127.0.0.1:6379/0"
CLOSED_PORT_URL = "redis://127.0.0.1:9/0"  # discard: nothing listens there
SERVER_KINDS = ("postgresql", "postgresql-odbc", "mariadb")
T = TypeVar("T")


@pytest.fixture
def prefix() -> Iterator[str]:
    """A Redis key prefix of this test's own; its keys are removed afterwards."""
    name = f"webjobs-test-{uuid.uuid4().hex}"
    yield name
    client = Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{name}:*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(make())


async def closing(nodes: list[Limits], body: Callable[[list[Limits]], Awaitable[T]]) -> T:
    try:
        return await body(nodes)
    finally:
        for node in nodes:
            await node.close()


async def admitted(limit: RequestLimit, key: str) -> bool:
    try:
        await limit.admit(key)
    except TooManyRequests as refused:
        assert refused.message.startswith("Too many requests from this address; try again in")
        assert refused.retry_after is not None and 1 <= refused.retry_after <= 61
        return False
    return True


async def wrong_guess(guard: SignInGuard, name: str, address: str) -> bool:
    """One wrong password; False when the throttle refused before the check."""
    try:
        attempt = await guard.begin(name, address)
    except TooManyRequests as refused:
        assert refused.message.startswith("Too many failed sign-ins; try again in")
        assert refused.retry_after is not None and refused.retry_after > 60
        return False
    assert attempt.delay <= SignInThrottle.MAX_DELAY
    return True


def redis_nodes(prefix: str, rate: int = 20, url: str = REDIS_URL) -> list[Limits]:
    return [redis_limits(url, rate, 30, prefix=prefix) for _ in range(3)]


def db_nodes(node: Callable[[], HubDatabase], rate: int = 20) -> list[Limits]:
    return [database_limits(node(), rate, 30) for _ in range(3)]


@pytest.fixture(params=SERVER_KINDS)
def server_nodes(request: pytest.FixtureRequest,
                 tmp_path: Path) -> Iterator[Callable[[], HubDatabase]]:
    with database_nodes(request.param, tmp_path) as node:
        yield node


# --- the public rate ---------------------------------------------------------------------


async def round_robin(nodes: list[Limits], key: str, requests: int) -> int:
    let_through = 0
    for i in range(requests):
        let_through += await admitted(nodes[i % len(nodes)].public, key)
    return let_through


async def all_at_once(nodes: list[Limits], key: str, requests: int) -> int:
    answers = await asyncio.gather(*(admitted(nodes[i % len(nodes)].public, key)
                                     for i in range(requests)))
    return sum(answers)


def test_redis_twenty_a_minute_across_three_nodes(prefix: str) -> None:
    async def body(nodes: list[Limits]) -> tuple[int, int, int]:
        return (await round_robin(nodes, "203.0.113.7", 60),
                await all_at_once(nodes, "203.0.113.8", 60),
                await round_robin(nodes, "203.0.113.9", 20))

    assert run(lambda: closing(redis_nodes(prefix), body)) == (20, 20, 20)


def test_database_twenty_a_minute_across_three_nodes(
        server_nodes: Callable[[], HubDatabase]) -> None:
    async def body(nodes: list[Limits]) -> tuple[int, int]:
        return (await round_robin(nodes, "203.0.113.7", 60),
                await round_robin(nodes, "203.0.113.9", 20))

    assert run(lambda: closing(db_nodes(server_nodes), body)) == (20, 20)


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_database_never_lets_more_through_when_all_come_at_once(kind: str,
                                                                 tmp_path: Path) -> None:
    async def body(nodes: list[Limits]) -> int:
        return await all_at_once(nodes, "198.51.100.1", 45)

    with database_nodes(kind, tmp_path) as node:
        let_through = run(lambda: closing(db_nodes(node), body))
    if kind.startswith("postgresql"):  # one row per counter, its lock serializes: exact
        assert let_through == 20
    else:  # the count is read after the bump and may see later bumps: never more
        assert 1 <= let_through <= 20


def test_one_spelling_per_address(prefix: str) -> None:
    async def body(nodes: list[Limits]) -> list[bool]:
        spellings = ["2001:db8::1", "2001:DB8:0:0:0:0:0:1", "2001:0db8::0001"]
        return [await admitted(node.public, spelled)
                for node, spelled in zip(nodes, spellings, strict=True)]

    assert run(lambda: closing(redis_nodes(prefix, rate=2), body)) == [True, True, False]


# --- sign-in -------------------------------------------------------------------------------


async def ten_wrong_then_more(nodes: list[Limits], name: str, address: str) -> list[bool]:
    return [await wrong_guess(nodes[i % 3].sign_in, name, address) for i in range(13)]


def test_redis_ten_wrong_sign_ins_across_three_nodes_lock_out(prefix: str) -> None:
    async def body(nodes: list[Limits]) -> list[bool]:
        return await ten_wrong_then_more(nodes, "Ola", "192.0.2.10")

    assert run(lambda: closing(redis_nodes(prefix), body)) == [True] * 10 + [False] * 3


def test_database_ten_wrong_sign_ins_across_three_nodes_lock_out(
        server_nodes: Callable[[], HubDatabase]) -> None:
    async def body(nodes: list[Limits]) -> list[bool]:
        return await ten_wrong_then_more(nodes, "Ola", "192.0.2.10")

    assert run(lambda: closing(db_nodes(server_nodes), body)) == [True] * 10 + [False] * 3


def test_database_parallel_guesses_cannot_outrun_the_lock(
        server_nodes: Callable[[], HubDatabase]) -> None:
    async def body(nodes: list[Limits]) -> int:
        answers = await asyncio.gather(*(wrong_guess(nodes[i % 3].sign_in, "ola", "192.0.2.5")
                                         for i in range(24)))
        return sum(answers)

    assert run(lambda: closing(db_nodes(server_nodes), body)) == 10


async def success_clears_the_pair(nodes: list[Limits]) -> list[bool]:
    """Nine wrong guesses, the right password on another node, then ten wrong again."""
    seen = [await wrong_guess(nodes[i % 3].sign_in, "ola", "192.0.2.20") for i in range(9)]
    right = await nodes[1].sign_in.begin("OLA", "192.0.2.20")
    await nodes[1].sign_in.passed(right)
    return seen + [await wrong_guess(nodes[i % 3].sign_in, "ola", "192.0.2.20")
                   for i in range(11)]


def test_redis_a_right_password_clears_the_pair_everywhere(prefix: str) -> None:
    answers = run(lambda: closing(redis_nodes(prefix), success_clears_the_pair))
    assert answers == [True] * 19 + [False]


def test_database_a_right_password_clears_the_pair_everywhere(
        server_nodes: Callable[[], HubDatabase]) -> None:
    answers = run(lambda: closing(db_nodes(server_nodes), success_clears_the_pair))
    assert answers == [True] * 19 + [False]


async def withdrawn_lock_lifts(nodes: list[Limits]) -> list[bool]:
    """The tenth guess locks; it could not be checked, so it is withdrawn: one more."""
    for i in range(9):
        assert await wrong_guess(nodes[i % 3].sign_in, "kari", "192.0.2.30")
    tenth = await nodes[0].sign_in.begin("kari", "192.0.2.30")
    locked = await wrong_guess(nodes[1].sign_in, "kari", "192.0.2.30")
    await nodes[0].sign_in.take_back(tenth)
    return [locked, await wrong_guess(nodes[2].sign_in, "kari", "192.0.2.30"),
            await wrong_guess(nodes[1].sign_in, "kari", "192.0.2.30")]


def test_redis_withdrawing_the_locking_attempt_lifts_the_lock(prefix: str) -> None:
    assert run(lambda: closing(redis_nodes(prefix), withdrawn_lock_lifts)) == [
        False, True, False]


def test_database_withdrawing_the_locking_attempt_lifts_the_lock(
        server_nodes: Callable[[], HubDatabase]) -> None:
    assert run(lambda: closing(db_nodes(server_nodes), withdrawn_lock_lifts)) == [
        False, True, False]


# --- the shared store down -----------------------------------------------------------------


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "webhub.limits" and r.levelno == logging.WARNING]


@pytest.mark.expected_warning
def test_redis_down_each_node_counts_alone(caplog: pytest.LogCaptureFixture,
                                           prefix: str) -> None:
    async def body(nodes: list[Limits]) -> tuple[int, list[bool]]:
        rate = await round_robin(nodes, "203.0.113.50", 30)  # 5 a node
        guesses = [await wrong_guess(nodes[0].sign_in, "ola", "192.0.2.40") for _ in range(11)]
        return rate, guesses

    caplog.set_level(logging.INFO, logger="webhub.limits")
    rate, guesses = run(lambda: closing(redis_nodes(prefix, rate=5, url=CLOSED_PORT_URL), body))
    assert rate == 15  # the shared count is lost, each node's own still holds
    assert guesses == [True] * 10 + [False]
    said = warnings_of(caplog)
    assert len(said) == 3, said  # once a minute per node, however many requests
    assert all(s.startswith("Redis unreachable") for s in said)


def _connections(name: str, allowed: bool) -> None:
    pg_admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {str(allowed).lower()}")
    if not allowed:
        pg_admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE datname = %s AND pid <> pg_backend_pid()", [name])


@pytest.mark.expected_warning
def test_database_down_counts_alone_then_shares_again(
        caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    caplog.set_level(logging.INFO, logger="webhub.limits")
    with fresh_database("postgresql", tmp_path) as url:
        nodes = [database_limits(open_hub_database(url), 3, 30) for _ in range(3)]
        name = url.rsplit("/", 1)[-1]
        for limits in nodes:
            assert limits.outage is not None
            limits.outage.retry_after_s = 0.0  # ask the database again at once

        async def body(nodes: list[Limits]) -> tuple[int, int, int]:
            shared = await round_robin(nodes, "203.0.113.60", 2)
            _connections(name, allowed=False)
            try:
                alone = int(await admitted(nodes[0].public, "203.0.113.60"))
                alone += await round_robin(nodes[1:], "203.0.113.61", 8)
            finally:
                _connections(name, allowed=True)
            again = await round_robin(nodes, "203.0.113.60", 6)
            return shared, alone, again

        assert run(lambda: closing(nodes, body)) == (2, 7, 1)
    said = warnings_of(caplog)
    assert said and all(s.startswith("The hub database unreachable") for s in said)
    assert any("answers again" in r.getMessage() for r in caplog.records)


# --- where node_limits counts, and pruning -------------------------------------------------


def test_a_server_hub_database_counts_in_it(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        settings = load_settings({"WEBHUB_HOME": str(tmp_path), "WEBHUB_DB": url})
        limits = node_limits(settings, 30)
        assert limits.shared == "database"
        asyncio.run(limits.close())


def test_redis_wins_over_the_database(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        settings = load_settings({"WEBHUB_HOME": str(tmp_path), "WEBHUB_DB": url,
                                  "WEBHUB_REDIS_URL": REDIS_URL})
        limits = node_limits(settings, 30)
        assert limits.shared == "redis"
        asyncio.run(limits.close())


def test_old_buckets_and_ended_locks_are_pruned(
        server_nodes: Callable[[], HubDatabase]) -> None:
    db = server_nodes()
    now = 1_800_000_000.0
    # PostgreSQL times its rate windows by the database's clock: here one the test sets.
    clock = SetClock(db, now) if db.dialect.name == "postgresql" else None
    store = clock.store() if clock else LimitsStore(db)

    def hit_at(counter: str, at: float) -> float:
        if clock:
            clock.set(at)
        return store.hit(counter, at, 60.0, 1, 20)

    for seconds_ago in (5000, 2000, 10, 0):
        assert hit_at("public:a", now - seconds_ago) == 0.0
    assert hit_at("public:idle", now - 3000) == 0.0
    if clock:
        clock.set(now)
    store.sign_in_attempt(["signin-pair:a"], [1], now - 3000, 900.0, 15, (900.0, 7))
    store.sign_in_attempt(["signin-pair:b"], [1], now - 10, 900.0, 15, (900.0, 8))
    if db.dialect.name == "postgresql":
        # One window row per rate counter, its old buckets dropped at each hit: the idle
        # counter's row, the old sign-in bucket and the lock that ended long ago go.
        assert store.prune(now, 1000.0) == 3
        assert db.read(f"SELECT Counter, Buckets[1], Buckets[2] FROM {WINDOW_TABLE}") == [
            ("public:a", int(now) - 10, int(now))]
    else:
        # public:a's two old buckets, the idle counter's, the old sign-in bucket and the
        # lock that ended long ago.
        assert store.prune(now, 1000.0) == 5
        assert db.read(f"SELECT Bucket FROM {HIT_TABLE} WHERE Counter = ? ORDER BY Bucket",
                       ["public:a"]) == [(int(now) - 10,), (int(now),)]
    assert [r[0] for r in db.read(f"SELECT Counter FROM {LOCK_TABLE}")] == ["signin-pair:b"]


@pytest.mark.expected_warning
def test_a_database_that_hangs_is_given_up_on(caplog: pytest.LogCaptureFixture,
                                              tmp_path: Path) -> None:
    """A sign-in whose row another transaction holds waits no longer than ``wait_s``:
    the node counts it alone, and the loop kept serving meanwhile."""
    caplog.set_level(logging.INFO, logger="webhub.limits")
    with database_nodes("postgresql", tmp_path) as node:
        limits, holder = database_limits(node(), 20, 30), node()
        counters = limits.counters
        assert isinstance(counters, DatabaseCounters)
        counters.wait_s = 0.3
        assert run(lambda: wrong_guess(limits.sign_in, "ola", "192.0.2.70"))
        row = counter_key("signin-address", "192.0.2.70")

        async def while_held() -> tuple[bool, int]:
            ticks = 0

            async def ticking() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.create_task(ticking())
            try:
                return await wrong_guess(limits.sign_in, "ola", "192.0.2.70"), ticks
            finally:
                ticker.cancel()

        with holder.transaction() as tx:
            tx.read(f"SELECT LockedUntil FROM {LOCK_TABLE} WHERE Counter = ? FOR UPDATE", [row])
            counted, ticks = run(while_held)
        run(limits.close)
    assert counted and ticks >= 10  # counted on this node; the loop ran through the wait
    said = warnings_of(caplog)
    assert len(said) == 1 and said[0].startswith("The hub database unreachable"), said
