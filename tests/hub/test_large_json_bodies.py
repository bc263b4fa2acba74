"""A JSON body over 64 KB is parsed in a process of its own and reaches the job as the
same value a small one would: engine flags taken out, the query merged in, lone
surrogates as U+FFFD, and refused as a small one is (HUB-001) when it is not JSON the
hub takes. History keeps a bounded preview."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, running_hub

JOBS = {"public_params": "return params"}
BIG = "x" * 100_000  # a body well over the 64 KB parsed in the hub


@pytest.fixture(scope="module")
def params_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("large-json"), jobs=JOBS) as process:
        yield process


def _post(hub: HubProcess, body: bytes, query: str = "?raw=1") -> httpx.Response:
    return httpx.post(f"{hub.url}/api/webjobs/public_params{query}", content=body,
                      headers={"Content-Type": "application/json"}, timeout=60)


def test_the_job_gets_the_same_value(params_hub: HubProcess) -> None:
    value = {"big": BIG, "n": [1, 2.5, -3, 10**20], "s": "é ✓", "nested": {"a": [None, True]}}
    resp = _post(params_hub, json.dumps(value).encode())
    assert resp.status_code == 200 and resp.json() == value


def test_flags_go_and_the_query_is_merged(params_hub: HubProcess) -> None:
    body = json.dumps({"big": BIG, "raw": 1, "who": "body"}).encode()
    resp = _post(params_hub, body, "?who=query&extra=q")
    assert resp.json() == {"big": BIG, "who": "body", "extra": "q"}  # raw=1: plain JSON


def test_a_lone_surrogate_arrives_as_a_replacement(params_hub: HubProcess) -> None:
    body = b'{"big": "' + BIG.encode() + b'", "odd": "\\ud800x"}'
    assert _post(params_hub, body).json()["odd"] == "\ufffdx"


@pytest.mark.parametrize(("body", "words"), [
    (b'{"big": "' + BIG.encode() + b'"', "is not valid JSON"),
    (b"[" * 70 + b'"' + BIG.encode() + b'"' + b"]" * 70, "nests deeper than 64 levels"),
    (b'{"big": "' + BIG.encode() + b'", "n": NaN}', "is not valid JSON"),
])
def test_what_is_refused_small_is_refused_large(params_hub: HubProcess, body: bytes,
                                                words: str) -> None:
    resp = _post(params_hub, body)
    assert resp.status_code == 400, resp.text
    assert resp.json()["code"] == "HUB-001" and words in resp.json()["error"]


def test_history_shows_a_bounded_preview(params_hub: HubProcess) -> None:
    body = json.dumps({"token": "s3cr3t", "big": "y" * 200_000}).encode()
    assert _post(params_hub, body).status_code == 200
    with httpx.Client(base_url=params_hub.url, headers=AUTH, timeout=30) as client:
        runs = client.get("/api/webjobs/history?limit=1").json()["runs"]
        params = client.get(f"/api/webjobs/{runs[0]['jobId']}/output").json()["params"]
    assert params["kept"]["token"] == "***" and len(params["kept"]["big"]) < 64 * 1024
    assert "s3cr3t" not in json.dumps(params)


def test_a_large_multipart_form_reaches_the_job(params_hub: HubProcess) -> None:
    part = b'--XyZ\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n'
    body = (part % (b"big", BIG.encode()) + part % (b"who", b"ann") + part % (b"raw", b"1")
            + b'--XyZ\r\nContent-Disposition: form-data; name="f"; filename="x.txt"\r\n\r\n'
            b"file\r\n--XyZ--\r\n")
    resp = httpx.post(f"{params_hub.url}/api/webjobs/public_params", content=body, timeout=60,
                      headers={"Content-Type": "multipart/form-data; boundary=XyZ"})
    assert resp.json() == {"big": BIG, "who": "ann"}  # raw=1 taken out, the file left out


@pytest.mark.parametrize("size", [10, 100_000])
def test_a_gzip_body_labelled_json_is_refused_not_a_fault(params_hub: HubProcess,
                                                          size: int) -> None:
    """Bytes that are not text at all (NULs at the start, then no encoding reads them)."""
    resp = _post(params_hub, b"\x1f\x8b\x08\x00" + b"\xff" * size)
    assert resp.status_code == 400 and resp.json()["code"] == "HUB-001", resp.text[:200]


def test_large_bodies_past_the_parsers_queue_are_asked_to_come_back() -> None:
    """At most MAX_WAITING large bodies are parsed or waiting at once on a node; the next
    is SYS-429, not one more body held in memory in a queue."""
    import asyncio

    from hub.services import json_bodies
    from shared.errors import TooManyRequests

    json_bodies._waiting = json_bodies.MAX_WAITING
    try:
        with pytest.raises(TooManyRequests):
            asyncio.run(json_bodies.params_off_process(b"[1]", {}, {}))
    finally:
        json_bodies._waiting = 0


def test_the_parser_processes_end_with_the_hub() -> None:
    """A hostile-input pass found them alive after the hub had stopped."""
    import asyncio

    from hub.services import json_bodies

    body = b'{"who":"' + b"a" * (json_bodies.OFF_LOOP_BYTES + 10) + b'"}'
    asyncio.run(json_bodies.params_off_process(body, {}, {}))
    pool = json_bodies._pool
    assert pool is not None
    children = list(pool._processes.values())
    assert children and all(child.is_alive() for child in children)
    json_bodies.close_parsers()
    assert json_bodies._pool is None and not any(child.is_alive() for child in children)
