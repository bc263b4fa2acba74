"""The two shipped webhook demos through a real hub, with their secrets set over the
owner API: ``public_github_push`` (``X-Hub-Signature-256``) and
``public_stripe_event`` (``Stripe-Signature: t=…,v1=…`` over ``"t.body"``, at most
five minutes old). Good deliveries pass; tampered, missing, malformed and stale
signatures get a 401 with a message saying which — with the status a webhook
sender sees (``Accept: */*``) — and nothing sensitive reaches history or the log."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, running_hub

API = "/api/webjobs"
GITHUB_SECRET = "It's a Secret to Everybody"   # GitHub's documented example
STRIPE_SECRET = "whsec_test_9f8e7d6c5b4a"
PUSH = json.dumps({"ref": "refs/heads/main", "commits": [{"id": "a1"}, {"id": "b2"}],
                   "repository": {"full_name": "octo/demo"}}).encode()
EVENT = json.dumps({"id": "evt_123", "type": "payment_intent.succeeded",
                    "data": {"object": {"receipt_email": "ann@example.org"}}}).encode()
PLAIN = {"Accept": "application/json"}
WEBHOOK = {"Accept": "*/*", "Content-Type": "application/json"}  # as the senders send


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("demos"), jobs={}) as process:
        with process.client(headers=AUTH) as c:
            for name, value in (("github_push", GITHUB_SECRET),
                                ("stripe_signing", STRIPE_SECRET)):
                assert c.put(f"{API}/secrets/{name}", json={"value": value}).status_code == 200
        yield process
    assert GITHUB_SECRET not in process.log_text() and STRIPE_SECRET not in process.log_text()


@pytest.fixture
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client() as c:
        yield c


def github_signature(body: bytes, secret: str = GITHUB_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def stripe_signature(body: bytes, at: int | None = None, secret: str = STRIPE_SECRET) -> str:
    at = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={at},v1={mac}"


def deliver(client: httpx.Client, job: str, body: bytes, headers: dict[str, str],
            plain: bool = True) -> httpx.Response:
    return client.post(f"{API}/{job}", content=body,
                       headers={**(PLAIN if plain else WEBHOOK), "Content-Type":
                                "application/json", **headers})


def refused(answer: httpx.Response, says: str) -> None:
    assert answer.status_code == 401, answer.text
    assert says in answer.json()["error"], answer.text


# -- GitHub-style --------------------------------------------------------------------

def test_github_good_signature(client: httpx.Client) -> None:
    answer = deliver(client, "public_github_push", PUSH, {
        "X-Hub-Signature-256": github_signature(PUSH), "X-GitHub-Event": "push"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"ok": True, "event": "push", "ref": "refs/heads/main", "commits": 2}


def test_github_published_example() -> None:
    # GitHub's documentation: this secret and payload give this signature.
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert github_signature(b"Hello, World!") == expected


@pytest.mark.parametrize(("body", "headers", "says"), [
    (PUSH + b" ", {"X-Hub-Signature-256": github_signature(PUSH)}, "does not match"),
    (PUSH, {"X-Hub-Signature-256": github_signature(PUSH, "another secret")}, "does not match"),
    (PUSH, {"X-Hub-Signature-256": github_signature(PUSH)[:-2]}, "does not match"),
    (PUSH, {}, "Missing X-Hub-Signature-256"),
])
def test_github_refusals(client: httpx.Client, body: bytes, headers: dict[str, str],
                         says: str) -> None:
    refused(deliver(client, "public_github_push", body, headers), says)


def test_github_sender_sees_the_401_with_accept_any(client: httpx.Client) -> None:
    answer = deliver(client, "public_github_push", PUSH, {}, plain=False)
    assert answer.status_code == 401 and "Missing X-Hub-Signature-256" in answer.text
    good = deliver(client, "public_github_push", PUSH,
                   {"X-Hub-Signature-256": github_signature(PUSH)}, plain=False)
    assert good.status_code == 200


# -- Stripe-style --------------------------------------------------------------------

def test_stripe_good_signature(client: httpx.Client) -> None:
    answer = deliver(client, "public_stripe_event", EVENT,
                     {"Stripe-Signature": stripe_signature(EVENT)})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"received": True, "id": "evt_123",
                             "type": "payment_intent.succeeded"}


def test_stripe_accepts_any_matching_v1(client: httpx.Client) -> None:
    header = stripe_signature(EVENT)
    rolled = f"{header.split(',')[0]},v1={'0' * 64},{header.split(',')[1]},v0=ignored"
    answer = deliver(client, "public_stripe_event", EVENT, {"Stripe-Signature": rolled})
    assert answer.status_code == 200, answer.text


def _stripe_cases() -> list[tuple[bytes, dict[str, str], str]]:
    now = int(time.time())
    return [
        (EVENT.replace(b"evt_123", b"evt_124"), {"Stripe-Signature": stripe_signature(EVENT)},
         "no v1 signature matches"),
        (EVENT, {"Stripe-Signature": stripe_signature(EVENT, secret="whsec_wrong_one")},
         "no v1 signature matches"),
        # well past the 300 s tolerance: a second may pass before the job reads its clock
        (EVENT, {"Stripe-Signature": stripe_signature(EVENT, now - 400)}, "Stale"),
        (EVENT, {"Stripe-Signature": stripe_signature(EVENT, now + 400)}, "in the future"),
        (EVENT, {"Stripe-Signature": "v1=abc"}, "Malformed"),
        (EVENT, {"Stripe-Signature": "t=abc,v1=abc"}, "Malformed"),
        (EVENT, {}, "Missing Stripe-Signature"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_stripe_refusals(client: httpx.Client, case: int) -> None:
    body, headers, says = _stripe_cases()[case]
    refused(deliver(client, "public_stripe_event", body, headers), says)


def test_stripe_sender_sees_the_401_with_accept_any(client: httpx.Client) -> None:
    stale = stripe_signature(EVENT, int(time.time()) - 600)
    answer = deliver(client, "public_stripe_event", EVENT, {"Stripe-Signature": stale},
                     plain=False)
    assert answer.status_code == 401 and "Stale" in answer.text


def test_demos_record_nothing_sensitive(client: httpx.Client) -> None:
    deliver(client, "public_stripe_event", EVENT, {"Stripe-Signature": stripe_signature(EVENT)})
    deliver(client, "public_github_push", PUSH, {"X-Hub-Signature-256": "sha256=00"})
    for job in ("public_stripe_event", "public_github_push"):
        runs = client.get(f"{API}/history", params={"job": job}, headers=AUTH).json()["runs"]
        assert runs
        for run in runs:
            record: dict[str, Any] = client.get(f"{API}/{run['jobId']}/output",
                                                headers=AUTH).json()
            kept = json.dumps({k: record[k] for k in ("logs", "result", "message")})
            for sensitive in (GITHUB_SECRET, STRIPE_SECRET, "receipt_email", "ann@example"):
                assert sensitive not in kept, (job, sensitive, kept)
            assert not re.search(r"[0-9a-f]{64}", kept), kept  # no signature, given or made


def test_a_client_that_asks_for_ndjson_reads_the_status_in_the_metadata(
        client: httpx.Client) -> None:
    from shared.ndjson import MetaData, read_stream

    answer = client.post(f"{API}/public_github_push", content=PUSH, headers={
        "Accept": "application/x-ndjson", "Content-Type": "application/json"})
    assert answer.status_code == 200
    meta, _ = list(read_stream([answer.content]))
    assert isinstance(meta, MetaData) and meta.status == 401
