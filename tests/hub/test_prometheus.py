"""GET /metrics on a real hub: the counts after a few runs, read with Prometheus' own
parser, and who may scrape."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.hub import test_outside
from tests.hub.conftest import AUTH, HubProcess
from tests.hub.test_history_api import eventually

local_server = test_outside.local_server  # the fixture: a loopback server http() may reach

JOBS = {
    "m_ok": "return { fine: true }",
    "m_fail": "throw new Error('meant to fail')",
    "m_db": "const rows = await db.exec('SELECT 1 AS one')\nreturn rows",
    "m_http": "const answer = await http(params.url)\nreturn answer.status",
    "public_m": "return 1",
}
JSON = {**AUTH, "Accept": "application/json"}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: httpx.Client, **headers: str) -> Samples:
    answer = client.get("/metrics", headers=headers or AUTH)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(answer.text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def _quiet(samples: Samples) -> Samples | None:
    busy = value(samples, "webjobs_workers", state="busy")
    return None if busy or value(samples, "webjobs_history_spool_depth") else samples


def test_runs_calls_workers_and_history_are_counted(
        start_hub: Callable[..., HubProcess], local_server: int) -> None:
    hub = start_hub({"WEBJOB_HTTP_TEST_LOOPBACK_PORT": str(local_server)}, JOBS)
    url = f"http://127.0.0.1:{local_server}/probe"
    with hub.client() as c:
        for _ in range(2):
            assert c.get("/api/webjobs/m_ok", headers=JSON).status_code == 200
        assert c.get("/api/webjobs/m_fail", headers=JSON).status_code == 500
        assert c.get("/api/webjobs/m_db", headers=JSON).json() == [{"one": 1}]
        assert c.post("/api/webjobs/m_http", headers=JSON, json={"url": url}).json() == 200
        # A run's worker is given back, and its record leaves the spool, just after its
        # answer: read the figures once the node is quiet.
        samples = eventually(lambda: _quiet(scrape(c)))
    runs = "webjobs_runs_total"
    assert value(samples, runs, job="m_ok", outcome="success", source="http") == 2
    assert value(samples, runs, job="m_fail", outcome="failed", source="http") == 1
    assert value(samples, runs, job="m_fail", outcome="success", source="http") == 0
    assert value(samples, "webjobs_run_duration_seconds_count", job="m_ok") == 2
    assert value(samples, "webjobs_queue_wait_seconds_count") == 5
    calls = "webjobs_bridge_calls_total"
    assert value(samples, calls, call="db.exec", result="ok") == 1
    assert value(samples, calls, call="http", result="ok") == 1
    assert value(samples, "webjobs_bridge_call_duration_seconds_count", call="http") == 1
    states = {state: value(samples, "webjobs_workers", state=state)
              for state in ("busy", "idle", "starting")}
    assert states["busy"] == 0 and states["idle"] + states["starting"] >= 1
    assert value(samples, "webjobs_queue_depth") == 0
    assert value(samples, "webjobs_history_store_up") == 1
    assert value(samples, "webjobs_history_spool_depth") == 0
    assert ("webjobs_schedule_missed_total", frozenset()) in samples


def test_a_refused_request_is_counted_by_its_limit(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBJOB_PUBLIC_RATE": "2"}, JOBS)
    with hub.client() as c:
        codes = [c.get("/api/webjobs/public_m").status_code for _ in range(3)]
        samples = scrape(c)
    assert codes == [200, 200, 429]
    assert value(samples, "webjobs_rate_limit_refusals_total", limit="public") == 1
    assert value(samples, "webjobs_runs_total", job="public_m", outcome="success",
                 source="http") == 2


def test_only_the_system_token_or_an_allowed_address_may_scrape(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_METRICS_ALLOW": "10.9.9.0/24, 192.0.2.7"}, JOBS)
    user_token = hub.add_user("metrics_reader", "OWNER")
    with hub.client() as c:
        anonymous = c.get("/metrics")
        as_owner = c.get("/metrics", headers={"Authorization": f"Bearer {user_token}"})
        wrong = c.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
        assert "webjobs_workers" in str(scrape(c, **AUTH))
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "AUTH-SESSION-001"
    assert as_owner.status_code == 403 and as_owner.json()["code"] == "SYS-403"
    assert wrong.status_code == 403
    assert "webjobs_" not in anonymous.text + as_owner.text


def test_a_forwarded_address_counts_only_from_a_trusted_proxy(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_METRICS_ALLOW": "192.0.2.7",
                     "WEBHUB_TRUSTED_PROXIES": "127.0.0.1"}, JOBS)
    with hub.client() as c:
        allowed = c.get("/metrics", headers={"X-Forwarded-For": "192.0.2.7"})
        other = c.get("/metrics", headers={"X-Forwarded-For": "192.0.2.8"})
    assert allowed.status_code == 200 and "webjobs_runs" in allowed.text
    assert other.status_code == 401


def test_by_default_only_a_token_scrapes_and_the_metrics_token_reads_nothing_else(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub({"WEBHUB_METRICS_TOKEN": "prometheus-reads-this"}, JOBS)
    reader = {"Authorization": "Bearer prometheus-reads-this"}
    with hub.client() as c:
        anonymous = c.get("/metrics")
        scraped = c.get("/metrics", headers=reader)
        history = c.get("/api/webjobs/history", headers=reader)
    assert anonymous.status_code == 401
    assert scraped.status_code == 200 and "# TYPE webjobs_runs_total counter" in scraped.text
    assert history.status_code in (401, 403)


def test_an_allowed_address_behind_an_untrusted_proxy_is_not_let_in(
        start_hub: Callable[..., HubProcess]) -> None:
    """A reverse proxy on the same machine makes every request come from loopback: a
    forwarding header from a peer that is not a trusted proxy voids the allow-list."""
    hub = start_hub({"WEBHUB_METRICS_ALLOW": "127.0.0.1, ::1"}, JOBS)
    with hub.client() as c:
        direct = c.get("/metrics")
        answers = [c.get("/metrics", headers={name: value}).status_code for name, value in (
            ("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=203.0.113.9"),
            ("X-Real-IP", "203.0.113.9"), ("X-Forwarded-For", "127.0.0.1"))]
    assert direct.status_code == 200
    assert answers == [401, 401, 401, 401]


def test_a_schedules_runs_and_lateness_are_counted(start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(None, JOBS)
    with hub.client(headers=AUTH) as c:
        made = c.post("/api/webjobs/schedules", json={
            "name": "Every second", "jobName": "m_ok", "cron": "* * * * * *", "enabled": True})
        assert made.status_code == 200, made.text

        def fired() -> Samples | None:
            samples = scrape(c)
            ran = value(samples, "webjobs_runs_total", job="m_ok", outcome="success",
                        source="schedule")
            return samples if ran >= 1 else None

        samples = eventually(fired)
        c.delete(f"/api/webjobs/schedules/{made.json()['schedule']['id']}")
    late = value(samples, "webjobs_schedule_lateness_seconds_count")
    assert late >= value(samples, "webjobs_runs_total", job="m_ok", outcome="success",
                         source="schedule") >= 1
    assert value(samples, "webjobs_schedule_lateness_seconds_sum") < 5 * late
