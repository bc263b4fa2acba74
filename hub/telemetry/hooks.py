"""The one interface the hub's run path, bridge, scheduler and limits report to.

``RunTelemetry(None, None)`` (``NO_TELEMETRY``) does nothing; the app gives the runner
one with its Prometheus metrics, and with a tracer when traces are on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry.trace import Span

from hub.abuse import SignInAttempt
from hub.engine.model import BridgeHost, RunRequest, RunResult, RunState
from hub.limiting import CarryingHit, RequestLimit, SignInGuard, carried_hit
from hub.store.limits_store import Step
from hub.telemetry.prometheus import HubMetrics
from hub.telemetry.traces import RunTracer
from shared.errors import TooManyRequests
from shared.outcomes import Outcome

__all__ = ["NO_TELEMETRY", "RunTelemetry", "RunWatch"]

WATCHED_CALLS = frozenset({"db.exec", "http"})


class RunWatch:
    """One run being watched: ``started()`` once a worker has it, ``ended(result)`` once
    its result is known; a run that raises instead (refused by a full queue, cancelled)
    is counted as it leaves."""

    def __init__(self, telemetry: RunTelemetry, req: RunRequest, caller_kind: str) -> None:
        self.telemetry = telemetry
        self.req = req
        self.result: RunResult | None = None
        tracer = telemetry.tracer
        if tracer is not None:
            telemetry.run_spans[req.ref] = tracer.start_run(
                req.job_name, req.origin, caller_kind, telemetry.node, req.job_id)

    def started(self) -> None:
        """A worker has the run: its wait in the queue is over."""
        metrics = self.telemetry.metrics
        if metrics is not None:
            metrics.queue_wait.observe(time.monotonic() - self.req.created)

    def ended(self, result: RunResult) -> None:
        self.result = result

    def close(self, failure: BaseException | None) -> None:
        result = self.result
        code = result.error.code if result is not None and result.error is not None else None
        outcome: str
        if result is not None:
            outcome = Outcome.SUCCESS if result.ok else Outcome.FAILED
        elif isinstance(failure, TooManyRequests):
            outcome, code = "refused", failure.code
        else:
            outcome, code = Outcome.INTERRUPTED, type(failure).__name__
        metrics = self.telemetry.metrics
        if metrics is not None:
            seconds = None if result is None else result.runtime_ms / 1000
            metrics.run_ended(self.req.job_name, self.req.origin, str(outcome), seconds)
            if outcome == "refused":
                metrics.refusals.labels("queue").inc()
        span = self.telemetry.run_spans.pop(self.req.ref, None)
        if span is not None:
            RunTracer.end_run(span, str(outcome), code)


class RunTelemetry:
    def __init__(self, metrics: HubMetrics | None, tracer: RunTracer | None,
                 node: str = "") -> None:
        self.metrics = metrics
        self.tracer = tracer
        self.node = node
        # Each watched run's span (traces on), by the run's ref: its calls' spans are
        # its children, though they are answered outside the request's context.
        self.run_spans: dict[str, Span] = {}

    @contextmanager
    def watch(self, req: RunRequest, caller_kind: str) -> Iterator[RunWatch]:
        watch = RunWatch(self, req, caller_kind)
        try:
            yield watch
        except BaseException as exc:
            watch.close(exc)
            raise
        watch.close(None)

    def bridge(self, inner: BridgeHost) -> BridgeHost:
        return _WatchedBridge(inner, self)

    def schedule_fired(self, occurrence: float) -> None:
        if self.metrics is not None:
            self.metrics.lateness.observe(max(0.0, time.time() - occurrence))

    def schedule_missed(self, count: int) -> None:
        if self.metrics is not None:
            self.metrics.missed.inc(count)

    def refused(self, limit: str) -> None:
        if self.metrics is not None:
            self.metrics.refusals.labels(limit).inc()

    def request_limit(self, inner: RequestLimit, limit: str) -> RequestLimit:
        return _CountedLimit(inner, self, limit)

    def sign_in_guard(self, inner: SignInGuard) -> SignInGuard:
        return _CountedSignIn(inner, self)


NO_TELEMETRY = RunTelemetry(None, None)


class _WatchedBridge:
    """The hub's bridge, each ``db.exec`` and ``http()`` call counted, timed and (with
    traces on) a span under its run's."""

    def __init__(self, inner: BridgeHost, telemetry: RunTelemetry) -> None:
        self.inner = inner
        self.telemetry = telemetry

    async def call(self, op: str, args: Any, run: RunRequest, state: RunState) -> Any:
        if op not in WATCHED_CALLS:  # refused by the bridge; a job's made-up name is no label
            return await self.inner.call(op, args, run, state)
        tracer = self.telemetry.tracer
        span = (None if tracer is None
                else tracer.start_call(op, self.telemetry.run_spans.get(run.ref)))
        started = time.monotonic()
        error: str | None = None
        try:
            return await self.inner.call(op, args, run, state)
        except BaseException as exc:
            error = getattr(exc, "code", None) or type(exc).__name__
            raise
        finally:
            if self.telemetry.metrics is not None:
                self.telemetry.metrics.call_ended(op, error is None, time.monotonic() - started)
            if span is not None:
                RunTracer.end_call(span, error)


class _CountedLimit:
    def __init__(self, inner: RequestLimit, telemetry: RunTelemetry, limit: str) -> None:
        self.inner = inner
        self.telemetry = telemetry
        self.limit = limit

    async def admit(self, key: str) -> None:
        try:
            await self.inner.admit(key)
        except TooManyRequests:
            self.telemetry.refused(self.limit)
            raise

    def carried_hit(self, key: str) -> CarryingHit | None:
        """The inner limit's carried hit, its refusals counted (known ones at once, the
        database's as the hit settles)."""
        try:
            hit = carried_hit(self.inner, key)
        except TooManyRequests:
            self.telemetry.refused(self.limit)
            raise
        return None if hit is None else _CountedHit(hit, self.telemetry, self.limit)


class _CountedHit:
    def __init__(self, inner: CarryingHit, telemetry: RunTelemetry, limit: str) -> None:
        self.inner = inner
        self.telemetry = telemetry
        self.limit = limit

    def start(self, steps: Sequence[Step]) -> asyncio.Future[tuple[bool, float]]:
        return self.inner.start(steps)

    async def settle(self, writing: asyncio.Future[tuple[bool, float]]) -> bool:
        try:
            return await self.inner.settle(writing)
        except TooManyRequests:
            self.telemetry.refused(self.limit)
            raise


class _CountedSignIn:
    def __init__(self, inner: SignInGuard, telemetry: RunTelemetry) -> None:
        self.inner = inner
        self.telemetry = telemetry

    async def begin(self, name: str, address: str) -> SignInAttempt:
        try:
            return await self.inner.begin(name, address)
        except TooManyRequests:
            self.telemetry.refused("sign_in")
            raise

    async def passed(self, attempt: SignInAttempt) -> None:
        await self.inner.passed(attempt)

    async def take_back(self, attempt: SignInAttempt) -> None:
        await self.inner.take_back(attempt)
