"""``GET /metrics`` (Prometheus' text format, at the root as Prometheus expects) and the
request spans of FastAPI's instrumentation when traces are on."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from hub.api.deps import PrometheusDep, ScrapeAccessDep, address_of, peer_is_trusted
from hub.telemetry.prometheus import CONTENT_TYPE
from hub.telemetry.traces import RunTracer

router = APIRouter()


# Headers a reverse proxy adds: from a peer the hub does not trust, they mean the peer's
# address (loopback, for a proxy on the same machine) is not the client's.
_FORWARDING = ("x-forwarded-for", "forwarded", "x-real-ip")


@router.get("/metrics", include_in_schema=False)
async def prometheus_metrics(request: Request, access: ScrapeAccessDep,
                             metrics: PrometheusDep) -> Response:
    access.check(address_of(request), request.headers, proxied=_through_unknown_proxy(request))
    body = await metrics.scrape_page()
    return Response(body, media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})


def _through_unknown_proxy(request: Request) -> bool:
    if not any(name in request.headers for name in _FORWARDING):
        return False
    return not peer_is_trusted(request)


class MarkTraced:
    """Tells hub.api.run_route.RunFirst to leave runs to the router while traces are on:
    the instrumentation names a request's span after the route the router picks."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope["fastapi.telemetry"] = True
        await self.app(scope, receive, send)


def instrument(app: FastAPI, tracer: RunTracer) -> None:
    """FastAPI's request span on ``app``, from the app's own provider (added last, so
    the instrumentation's middleware is outermost and sees every request)."""
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    from hub.telemetry.span_query_mask import mask_request_span

    app.add_middleware(MarkTraced)
    FastAPIInstrumentor.instrument_app(app, tracer_provider=tracer.provider,
                                       server_request_hook=mask_request_span)
