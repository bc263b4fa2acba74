"""schemathesis over the hub's own /openapi.json, against one real hub, with an OWNER's
API token: generated path, query and body input for every route it declares (a few
hundred cases in all). Every answer must be 2xx/3xx/4xx (or a job's own failure) with a
code when it is a failure — no server error — and every worker must be back after each
case; afterwards a plain run still works and is recorded in history.

One route is left out: ``DELETE /api/auth/token`` revokes the token it is called
with, so the first case would sign the owner out of every later one (it has its own
test in test_console_token.py). No other route stops the hub or revokes the owner's
token (``/api/auth/logout`` ends a browser session, not a bearer token), and the
names, ids and tokens schemathesis makes up match nothing the last test relies on."""


from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.pytest._test_builder import build_operation_test

from tests.hub.conftest import HubProcess, running_hub
from tests.hub.fuzz_support import (
    REQUEST_TIMEOUT_S,
    Answer,
    assert_log_quiet,
    assert_normal_run_recorded,
    assert_workers_back,
    check_answer,
    whole_pool,
    worker_counts,
)

CASES_PER_ROUTE = 10  # fuzzed cases per operation, beside its coverage cases
# The one operation that would revoke the owner's own token (see the docstring).
SIGNS_OUT = "DELETE /api/auth/token"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("schemathesis")) as process:
        yield process


@pytest.fixture(scope="module")
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        yield c


@pytest.fixture(scope="module")
def owner(hub: HubProcess) -> dict[str, str]:
    return {"Authorization": f"Bearer {hub.add_user('schema-owner', 'OWNER')}"}


@pytest.fixture(scope="module")
def pool(client: httpx.Client) -> int:
    return whole_pool(client)


def hub_schema(hub: HubProcess) -> Any:
    loaded = schemathesis.openapi.from_url(f"{hub.url}/openapi.json")
    loaded.config.base_url = hub.url
    loaded.config.phases.update(phases=["coverage", "fuzzing"])
    # Valid and invalid input both (the default today; said so that it stays).
    loaded.config.generation.update(modes=list(GenerationMode))
    return loaded


# schemathesis's pytest integration (`from_fixture` + `parametrize`) fails under pytest 9
# ('Function' object has no attribute '_nodeid'), and a schema loaded at import would need
# a hub at collection. So each operation's test is built as `parametrize` builds it
# (coverage cases as explicit examples, then fuzzing) and run here, and every
# operation's failure is reported together.
def test_no_route_answers_a_server_error(hub: HubProcess, client: httpx.Client,
                                         owner: dict[str, str], pool: int) -> None:
    def check_case(case: Any) -> None:
        response = case.call(headers=owner, timeout=REQUEST_TIMEOUT_S)
        sent = case.as_curl_command(headers=owner)
        answer = Answer(response.status_code,
                        {k.lower(): ", ".join(v) for k, v in response.headers.items()},
                        response.content, sent)
        check_answer(answer, hub)
        assert_workers_back(client, hub, pool, sent)
        assert_log_quiet(hub, sent)

    loaded = hub_schema(hub)
    bounded = settings(max_examples=CASES_PER_ROUTE, deadline=None, database=None,
                       suppress_health_check=list(HealthCheck))
    failures: list[str] = []
    for result in loaded.get_all_operations():
        operation = result.ok()
        if operation.label == SIGNS_OUT:
            continue
        run = build_operation_test(config=loaded.config, operation=operation,
                                   test_func=check_case, given_kwargs={},
                                   feedback=FeedbackSources(), explicit_settings=bounded)
        try:
            run()
        except Exception as exc:
            failures.append(f"{operation.label}: {str(exc)[:3000]}")
    assert not failures, "\n\n".join(failures)


def test_after_it_a_run_is_recorded(hub: HubProcess, client: httpx.Client,
                                    pool: int) -> None:
    counts = worker_counts(client)
    assert counts["workers"] == pool, counts
    assert_normal_run_recorded(client, hub)
