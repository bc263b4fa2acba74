"""Traces: a hub app on a real uvicorn server (in this process, so the spans can be read
from OpenTelemetry's in-memory exporter) runs jobs; each run is a ``webjob.run`` span
under the request's, with a child span per db.exec and http() call."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import uvicorn
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hub.api.app import create_app
from hub.settings import Settings, load_settings
from hub.telemetry.traces import tracer_from_env
from tests.hub.conftest import AUTH, TOKEN, HubProcess, free_port
from tests.hub.test_prometheus import local_server

__all__ = ["local_server"]  # the loopback HTTP server fixture, shared

JSON = {**AUTH, "Accept": "application/json"}
JOBS = {
    "t_calls": "const rows = await db.exec('SELECT 2 AS two')\n"
               "const answer = await http(params.url)\nreturn { rows, status: answer.status }",
    "t_fail": "await db.exec('SELECT * FROM no_such_table')\nreturn 1",
}


class _Spans(InMemorySpanExporter):
    """Kept in memory; says when a request's span ended (the server ends it after the
    answer went out, so a client may read its answer first)."""

    def __init__(self) -> None:
        super().__init__()
        self.request_ended = threading.Event()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        done = super().export(spans)
        if any(span.parent is None for span in spans):
            self.request_ended.set()
        return done

    def finished(self) -> list[ReadableSpan]:
        assert self.request_ended.is_set(), "the request's span never ended"
        return list(self.get_finished_spans())


class _Server(uvicorn.Server):
    """Says when it listens (an event, not a poll)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


Calls = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]


@dataclass
class TracedHub:
    """A hub app whose spans go to ``spans``; ``call`` serves it on the main thread's
    event loop (the engine's worker processes need it) for one exchange."""

    settings: Settings
    spans: _Spans

    def call(self, calls: Calls) -> httpx.Response:
        return asyncio.run(self._served(calls))

    async def _served(self, calls: Calls) -> httpx.Response:
        app = create_app(self.settings, span_exporter=self.spans)
        port = free_port()
        server = _Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        serving = asyncio.create_task(server.serve())
        try:
            await asyncio.wait_for(server.listening.wait(), 30)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}",
                                         timeout=30) as client:
                answer = await calls(client)
            assert await asyncio.to_thread(self.spans.request_ended.wait, 30)
            return answer
        finally:
            server.should_exit = True
            await serving


@pytest.fixture
def traced_hub(tmp_path: Path, local_server: int) -> TracedHub:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name, code in JOBS.items():
        (jobs / f"{name}.job.js").write_text(code)
    settings = load_settings({"WEBHUB_HOME": str(tmp_path / "home"), "WEBJOB_JOBS_DIR": str(jobs),
                              "WEBHUB_SYSTEM_TOKEN": TOKEN, "WEBHUB_NODE": "trace-node",
                              "WEBJOB_MAX_CONCURRENT": "2",
                              "WEBJOB_HTTP_TEST_LOOPBACK_PORT": str(local_server)})
    return TracedHub(settings, _Spans())


def _one(spans: list[ReadableSpan], pick: Callable[[ReadableSpan], bool]) -> ReadableSpan:
    found = [s for s in spans if pick(s)]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


# Expected: the loopback port's start-up warning (tests only), and asyncio's word on a
# worker process the pool reaped itself as the in-process hub stops.
@pytest.mark.expected_warning
def test_a_run_is_a_span_with_its_calls_beneath(
        traced_hub: TracedHub, local_server: int) -> None:
    target = f"http://127.0.0.1:{local_server}/x"
    answer = traced_hub.call(lambda c: c.post("/api/webjobs/t_calls", headers=JSON,
                                              json={"url": target}))
    exporter = traced_hub.spans
    assert answer.json() == {"rows": [{"two": 2}], "status": 200}
    spans = exporter.finished()
    run = _one(spans, lambda s: s.name == "webjob.run")
    assert run.attributes is not None and dict(run.attributes).items() >= {
        "webjob.job": "t_calls", "webjob.source": "http", "webjob.caller.kind": "system",
        "webjob.node": "trace-node", "webjob.outcome": "success"}.items()
    assert run.context is not None and run.parent is not None
    request = _one(spans, lambda s: s.parent is None)
    assert request.context is not None and run.parent.span_id == request.context.span_id
    assert request.name.startswith("POST /api/webjobs/")
    for name in ("db.exec", "http"):
        call = _one(spans, lambda s, n=name: s.name == n)  # type: ignore[misc]
        assert call.parent is not None and call.parent.span_id == run.context.span_id
        assert call.context is not None and call.context.trace_id == run.context.trace_id
        assert call.status.is_ok


@pytest.mark.expected_warning
def test_a_failed_run_and_call_say_so(traced_hub: TracedHub) -> None:
    answer = traced_hub.call(lambda c: c.get("/api/webjobs/t_fail", headers=JSON))
    assert answer.status_code == 500
    exporter = traced_hub.spans
    spans = exporter.finished()
    run = _one(spans, lambda s: s.name == "webjob.run")
    assert run.attributes is not None and run.attributes["webjob.outcome"] == "failed"
    assert run.attributes["webjob.error.code"] == "JOB-001" and not run.status.is_ok
    call = _one(spans, lambda s: s.name == "db.exec")
    assert not call.status.is_ok and call.status.description == "JOB-001"


def test_without_the_endpoint_nothing_is_set_up() -> None:
    assert tracer_from_env("n", env={}) is None
    assert tracer_from_env("n", env={"OTEL_EXPORTER_OTLP_ENDPOINT": ""}) is None
    tracer = tracer_from_env("n", env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert tracer is not None
    tracer.shutdown()


RECEIVED: list[tuple[str, bytes]] = []  # the collector's posts: path, body


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP collector that keeps what it is sent."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        RECEIVED.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_endpoint_variable_sends_spans_over_otlp(
        start_hub: Callable[..., HubProcess]) -> None:
    collector = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=collector.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{collector.server_address[1]}"
        hub = start_hub({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                         "OTEL_SERVICE_NAME": "hub-under-test"}, JOBS)
        with hub.client() as c:
            assert c.get("/api/webjobs/t_fail", headers=JSON).status_code == 500
        hub.stop()  # the batch still held goes out as the hub stops
    finally:
        collector.shutdown()
        collector.server_close()
    sent = b"".join(body for path, body in RECEIVED if path == "/v1/traces")
    for expected in (b"webjob.run", b"db.exec", b"t_fail", b"hub-under-test", b"test-node"):
        assert expected in sent
