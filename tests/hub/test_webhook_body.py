"""``request.rawBody`` / ``request.rawBytes()`` through a real hub: the body exactly as
received (JSON, form, binary), and a GitHub-style webhook signature verified in a job
with ``crypto.hmac`` and ``crypto.timingSafeEqual``."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Iterator

import httpx
import pytest

from tests.hub.conftest import HubProcess, running_hub

SECRET = "It's a Secret to Everybody"  # GitHub's documented example secret

JOBS = {
    "public_raw": """const bytes = request.rawBytes()
return { rawBody: request.rawBody, length: bytes.length, isBuffer: Buffer.isBuffer(bytes),
  sha256: crypto.hash('sha256', bytes), textSha256: crypto.hash('sha256', request.rawBody),
  params, method: request.method, frozen: Object.isFrozen(request) }""",
    "public_hook": f"""const secret = {json.dumps(SECRET)}
const given = request.headers['x-hub-signature-256'] || ''
const expected = 'sha256=' + crypto.hmac('sha256', secret, request.rawBytes())
if (!crypto.timingSafeEqual(given, expected)) return response.json({{ verified: false }}, 401)
return {{ verified: true, expected, params }}""",
}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("webhook"), jobs=JOBS) as process:
        yield process


@pytest.fixture
def client(hub: HubProcess) -> Iterator[httpx.Client]:
    with hub.client(headers={"Accept": "application/json"}) as c:  # the plain answer
        yield c


def post_raw(client: httpx.Client, body: bytes, content_type: str) -> dict[str, object]:
    answer = client.post("/api/webjobs/public_raw", content=body,
                         headers={"Content-Type": content_type})
    assert answer.status_code == 200, answer.text
    data: dict[str, object] = answer.json()
    return data


def test_json_body_is_byte_exact(client: httpx.Client) -> None:
    body = '{ "name" :\t"Zoë ✓ 😀",\n\n  "n": 1.50 ,"esc":"\\u00e9"  }\r\n'.encode()
    got = post_raw(client, body, "application/json")
    assert got["rawBody"] == body.decode()
    assert got["sha256"] == got["textSha256"] == hashlib.sha256(body).hexdigest()
    assert got["length"] == len(body) and got["isBuffer"] is True
    assert got["params"] == {"name": "Zoë ✓ 😀", "n": 1.5, "esc": "é"}  # still parsed
    assert got["method"] == "POST" and got["frozen"] is True


def test_form_body_is_byte_exact(client: httpx.Client) -> None:
    body = b"a=1&b=caf%C3%A9+au+lait&b=two&empty=&odd=%2B%26"
    got = post_raw(client, body, "application/x-www-form-urlencoded")
    assert got["rawBody"] == body.decode()
    assert got["sha256"] == hashlib.sha256(body).hexdigest()
    assert got["params"] == {"a": "1", "b": ["café au lait", "two"], "empty": "", "odd": "+&"}


def test_binary_body_is_byte_exact(client: httpx.Client) -> None:
    body = bytes(range(256)) + os.urandom(50_000) + b"\xff\xfe\x00\xc3"
    got = post_raw(client, body, "application/octet-stream")
    assert got["sha256"] == hashlib.sha256(body).hexdigest()
    assert got["length"] == len(body)
    assert got["rawBody"] == body.decode("utf-8", errors="replace")
    assert got["params"] == {}


def test_get_has_an_empty_raw_body(client: httpx.Client) -> None:
    answer = client.get("/api/webjobs/public_raw", params={"x": "1"})
    assert answer.status_code == 200, answer.text
    got = answer.json()
    assert got["rawBody"] == "" and got["length"] == 0
    assert got["sha256"] == hashlib.sha256(b"").hexdigest()
    assert got["params"] == {"x": "1"}


def test_github_documented_signature_example(client: httpx.Client) -> None:
    # docs.github.com, "Validating webhook deliveries": this secret, "Hello, World!".
    signature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    answer = client.post("/api/webjobs/public_hook", content=b"Hello, World!",
                         headers={"Content-Type": "text/plain", "X-Hub-Signature-256": signature})
    assert answer.status_code == 200, answer.text
    assert answer.json()["expected"] == signature


def test_github_style_webhook_verified_against_the_raw_body(client: httpx.Client) -> None:
    body = json.dumps({"action": "opened", "title": "Ünïcode ✓"}, indent=3).encode() + b"\n"
    mac = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={mac}"}
    good = client.post("/api/webjobs/public_hook", content=body, headers=headers)
    assert good.status_code == 200, good.text
    assert good.json()["verified"] is True and good.json()["params"]["action"] == "opened"

    tampered = body.replace(b"opened", b"closed")
    bad = client.post("/api/webjobs/public_hook", content=tampered, headers=headers)
    assert bad.status_code == 401 and bad.json() == {"verified": False}

    short = client.post("/api/webjobs/public_hook", content=body,
                        headers={**headers, "X-Hub-Signature-256": "sha256=abc"})
    assert short.status_code == 401
    unsigned = client.post("/api/webjobs/public_hook", content=body,
                           headers={"Content-Type": "application/json"})
    assert unsigned.status_code == 401
