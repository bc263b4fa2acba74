"""The public rate limit and sign-in throttling count across the cluster's nodes: in
Redis when ``WEBHUB_REDIS_URL`` is set, in the hub database otherwise. Requests spread
round-robin over three nodes get exactly what one node would allow."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.nodes.conftest import Cluster

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

RATE = 20


def _ping(cluster: Cluster, index: int) -> int:
    with cluster.client(index, owner=False) as client:
        return client.get("/api/webjobs/public_ping", params={"who": "x"}).status_code


@pytest.mark.parametrize("counted_in", ["redis", "database"])
def test_the_public_rate_limit_counts_across_nodes(cluster_of: Any, counted_in: str) -> None:
    extra = {"WEBJOB_PUBLIC_RATE": str(RATE)}
    if counted_in == "database":
        extra["WEBHUB_REDIS_URL"] = ""
    cluster: Cluster = cluster_of(3, {}, **extra)
    statuses = [_ping(cluster, i % 3) for i in range(3 * RATE)]
    assert statuses.count(200) == RATE, statuses
    assert statuses.count(429) == 2 * RATE, statuses


def _sign_in(cluster: Cluster, index: int, password: str) -> httpx.Response:
    with cluster.client(index, owner=False) as client:
        return client.post("/api/auth/login", json={"name": "ann", "password": password})


def test_sign_in_lockout_counts_across_nodes(cluster_of: Any) -> None:
    cluster: Cluster = cluster_of(3, {})
    cluster.add_user("ann", "right horse battery")
    # Sent at once: each guess is counted before its password is checked, cluster-wide,
    # so no more than the pair's ten are judged however they are spread.
    with ThreadPoolExecutor(15) as pool:
        answers = list(pool.map(lambda i: _sign_in(cluster, i % 3, f"wrong {i}"), range(15)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(401) == 10, statuses
    assert statuses.count(429) == 5, statuses
    for index in range(3):
        assert _sign_in(cluster, index, "right horse battery").status_code == 429
