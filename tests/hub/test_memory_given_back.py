"""The hub gives back the memory of large results once they are answered.

A real hub process; its resident size (psutil) is compared before and after a
burst of large results at once. Each result once stayed alive in a reference
cycle until the collector's rare full pass, and later the last result of every
worker stayed in the locals of the loop that reads that worker's messages, so
the hub kept a few hundred MB for good."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
import psutil
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.api.memory import TRIM_FROM_BYTES, GiveBackMemory
from hub.services.memory import HeapTrim
from tests.hub.conftest import HubProcess

BIG_JOB = ("/*\nMemory: 1024\n*/\n"
           "return response.text('x'.repeat(Number(params.mb) * 1024 * 1024))")
RESULT_MB = 40
AT_ONCE = 4
# Well below what the results weigh together (160 MB): a few of them kept alive
# fail it, the allocator's ordinary slack does not.
ALLOWED_GROWTH_MB = 120
SETTLE_S = 3.0  # how long the hub gets to give the memory back


def _rss_mb(hub: HubProcess) -> int:
    return int(psutil.Process(hub.proc.pid).memory_info().rss // (1024 * 1024))


async def _large_results(hub: HubProcess, count: int, mb: int) -> list[int]:
    """``count`` runs at once, each answering ``mb`` MB; the sizes received."""
    async with httpx.AsyncClient(base_url=hub.url, timeout=60) as client:
        async def one() -> int:
            answer = await client.get("/api/webjobs/public_big", params={"mb": mb},
                                      headers={"Accept": "application/json"})
            assert answer.status_code == 200, answer.text[:300]
            return len(answer.content)
        return await asyncio.gather(*(one() for _ in range(count)))


def _rss_after_settling(hub: HubProcess, target_mb: int) -> int:
    """The hub's RSS once it is at most ``target_mb``, or when ``SETTLE_S`` is up.
    Polled: giving pages back to the system sends no event to wait for."""
    deadline = time.monotonic() + SETTLE_S
    rss = _rss_mb(hub)
    while rss > target_mb and time.monotonic() < deadline:
        time.sleep(0.1)
        rss = _rss_mb(hub)
    return rss


def test_memory_of_large_results_at_once_is_given_back(
        start_hub: Callable[..., HubProcess]) -> None:
    hub = start_hub(jobs={"public_big": BIG_JOB})
    asyncio.run(_large_results(hub, 1, 1))  # every code path of a run loaded once
    before = _rss_mb(hub)
    sizes = asyncio.run(_large_results(hub, AT_ONCE, RESULT_MB))
    assert sizes == [RESULT_MB * 1024 * 1024] * AT_ONCE
    after = _rss_after_settling(hub, before + ALLOWED_GROWTH_MB)
    assert after <= before + ALLOWED_GROWTH_MB, f"RSS {before} MB before, {after} MB after"


async def _answer_of(size: int, scope: Scope, receive: Receive, send: Send) -> None:
    del scope, receive
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"x" * size})


async def _answered(app: ASGIApp, size: int) -> None:
    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    async def send(message: Message) -> None:
        del message

    await app({"type": "http"}, receive, send)


def test_large_answers_at_once_trim_once_and_small_ones_never() -> None:
    """What a trim does is the allocator's business (measured above and in the
    report); here: when the middleware asks for one."""
    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        trimmed = asyncio.Event()
        pads: list[int] = []

        def recording_trim(pad: int) -> int:  # runs in a thread, as malloc_trim would
            pads.append(pad)
            loop.call_soon_threadsafe(trimmed.set)
            return 1

        sizes = iter([TRIM_FROM_BYTES - 1, TRIM_FROM_BYTES, TRIM_FROM_BYTES, TRIM_FROM_BYTES])
        give = GiveBackMemory(lambda s, r, snd: _answer_of(next(sizes), s, r, snd),
                              heap=HeapTrim(recording_trim))
        await _answered(give, 0)
        assert not give.heap.pending  # a small answer schedules nothing
        await asyncio.gather(*(_answered(give, 0) for _ in range(3)))
        await asyncio.wait_for(trimmed.wait(), 5)
        await loop.shutdown_default_executor()  # any further trim has run by now
        return pads

    assert asyncio.run(scenario()) == [0]
