"""No caller holds the hub: the largest body of each kind a caller may send without
credentials — a form of one repeated name, a wide JSON array, JSON nested as deep as
allowed in long chains, a multipart form of thousands of parts — three at once, while a
watcher asks ``/health`` every 100 ms: every answer comes within a second. And what
history keeps of such a request is bounded like a result.

The parsers' costs at three sizes are in tests/hub/test_caller_input_cost.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, running_hub

MB = 1024 * 1024
JOBS = {"public_sink": "return { keys: Object.keys(params).length }"}


@pytest.fixture(scope="module")
def sink_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("bodies"), {"WEBJOB_MAX_BODY_MB": "10"},
                     jobs=JOBS) as process:
        yield process


def _form(size: int) -> tuple[bytes, str]:
    return b"a=&" * (size // 3), "application/x-www-form-urlencoded"


def _wide_json(size: int) -> tuple[bytes, str]:
    return b'{"who":[' + b"{}," * (size // 3 - 4) + b"{}]}", "application/json"


def _chained_json(size: int) -> tuple[bytes, str]:
    chain = b"[" * 60 + b"1" + b"]" * 60 + b","
    return b'{"c":[' + chain * (size // len(chain) - 1) + b"1]}", "application/json"


def _multipart(size: int) -> tuple[bytes, str]:
    part = b'--XyZ\r\nContent-Disposition: form-data; name="f"\r\n\r\nv\r\n'
    return part * (size // len(part)) + b"--XyZ--\r\n", "multipart/form-data; boundary=XyZ"


def _numbers(size: int) -> tuple[bytes, str]:
    return b"[" + b"1," * (size // 2 - 1) + b"1]", "application/json"


def _multipart_slow(size: int) -> tuple[bytes, str]:
    """One file part whose every line almost ends it: python-multipart's slow path."""
    head = b'--a\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\n'
    return head + b"\r\n--aX" * ((size - 200) // 6) + b"\r\n--a--\r\n", \
        "multipart/form-data; boundary=a"


BODIES: dict[str, Callable[[int], tuple[bytes, str]]] = {
    "form": _form, "wide-json": _wide_json, "chained-json": _chained_json,
    "numbers-json": _numbers, "multipart": _multipart, "multipart-slow": _multipart_slow,
}


class Watcher:
    """Asks /health every 100 ms; records how long each answer took."""

    def __init__(self, url: str) -> None:
        self.url, self.waits = url, []  # type: tuple[str, list[float]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        with httpx.Client(timeout=30) as client:
            while not self._stop.is_set():
                started = time.monotonic()
                client.get(f"{self.url}/api/webjobs/health")
                self.waits.append(time.monotonic() - started)
                self._stop.wait(0.1)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(35)


def _post(hub: HubProcess, body: bytes, ctype: str, answers: list[int]) -> None:
    with httpx.Client(timeout=60) as client:
        resp = client.post(f"{hub.url}/api/webjobs/public_sink?raw=1", content=body,
                           headers={"Content-Type": ctype})
    answers.append(resp.status_code)


# Chains 60 deep cost the job's worker seconds to parse (its own time, not the hub's): 4 MB
# of them keep the test short; what the hub spends is the same at any size
# (test_caller_input_cost.py).
SIZES = {"chained-json": 4 * MB}


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_three_maximal_bodies_leave_health_answering(sink_hub: HubProcess, kind: str) -> None:
    body, ctype = BODIES[kind](SIZES.get(kind, 10 * MB) - 1024)
    answers: list[int] = []
    senders = [threading.Thread(target=_post, args=(sink_hub, body, ctype, answers))
               for _ in range(3)]
    with Watcher(sink_hub.url) as watcher:
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(60)
    # Answered, each: taken, refused (HUB-001, 413), or the job out of its own memory
    # (JOB-003: 80,000 arrays 60 deep are a lot of heap).
    assert len(answers) == 3, answers
    assert watcher.waits and max(watcher.waits) < 1.0, (kind, sorted(watcher.waits)[-5:])


def _history_bytes(home: Path) -> int:
    return sum(f.stat().st_size for f in home.glob("history.db*"))


def test_history_keeps_a_bounded_part_of_big_parameters(sink_hub: HubProcess) -> None:
    body, ctype = b'{"who":"' + b"a" * (10 * MB - 2048) + b'"}', "application/json"
    with httpx.Client(timeout=60) as client:
        client.post(f"{sink_hub.url}/api/webjobs/public_sink?raw=1", content=b"{}",
                    headers={"Content-Type": ctype})
        before = _history_bytes(sink_hub.home)
        for _ in range(5):
            resp = client.post(f"{sink_hub.url}/api/webjobs/public_sink?raw=1", content=body,
                               headers={"Content-Type": ctype})
            assert resp.json() == {"keys": 1}  # the job still gets every parameter
        grown = _history_bytes(sink_hub.home) - before
        runs = client.get(f"{sink_hub.url}/api/webjobs/history?limit=1", headers=AUTH).json()
        job_id = runs["runs"][0]["jobId"]
        output = client.get(f"{sink_hub.url}/api/webjobs/{job_id}/output", headers=AUTH).json()
    assert grown < 5 * MB, grown  # 73 MB before: now a 64 KB copy and its search index a run
    params = output["params"]
    assert set(params) == {"…truncated", "kept"} and "64 KB" in params["…truncated"]
    assert list(params["kept"]) == ["who"]
    assert 60_000 < len(params["kept"]["who"]) <= 64 * 1024
