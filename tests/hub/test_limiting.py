"""hub.limiting without a shared store: counter names built from client addresses and
user names (property tests), where :func:`node_limits` counts, and the one-node
default answering exactly as :mod:`hub.abuse` does."""

from __future__ import annotations

import asyncio
import ipaddress
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub.abuse import RateLimiter, SignInThrottle
from hub.limiting import canonical_address, cluster_prefix, counter_key, node_limits
from hub.settings import Settings, load_settings
from shared.errors import TooManyRequests

ipv4 = st.ip_addresses(v=4)
ipv6 = st.ip_addresses(v=6)
texts = st.text(max_size=40)


@given(ipv6)
def test_every_spelling_of_an_ipv6_address_is_one_counter(address: ipaddress.IPv6Address) -> None:
    spellings = {address.compressed, address.exploded, address.exploded.upper(),
                 f"  {address.compressed.upper()} "}
    assert {counter_key("public", canonical_address(s)) for s in spellings} == {
        counter_key("public", canonical_address(str(address)))}


@given(ipv4)
def test_an_ipv4_mapped_address_counts_as_its_ipv4(address: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    assert canonical_address(str(mapped)) == str(address)
    assert canonical_address(mapped.exploded) == str(address)


@given(st.one_of(ipv4, ipv6))
def test_a_canonical_address_stays_as_it_is(address: ipaddress.IPv4Address) -> None:
    once = canonical_address(str(address))
    assert canonical_address(once) == once
    assert ipaddress.ip_address(once) in (address, getattr(address, "ipv4_mapped", None))


@given(texts.filter(lambda t: not _is_ip(t)))
def test_what_is_no_address_is_kept_as_it_is(text: str) -> None:
    assert canonical_address(text) == text


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip())
    except ValueError:
        return False
    return True


@given(st.sampled_from(["public", "signin-pair", "signin-name"]), st.lists(texts, max_size=4))
def test_a_counter_name_is_short_plain_and_stable(kind: str, parts: list[str]) -> None:
    key = counter_key(kind, *parts)
    assert key == counter_key(kind, *parts)
    assert key.startswith(f"{kind}:") and len(key) == len(kind) + 33
    assert key.isascii() and key.isprintable() and " " not in key


@given(st.lists(texts, max_size=4), st.lists(texts, max_size=4))
def test_different_parts_never_share_a_counter(one: list[str], other: list[str]) -> None:
    # Joining with a separator would make ("a\nb",) and ("a", "b") one counter.
    assert (counter_key("signin-pair", *one) == counter_key("signin-pair", *other)) == (
        one == other)


@given(st.text(min_size=1, max_size=20))
def test_names_and_addresses_never_share_a_counter(part: str) -> None:
    assert counter_key("signin-name", part) != counter_key("signin-address", part)


def test_surrogates_in_a_name_still_make_a_counter() -> None:
    assert counter_key("signin-name", "\udcff") != counter_key("signin-name", "\udcfe")


# --- where node_limits counts ----------------------------------------------------------


def settings_for(tmp_path: Path, **env: str) -> Settings:
    return load_settings({"WEBHUB_HOME": str(tmp_path), **env})


def test_the_embedded_default_counts_in_memory(tmp_path: Path) -> None:
    limits = node_limits(settings_for(tmp_path), 30)
    assert limits.shared == "memory" and limits.counters is None
    assert isinstance(limits.public, RateLimiter) and isinstance(limits.sign_in_rate, RateLimiter)
    assert isinstance(limits.sign_in, SignInThrottle)
    assert limits.public.per_minute == 60 and limits.sign_in_rate.per_minute == 30


def test_the_jobs_in_a_sqlite_hub_database_still_count_in_memory(tmp_path: Path) -> None:
    limits = node_limits(settings_for(tmp_path, WEBJOB_STORE="db"), 30)
    assert limits.shared == "memory"


def test_one_secret_one_prefix(tmp_path: Path) -> None:
    one = settings_for(tmp_path, WEBHUB_SECRET="cluster-one-secret")
    again = settings_for(tmp_path / "again", WEBHUB_SECRET="cluster-one-secret")
    other = settings_for(tmp_path / "other", WEBHUB_SECRET="cluster-two-secret")
    assert cluster_prefix(one) == cluster_prefix(again) != cluster_prefix(other)
    assert cluster_prefix(one).startswith("webjobs:") and len(cluster_prefix(one)) == 16
    assert "cluster-one-secret" not in cluster_prefix(one)


def test_a_redis_url_counts_in_redis(tmp_path: Path) -> None:
    limits = node_limits(settings_for(tmp_path, WEBHUB_REDIS_URL="redis://127.0.0.1:6379/0"),
                         30)
    assert limits.shared == "redis"
    asyncio.run(limits.close())


# --- the one-node path answers as hub.abuse does -------------------------------------------


def test_the_routes_call_the_rate_limiter_as_it_is() -> None:
    limiter = RateLimiter(2)

    async def three() -> TooManyRequests:
        await limiter.admit("192.0.2.1")
        await limiter.admit("192.0.2.1")
        with pytest.raises(TooManyRequests) as refused:
            await limiter.admit("192.0.2.1")
        return refused.value

    refused = asyncio.run(three())
    assert refused.message == "Too many requests from this address; try again in 60 s"
    assert refused.retry_after == 60
    assert len(limiter) == 1


def test_the_routes_call_the_throttle_as_it_is() -> None:
    throttle = SignInThrottle()

    async def calls() -> TooManyRequests:
        right = await throttle.begin("ola", "192.0.2.1")
        await throttle.passed(right)
        unjudged = await throttle.begin("ola", "192.0.2.1")
        await throttle.take_back(unjudged)
        for _ in range(10):  # neither counted: ten more before the lock
            await throttle.begin("ola", "192.0.2.1")
        with pytest.raises(TooManyRequests) as refused:
            await throttle.begin("OLA", "192.0.2.1")
        return refused.value

    refused = asyncio.run(calls())
    assert refused.message == "Too many failed sign-ins; try again in 900 s"
    assert refused.retry_after == 900
