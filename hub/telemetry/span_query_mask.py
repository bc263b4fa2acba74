"""Request spans without credentials: FastAPI's instrumentation writes the request's
query into ``http.url`` (``url.full``, ``url.query``) and hides only a few AWS- and
Google-style signature names; :func:`mask_request_span`, its ``server_request_hook``,
rewrites those attributes with every credential-like query value as ``***``, by the
rule the access log follows (:func:`hub.logsetup.mask_query`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from opentelemetry.trace import Span

from hub.logsetup import mask_query

__all__ = ["mask_request_span", "masked_attribute"]

# Attributes that end in the request's query (``url.query`` is the query itself).
_URL_ATTRIBUTES = ("http.url", "url.full", "http.target")
_QUERY_ATTRIBUTE = "url.query"


def _raw_query(scope: dict[str, Any]) -> str:
    raw = scope.get("query_string") or b""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def masked_attribute(value: str, query: str, masked: str) -> str:
    """``value`` (a URL or target) with its ``query`` (raw, or decoded as the
    instrumentation writes it) as ``masked``; a value that ends in neither loses
    everything from its first ``?`` (nothing of an unknown shape is kept)."""
    for shown in (query, unquote(query)):
        if value.endswith("?" + shown):
            return value[:len(value) - len(shown)] + masked
    return value.partition("?")[0] if "?" in value else value


def mask_request_span(span: Span, scope: dict[str, Any]) -> None:
    """The request span's URL attributes with credential-like query values masked
    (a hook of FastAPI's instrumentation; a span that records nothing is left be)."""
    if not span.is_recording():
        return
    query = _raw_query(scope)
    masked = mask_query("?" + query)[1:] if query else query
    if masked == query:
        return
    attributes = getattr(span, "attributes", None) or {}
    for name in _URL_ATTRIBUTES:
        value = attributes.get(name)
        if isinstance(value, str):
            span.set_attribute(name, masked_attribute(value, query, masked))
    if isinstance(attributes.get(_QUERY_ATTRIBUTE), str):
        span.set_attribute(_QUERY_ATTRIBUTE, masked)
