"""What an operator's tools read from the hub: Prometheus metrics (always on, at
``GET /metrics``) and OpenTelemetry traces (only when ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set). The run path calls one small interface, :class:`hub.telemetry.hooks.RunTelemetry`;
without traces its span half costs nothing."""
