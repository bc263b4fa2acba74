"""The telemetry hooks without a hub: schedules, limits, the bound on job labels, and
apps in one process keeping their counts apart."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from hub.abuse import SignInAttempt
from hub.limiting import carried_hit
from hub.store.limits_store import Step
from hub.telemetry.hooks import NO_TELEMETRY, RunTelemetry
from hub.telemetry.prometheus import MAX_JOB_LABELS, OTHER_JOB, HubMetrics
from hub.telemetry.scrape import ScrapeAccess
from shared.errors import BadRequest, Forbidden, NotSignedIn, TooManyRequests


def sample(metrics: HubMetrics, name: str, **labels: str) -> float | None:
    value = metrics.registry.get_sample_value(name, labels)
    return value


def test_schedule_lateness_and_missed_occurrences_are_counted() -> None:
    telemetry = RunTelemetry(HubMetrics(), None)
    telemetry.schedule_fired(time.time() - 2.0)
    telemetry.schedule_missed(3)
    assert telemetry.metrics is not None
    assert sample(telemetry.metrics, "webjobs_schedule_lateness_seconds_count") == 1
    assert (sample(telemetry.metrics, "webjobs_schedule_lateness_seconds_sum") or 0) >= 2.0
    assert sample(telemetry.metrics, "webjobs_schedule_lateness_seconds_bucket", le="1.0") == 0
    assert sample(telemetry.metrics, "webjobs_schedule_missed_total") == 3


def test_two_apps_never_share_a_count() -> None:
    first, second = HubMetrics(), HubMetrics()
    first.run_ended("a", "http", "success", 0.01)
    assert sample(first, "webjobs_runs_total", job="a", outcome="success", source="http") == 1
    assert sample(second, "webjobs_runs_total", job="a", outcome="success", source="http") is None


class _Refusing:
    async def admit(self, key: str) -> None:
        raise TooManyRequests("too many")

    async def begin(self, name: str, address: str) -> SignInAttempt:
        raise TooManyRequests("too many")

    async def passed(self, attempt: SignInAttempt) -> None:
        return None

    async def take_back(self, attempt: SignInAttempt) -> None:
        return None


def test_refusals_are_counted_by_limit_and_still_refuse() -> None:
    telemetry = RunTelemetry(HubMetrics(), None)
    limit = telemetry.request_limit(_Refusing(), "sign_in_rate")
    guard = telemetry.sign_in_guard(_Refusing())
    with pytest.raises(TooManyRequests):
        asyncio.run(limit.admit("k"))
    with pytest.raises(TooManyRequests):
        asyncio.run(guard.begin("n", "127.0.0.1"))
    assert telemetry.metrics is not None
    for name in ("sign_in_rate", "sign_in"):
        assert sample(telemetry.metrics, "webjobs_rate_limit_refusals_total", limit=name) == 1


class _CarryingRefusals:
    """A limit whose carried hits are refused: known refused for ``known``, by the
    database as the hit settles for any other key."""

    async def admit(self, key: str) -> None:
        raise TooManyRequests("too many")

    def carried_hit(self, key: str) -> _RefusedHit:
        if key == "known":
            raise TooManyRequests("known refused")
        return _RefusedHit()


class _RefusedHit:
    def start(self, steps: Sequence[Step]) -> asyncio.Future[tuple[bool, float]]:
        writing: asyncio.Future[tuple[bool, float]] = asyncio.Future()
        writing.set_result((False, 30.0))
        return writing

    async def settle(self, writing: asyncio.Future[tuple[bool, float]]) -> bool:
        raise TooManyRequests("refused by the database")


def test_carried_hits_pass_through_and_their_refusals_are_counted_once() -> None:
    telemetry = RunTelemetry(HubMetrics(), None)
    assert carried_hit(telemetry.request_limit(_Refusing(), "public"), "k") is None
    limit = telemetry.request_limit(_CarryingRefusals(), "public")
    with pytest.raises(TooManyRequests):
        carried_hit(limit, "known")

    async def refused_as_settled() -> None:
        hit = carried_hit(limit, "new")
        assert hit is not None
        await hit.settle(hit.start([]))

    with pytest.raises(TooManyRequests):
        asyncio.run(refused_as_settled())
    assert telemetry.metrics is not None
    assert sample(telemetry.metrics, "webjobs_rate_limit_refusals_total", limit="public") == 2


def test_no_telemetry_counts_nothing() -> None:
    NO_TELEMETRY.schedule_missed(2)
    NO_TELEMETRY.refused("public")
    assert NO_TELEMETRY.metrics is None and NO_TELEMETRY.tracer is None


@given(st.lists(st.text(min_size=1, max_size=8), max_size=60),
       st.sampled_from(["http", "adhoc", "schedule", "editor"]))
def test_job_labels_stay_bounded(names: list[str], source: str) -> None:
    metrics = HubMetrics()
    metrics._jobs = {f"seen{i}" for i in range(MAX_JOB_LABELS - 10)}  # nearly full
    labels = {metrics.job_label(name, source) for name in names}
    assert len(metrics._jobs) <= MAX_JOB_LABELS
    if source == "adhoc":
        assert labels <= {OTHER_JOB}
    for name in names:
        metrics.run_ended(name, source, "success", 0.001)
    families = text_string_to_metric_families(metrics.exposition().decode())
    jobs = {s.labels["job"] for f in families if f.name == "webjobs_runs" for s in f.samples}
    assert len(jobs) <= 11


@given(st.text(max_size=40))
def test_an_allow_list_entry_is_an_address_or_network(entry: str) -> None:
    try:
        access = ScrapeAccess(entry, "t0ken")
    except BadRequest as exc:
        assert exc.message.startswith("WEBHUB_METRICS_ALLOW:")
        return
    with pytest.raises((NotSignedIn, Forbidden)):
        access.check("not an address", {"authorization": "Bearer wrong"})
    access.check("not an address", {"authorization": "Bearer t0ken"})
