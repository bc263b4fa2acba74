"""OpenTelemetry traces, set up only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (or a
test hands in an exporter): a tracer provider of the app's own (never the global
one, so several apps in one process keep their spans apart), FastAPI's request span,
a ``webjob.run`` span per run and a child span per ``db.exec`` and ``http()`` call.

A bridge call is answered on the engine's reader of the worker, not in the request's
context, so a call's span names its run's span as parent explicitly (kept by
``hub.telemetry.hooks.RunTelemetry``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

if TYPE_CHECKING:  # the SDK is imported only when traces are on
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["RunTracer", "tracer_from_env"]

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"


class RunTracer:
    """Spans for runs and their calls, from one app's provider."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("webjobs.hub")

    def start_run(self, job: str, source: str, caller_kind: str, node: str,
                  run_id: str) -> Span:
        """The run's span, a child of the request's span when there is one."""
        return self.tracer.start_span("webjob.run", kind=SpanKind.INTERNAL, attributes={
            "webjob.job": job, "webjob.source": source, "webjob.caller.kind": caller_kind,
            "webjob.node": node, "webjob.run_id": run_id})

    @staticmethod
    def end_run(span: Span, outcome: str, error_code: str | None) -> None:
        span.set_attribute("webjob.outcome", outcome)
        if error_code is not None:
            span.set_attribute("webjob.error.code", error_code)
            span.set_status(Status(StatusCode.ERROR, error_code))
        span.end()

    def start_call(self, call: str, parent: Span | None) -> Span | None:
        """A call's span under its run's ``parent``; none for a run without a span."""
        if parent is None:
            return None
        return self.tracer.start_span(call, context=trace.set_span_in_context(parent),
                                      kind=SpanKind.CLIENT, attributes={"webjob.call": call})

    @staticmethod
    def end_call(span: Span, error: str | None) -> None:
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end()

    def shutdown(self) -> None:
        self.provider.shutdown()


def tracer_from_env(node: str, exporter: SpanExporter | None = None,
                    env: Mapping[str, str] | None = None) -> RunTracer | None:
    """A tracer when ``exporter`` is given (spans go there at once) or the endpoint
    variable is set (the OTLP/HTTP exporter reads the ``OTEL_*`` variables itself);
    None otherwise: nothing of OpenTelemetry is set up."""
    environ = os.environ if env is None else env
    if exporter is None and not environ.get(ENDPOINT_VARIABLE):
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME", "webjobs-hub"),
                                "service.instance.id": node})
    provider = TracerProvider(resource=resource)
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return RunTracer(provider)
