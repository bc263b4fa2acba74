"""Which requests a node passes on to the node of a debug session
(hub.api.forwarding): only a session's events and commands and tagged runs of a job,
spelled plainly, with a well-formed session id; the client's address appended to
X-Forwarded-For and the loop guard added. Any bytes in the path, query or cookie are
read without an error."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hub.api.forwarding import FORWARDED, _passed_on_headers, tagged_session
from hub.services.debugging import DebugSessions, session_node

SESSION = "dbg_0123456789abcdef." + b"node-b".hex()


def _scope(path: str, query: bytes = b"", cookie: str | None = None,
           raw: bytes | None = None, headers: list[tuple[bytes, bytes]] | None = None
           ) -> dict[str, Any]:
    all_headers = list(headers or [])
    if cookie is not None:
        all_headers.append((b"cookie", cookie.encode("latin-1")))
    return {"type": "http", "path": path, "raw_path": raw if raw is not None else path.encode(),
            "query_string": query, "headers": all_headers, "client": ("203.0.113.9", 5000)}


def test_a_sessions_id_names_its_node() -> None:
    session = DebugSessions(node="node-b").open("o", "job", lambda _m: None, True, set())
    assert session_node(session.id) == "node-b"
    assert session_node("dbg_0123456789abcdef") is None  # an id from before clusters


def test_the_shapes_that_are_passed_on() -> None:
    assert tagged_session(_scope(f"/api/webjobs/debug-session/{SESSION}/events")) == SESSION
    assert tagged_session(_scope("/api/webjobs/greet", f"_debug={SESSION}".encode())) == SESSION
    assert tagged_session(_scope("/api/webjobs/greet", cookie=f"webhub_debug={SESSION}")) \
        == SESSION


def test_nothing_else_is_passed_on() -> None:
    tag = f"_debug={SESSION}".encode()
    for path in ("/api/auth/login", "/api/webjobs/a/b", "/api/webjobs/x/../../auth/login",
                 "/api/webjobs/", "/elsewhere"):
        assert tagged_session(_scope(path, tag)) is None, path
    # An escaped spelling of a plain path is not the path: it stays on this node.
    assert tagged_session(_scope("/api/webjobs/greet", tag, raw=b"/api/webjobs/gr%65et")) is None
    for bad in ("dbg_x.62", "dbg_0123456789abcdef", "dbg_0123456789abcdef.zz", "junk"):
        assert tagged_session(_scope("/api/webjobs/greet", f"_debug={bad}".encode())) is None


def test_the_client_address_is_appended_and_the_guard_added() -> None:
    scope = _scope("/api/webjobs/greet", headers=[
        (b"x-forwarded-for", b"198.51.100.1"), (b"host", b"hub.example.org"),
        (b"connection", b"keep-alive"), (FORWARDED.encode(), b"forged")])
    headers = _passed_on_headers(scope, "node-a")
    assert ("x-forwarded-for", "198.51.100.1, 203.0.113.9") in headers
    assert ("host", "hub.example.org") in headers  # the Origin check sees the browser's Host
    assert ("connection", "keep-alive") not in headers
    assert [v for k, v in headers if k == FORWARDED] == ["node-a"]


@given(path=st.text(max_size=80), query=st.binary(max_size=80),
       cookie=st.text(alphabet=st.characters(max_codepoint=255), max_size=80))
def test_any_request_is_read_without_an_error(path: str, query: bytes, cookie: str) -> None:
    found = tagged_session(_scope("/api/webjobs/" + path, query, cookie))
    assert found is None or found.startswith("dbg_")
