"""hub.abuse: client attribution behind proxies, rate limits, sign-in throttling.

Pure unit tests: every clock is a fake one, nothing sleeps and no hub is started."""

from __future__ import annotations

import contextlib
import ipaddress
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from hub.abuse import (
    PAIR_ALLOWANCE,
    Allowance,
    RateLimiter,
    SignInThrottle,
    client_address,
    equal_secrets,
    parse_trusted_proxies,
)
from shared.errors import BadRequest, TooManyRequests


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


TRUSTED = parse_trusted_proxies("127.0.0.1, 10.0.0.0/8 ::1 fd00::/8")


# --- parse_trusted_proxies -------------------------------------------------------------------


def test_parse_trusted_proxies_mixed_separators() -> None:
    nets = parse_trusted_proxies(" 127.0.0.1,10.0.0.0/8 ,, ::1\n192.168.1.7/16 ")
    assert nets == [
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
        ipaddress.ip_network("192.168.0.0/16"),  # host bits ignored
    ]


@pytest.mark.parametrize("text", ["", "   ", " , ,"])
def test_parse_trusted_proxies_empty(text: str) -> None:
    assert parse_trusted_proxies(text) == []


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "localhost", "1.2.3", "::g", "10.0.0.1/x"])
def test_parse_trusted_proxies_rejects_and_names_bad_entry(bad: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse_trusted_proxies(f"127.0.0.1, {bad}, ::1")
    assert bad in info.value.message
    assert info.value.code == "HUB-001"


# --- client_address --------------------------------------------------------------------------


def test_untrusted_peer_spoofed_header_is_ignored() -> None:
    assert client_address("203.0.113.9", "1.1.1.1, 10.0.0.1", TRUSTED) == "203.0.113.9"
    assert client_address("203.0.113.9", "1.1.1.1", []) == "203.0.113.9"


def test_trusted_peer_takes_rightmost_untrusted() -> None:
    xff = "6.6.6.6, 203.0.113.7"  # 6.6.6.6 was written by the client: not believed
    assert client_address("10.0.0.5", xff, TRUSTED) == "203.0.113.7"


def test_chain_of_trusted_proxies_is_skipped() -> None:
    xff = "6.6.6.6, 203.0.113.7, 10.1.1.1,10.2.2.2 , 127.0.0.1"
    assert client_address("127.0.0.1", xff, TRUSTED) == "203.0.113.7"


def test_chain_trusted_all_the_way_yields_leftmost() -> None:
    assert client_address("127.0.0.1", "10.9.9.9, 10.1.1.1", TRUSTED) == "10.9.9.9"


@pytest.mark.parametrize("header", [None, ""])
def test_trusted_peer_without_header_is_the_peer(header: str | None) -> None:
    assert client_address("10.0.0.5", header, TRUSTED) == "10.0.0.5"


@pytest.mark.parametrize(
    ("xff", "expected"),
    [
        ("203.0.113.7, garbage", "10.0.0.5"),  # malformed at once: the peer
        ("6.6.6.6, garbage, 10.0.0.9", "10.0.0.9"),  # last good address
        ("203.0.113.7, unknown, 10.0.0.9", "10.0.0.9"),
        ("203.0.113.7:8080", "10.0.0.5"),  # ports are not addresses
        ("203.0.113.7,", "10.0.0.5"),  # empty entry
        ("   ", "10.0.0.5"),
        ("garbage, 203.0.113.7", "203.0.113.7"),  # found before reaching the garbage
    ],
)
def test_malformed_entries_end_the_walk(xff: str, expected: str) -> None:
    assert client_address("10.0.0.5", xff, TRUSTED) == expected


def test_ipv6() -> None:
    assert client_address("::1", "2001:DB8:0::1", TRUSTED) == "2001:db8::1"
    assert client_address("::1", "2001:db8::1, fd00::5, fd12::1", TRUSTED) == "2001:db8::1"
    assert client_address("2001:db8::2", "2001:db8::1", TRUSTED) == "2001:db8::2"
    assert client_address("fd00::7", "203.0.113.7, 10.0.0.1", TRUSTED) == "203.0.113.7"


def test_ipv4_mapped_peer_is_folded_to_ipv4() -> None:
    assert client_address("::ffff:127.0.0.1", "203.0.113.7", TRUSTED) == "203.0.113.7"
    assert client_address("::ffff:203.0.113.9", "1.1.1.1", TRUSTED) == "203.0.113.9"


def test_missing_or_non_ip_peer() -> None:
    assert client_address(None, "203.0.113.7", TRUSTED) == "unknown"
    assert client_address("", None, TRUSTED) == "unknown"
    assert client_address("testclient", "203.0.113.7", TRUSTED) == "testclient"


# --- RateLimiter -----------------------------------------------------------------------------


def refused(limiter: RateLimiter, key: str) -> int:
    with pytest.raises(TooManyRequests) as info:
        limiter.hit(key)
    err = info.value
    assert err.http_status == 429 and err.code == "SYS-429"
    assert err.message == f"Too many requests from this address; try again in {err.retry_after} s"
    assert isinstance(err.retry_after, int) and err.retry_after >= 1
    return err.retry_after


def test_rate_limit_exactly() -> None:
    clock = FakeClock()
    limiter = RateLimiter(5, clock)
    for _ in range(5):
        limiter.hit("a")
    assert refused(limiter, "a") == 60


def test_retry_after_follows_sliding_window() -> None:
    clock = FakeClock()
    limiter = RateLimiter(3, clock)
    for _ in range(3):
        limiter.hit("a")
        clock.advance(10)  # hits at 0, 10, 20
    assert refused(limiter, "a") == 30  # now 30: the hit at 0 frees at 60
    clock.advance(29.5)
    assert refused(limiter, "a") == 1  # 0.5 s rounds up, never 0
    clock.advance(0.5)
    limiter.hit("a")  # now 60: the hit at 0 has left the window
    assert refused(limiter, "a") == 10  # next to free: the hit at 10
    clock.advance(10)
    limiter.hit("a")


def test_refusals_are_not_counted() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2, clock)
    limiter.hit("a")
    limiter.hit("a")
    for _ in range(100):
        clock.advance(0.5)
        refused(limiter, "a")
    clock.advance(10)  # 60 s after the accepted hits
    limiter.hit("a")
    limiter.hit("a")


def test_keys_are_separate() -> None:
    limiter = RateLimiter(1, FakeClock())
    limiter.hit("a")
    limiter.hit("b")
    refused(limiter, "a")
    refused(limiter, "b")
    limiter.hit("c")


@pytest.mark.parametrize("per_minute", [0, -1])
def test_disabled(per_minute: int) -> None:
    limiter = RateLimiter(per_minute, FakeClock())
    for _ in range(10_000):
        limiter.hit("a")
    assert len(limiter) == 0


def test_idle_keys_are_forgotten() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, clock)
    for i in range(1000):
        limiter.hit(f"10.0.{i // 256}.{i % 256}")
    assert len(limiter) == 1000
    clock.advance(30)
    limiter.hit("recent")
    clock.advance(30)  # the first thousand are now a minute old; "recent" is not
    limiter.hit("new")
    assert len(limiter) == 2


def test_key_cap_evicts_least_recently_active() -> None:
    clock = FakeClock()
    limiter = RateLimiter(1, clock, max_keys=3)
    for key in ("a", "b", "c"):
        limiter.hit(key)
        clock.advance(1)
    limiter.hit("d")
    assert len(limiter) == 3
    limiter.hit("a")  # evicted, so its window started over
    refused(limiter, "c")
    refused(limiter, "d")


# --- SignInThrottle --------------------------------------------------------------------------

ANN_AT_HOME, ATTACKER = "198.51.100.1", "203.0.113.7"


def locked(throttle: SignInThrottle, name: str, address: str) -> int:
    with pytest.raises(TooManyRequests) as info:
        throttle.attempt(name, address)
    err = info.value
    assert err.http_status == 429 and err.code == "SYS-429"
    assert err.message == f"Too many failed sign-ins; try again in {err.retry_after} s"
    assert isinstance(err.retry_after, int) and err.retry_after >= 1
    return err.retry_after


def fail(throttle: SignInThrottle, name: str, address: str, times: int = 1) -> None:
    """``times`` wrong passwords: an attempt that is never followed by a success."""
    for _ in range(times):
        throttle.attempt(name, address)


def delay_of(throttle: SignInThrottle, name: str, address: str) -> float:
    """The delay the next check would get, without counting it."""
    attempt = throttle.attempt(name, address)
    throttle.withdraw(attempt)
    return attempt.delay


def test_delays_grow_and_cap_then_lock() -> None:
    clock = FakeClock()
    throttle = SignInThrottle(clock)
    delays = []
    for _ in range(10):
        delays.append(throttle.attempt("ann", ATTACKER).delay)
        clock.advance(1)
    assert delays == [0, 0, 0, 0.5, 1, 2, 4, 4, 4, 4]
    assert locked(throttle, "ann", ATTACKER) == 899  # 900 s from the last failure


def test_a_flood_from_one_address_leaves_the_owner_a_way_in() -> None:
    throttle = SignInThrottle(FakeClock())
    for _ in range(50):  # the attacker keeps going; refused tries are not counted
        with contextlib.suppress(TooManyRequests):
            throttle.attempt("ann", ATTACKER)
    assert locked(throttle, "ann", ATTACKER) == 900
    assert locked(throttle, "ANN", ATTACKER) == 900  # names are case-insensitive
    owner = throttle.attempt("ann", ANN_AT_HOME)
    assert owner.delay == 0  # ten failures are far below the name's own allowance
    throttle.succeeded(owner)
    assert throttle.attempt("bob", ATTACKER).delay == 0.5  # the address is slowed, not locked


def test_parallel_attempts_never_pass_the_lock() -> None:
    """Each attempt is counted as it is let through, so 30 at once let ten through."""
    throttle = SignInThrottle(FakeClock())
    start = threading.Barrier(30)

    def guess(_: int) -> bool:
        start.wait()
        try:
            throttle.attempt("ann", ATTACKER)
        except TooManyRequests:
            return False
        return True

    with ThreadPoolExecutor(30) as pool:
        let_through = sum(pool.map(guess, range(30)))
    assert let_through == PAIR_ALLOWANCE.lock_after == 10


def test_a_name_guessed_from_many_addresses_is_slowed_then_locked() -> None:
    throttle = SignInThrottle(FakeClock())
    fail(throttle, "ann", "192.0.2.0", 10)
    fail(throttle, "ann", "192.0.2.1", 9)
    assert delay_of(throttle, "ann", ANN_AT_HOME) == 0  # 19 failures: within the free ones
    fail(throttle, "ann", "192.0.2.1", 1)
    assert delay_of(throttle, "ann", ANN_AT_HOME) == 0.5
    for i in range(2, 10):
        fail(throttle, "ann", f"192.0.2.{i}", 10)
    assert locked(throttle, "ann", ANN_AT_HOME) == 900  # 100 from ten addresses
    assert throttle.attempt("bob", ANN_AT_HOME).delay == 0


def test_an_address_trying_many_names_is_locked() -> None:
    throttle = SignInThrottle(FakeClock())
    for i in range(29):
        fail(throttle, f"user{i}", ATTACKER)
    assert delay_of(throttle, "somebody", ATTACKER) == 4  # past the address's free ten
    fail(throttle, "user29", ATTACKER)
    assert locked(throttle, "somebody", ATTACKER) == 900
    assert throttle.attempt("somebody", ANN_AT_HOME).delay == 0
    assert throttle.attempt("user1", ANN_AT_HOME).delay == 0


def test_success_clears_the_pair_not_the_address_or_name() -> None:
    throttle = SignInThrottle(FakeClock())
    fail(throttle, "ann", ATTACKER, 9)
    fail(throttle, "carl", ATTACKER, 5)  # the address: 14 failures
    fail(throttle, "ann", "192.0.2.1", 9)
    fail(throttle, "ann", "192.0.2.2", 9)  # the name: 27 failures
    throttle.succeeded(throttle.attempt("ANN", ATTACKER))
    assert delay_of(throttle, "bob", ATTACKER) == 4  # the address still counts
    assert delay_of(throttle, "ann", ANN_AT_HOME) == 4  # and so does the name
    assert delay_of(throttle, "ann", ATTACKER) == 4  # the pair is clear; the rest is not
    fail(throttle, "ann", ATTACKER, 9)
    assert throttle.attempt("ann", ATTACKER)  # the cleared pair has ten again


def test_the_right_password_on_the_locking_attempt_lifts_its_lock() -> None:
    throttle = SignInThrottle(FakeClock())
    fail(throttle, "ann", ATTACKER, 9)
    throttle.succeeded(throttle.attempt("ann", ATTACKER))  # the tenth, and right
    assert throttle.attempt("ann", ATTACKER).delay == 0
    names = SignInThrottle(FakeClock())
    for i in range(9):
        fail(names, "ann", f"192.0.2.{i}", 10)
    fail(names, "ann", "192.0.2.9", 9)
    names.succeeded(names.attempt("ann", ANN_AT_HOME))  # the hundredth for the name
    assert names.attempt("ann", ANN_AT_HOME).delay == 4


def test_a_withdrawn_attempt_counts_for_nothing() -> None:
    throttle = SignInThrottle(FakeClock())
    for _ in range(40):
        throttle.withdraw(throttle.attempt("ann", ATTACKER))
    assert throttle.attempt("ann", ATTACKER).delay == 0


def test_unlock_after_lock_seconds() -> None:
    clock = FakeClock()
    throttle = SignInThrottle(clock, lock_seconds=300, window_seconds=300)
    fail(throttle, "ann", ATTACKER, 10)
    clock.advance(299)
    assert locked(throttle, "ann", ATTACKER) == 1
    clock.advance(1)
    assert throttle.attempt("ann", ATTACKER).delay == 0  # a fresh start
    assert throttle.attempt("ann", ATTACKER).delay == 0


def test_lock_shorter_than_window_relocks_on_next_failure() -> None:
    clock = FakeClock()
    throttle = SignInThrottle(clock, lock_seconds=60, window_seconds=900)
    fail(throttle, "ann", ATTACKER, 10)
    clock.advance(60)
    assert throttle.attempt("ann", ATTACKER).delay == 4  # allowed, but still slowed
    assert locked(throttle, "ann", ATTACKER) == 60


def test_lock_longer_than_window_holds() -> None:
    clock = FakeClock()
    throttle = SignInThrottle(clock, lock_seconds=3600, window_seconds=60)
    fail(throttle, "ann", ATTACKER, 10)
    clock.advance(600)  # the failures left the window; the lock has not expired
    assert locked(throttle, "ann", ATTACKER) == 3000
    clock.advance(3000)
    assert throttle.attempt("ann", ATTACKER).delay == 0


def test_failures_leave_the_window() -> None:
    clock = FakeClock()
    throttle = SignInThrottle(clock, window_seconds=900)
    for _ in range(4):
        fail(throttle, "ann", ATTACKER)
        clock.advance(100)  # failures at 0, 100, 200, 300; now 400
    assert delay_of(throttle, "ann", ATTACKER) == 1
    clock.advance(500)  # now 900: the failure at 0 has left
    assert delay_of(throttle, "ann", ATTACKER) == 0.5
    clock.advance(300)  # now 1200: only the failure at 300 is left
    assert delay_of(throttle, "ann", ATTACKER) == 0


def test_lock_after_zero_never_locks() -> None:
    never = Allowance(free=3, lock_after=0)
    throttle = SignInThrottle(FakeClock(), per_pair=never, per_address=never, per_name=never)
    fail(throttle, "ann", ATTACKER, 150)
    assert throttle.attempt("ann", ATTACKER).delay == 4


def test_sign_in_memory_is_bounded() -> None:
    clock = FakeClock()
    throttle = SignInThrottle(clock, max_keys=100)
    for i in range(500):
        fail(throttle, f"user{i}", f"10.0.{i // 256}.{i % 256}")
    assert throttle.tracked() == (100, 100, 100)
    fail(throttle, "locked", ATTACKER, 10)
    clock.advance(901)
    fail(throttle, "late", ANN_AT_HOME)
    assert throttle.tracked() == (1, 1, 1)  # idle and unlocked records are forgotten
    throttle.withdraw(throttle.attempt("other", "192.0.2.1"))
    assert throttle.tracked() == (2, 2, 2)  # withdrawn: kept until idle, counting nothing


# --- equal_secrets ---------------------------------------------------------------------------


def test_equal_secrets() -> None:
    assert equal_secrets("s3cret-token", "s3cret-token")
    assert not equal_secrets("s3cret-token", "s3cret-tokem")
    assert not equal_secrets("s3cret", "s3cret-token")
    assert not equal_secrets("", "x")
    assert equal_secrets("", "")
    assert equal_secrets("pässwörd✓", "pässwörd✓")
    assert not equal_secrets("pässwörd", "passwörd")
