"""No credential in a request's span: FastAPI's instrumentation writes the query into
``http.url`` (and ``url.full``, ``url.query``); the hub's hook shows every
credential-like query value as ``***``, as the access log does."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, unquote, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hub.telemetry.span_query_mask import mask_request_span
from tests.hub.test_traces import TracedHub, local_server, traced_hub

__all__ = ["local_server", "traced_hub"]  # the fixtures, shared

SECRET_NAMES = st.sampled_from(["token", "api_key", "password", "sig", "session", "Auth"])
PLAIN_NAMES = st.sampled_from(["n", "page", "q"])
# Only a credential's value holds Q, V or W: none of them may be left in a span.
SECRET_VALUES = st.text(st.sampled_from("QVW&=#+ %?\u00e9"), min_size=1, max_size=12)
PLAIN_VALUES = st.text(st.sampled_from("abc&=+ %"), max_size=8)
PAIRS = st.lists(st.one_of(st.tuples(SECRET_NAMES, SECRET_VALUES),
                           st.tuples(PLAIN_NAMES, PLAIN_VALUES)), max_size=5)


def _hooked_attributes(query: str) -> dict[str, object]:
    """A request span's attributes as the instrumentation writes them (the query raw in
    ``url.query``, decoded in the URLs), once the hook has seen them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    url = f"http://127.0.0.1:8000/api/webjobs/x?{unquote(query)}"
    span = provider.get_tracer("test").start_span("GET /api/webjobs/{name}", attributes={
        "http.url": url, "url.full": url, "http.target": "/api/webjobs/x", "url.query": query})
    mask_request_span(span, {"type": "http", "query_string": query.encode()})
    span.end()
    (finished,) = exporter.get_finished_spans()
    return dict(finished.attributes or {})


@given(PAIRS)
def test_no_credential_value_is_left_in_a_span(pairs: list[tuple[str, str]]) -> None:
    query = urlencode(pairs, quote_via=quote)
    attributes = _hooked_attributes(query)
    shown = " ".join(str(value) for value in attributes.values())
    assert not set("QVW") & set(shown), attributes
    assert attributes["http.target"] == "/api/webjobs/x"
    secret = {"token", "api_key", "password", "sig", "session", "Auth"}
    kept = [(k, "***" if k in secret else v) for k, v in pairs]
    assert parse_qsl(str(attributes["url.query"]), keep_blank_values=True) == kept


def test_a_query_without_credentials_is_left_as_the_instrumentation_wrote_it() -> None:
    attributes = _hooked_attributes("n=2&page=a%26b")
    assert attributes["url.query"] == "n=2&page=a%26b"
    assert attributes["http.url"] == "http://127.0.0.1:8000/api/webjobs/x?n=2&page=a&b"


def test_a_credential_the_decoding_split_is_masked_whole() -> None:
    attributes = _hooked_attributes("token=abc%26def%3Dghi&n=1")
    assert attributes["http.url"] == "http://127.0.0.1:8000/api/webjobs/x?token=***&n=1"
    assert "def" not in str(attributes) and "ghi" not in str(attributes)


# Expected: the loopback port's start-up warning (tests only), and asyncio's word on a
# worker process the pool reaped itself as the in-process hub stops.
@pytest.mark.expected_warning
def test_a_served_requests_span_shows_no_credential(traced_hub: TracedHub) -> None:
    asked = {"token": "tok-SECRET1", "api_key": "key-SECRET2", "n": "2"}
    answer = traced_hub.call(lambda c: c.get("/api/webjobs/healthz", params=asked))
    assert answer.status_code == 200
    spans = traced_hub.spans.finished()
    request = next(s for s in spans if s.parent is None)
    attributes = dict(request.attributes or {})
    assert str(attributes["http.url"]).endswith("/api/webjobs/healthz?token=***&api_key=***&n=2")
    for span in spans:
        assert "SECRET" not in repr(dict(span.attributes or {})), span.name
