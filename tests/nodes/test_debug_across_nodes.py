"""A debug session lives on the node that opened it, but its requests may land on any
node: the console's event stream and commands, and the browser tab's tagged requests,
are passed on to the session's node. Here a session opened on node 0 is watched
through node 1, driven through node 2, and a tagged request sent to node 2 parks under
it and answers once continued."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

import httpx
import pytest

from tests.nodes.conftest import Cluster

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PAGE = "/*\nMode: page\nAccess: public\n*/\nconst who = params.who || 'nobody'\n" \
       "return response.html('<p>' + who + '</p>')"


def _watch(cluster: Cluster, index: int, session: str, token: str, drive: int,
           seen: queue.Queue[dict[str, Any]]) -> None:
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=cluster.nodes[index].url, headers=auth, timeout=60) as watch, \
            httpx.Client(base_url=cluster.nodes[drive].url, headers=auth, timeout=30) as ctl, \
            watch.stream("GET", f"/api/webjobs/debug-session/{session}/events") as events:
        for line in events.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            seen.put(event)
            if event.get("type") == "pause":
                sent = ctl.post(f"/api/webjobs/debug-session/{session}/command",
                                json={"command": "continue"})
                seen.put({"type": "sent", "status": sent.status_code})
            if event.get("type") == "answer":
                return


def test_a_debug_session_is_reached_through_any_node(cluster_of: Any) -> None:
    cluster: Cluster = cluster_of(3, {"greet": PAGE})
    token = cluster.add_user("olive", "correct horse battery", "OWNER")
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=cluster.nodes[0].url, headers=auth) as api:
        attached = api.post("/api/webjobs/debug/greet/attach", json={}).json()
    session = attached["session"]
    seen: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=_watch, args=(cluster, 1, session, token, 2, seen),
                     daemon=True).start()

    with httpx.Client(base_url=cluster.nodes[2].url, headers=auth, timeout=30) as browser:
        page = browser.get(attached["url"] + "&who=ann")
    assert page.status_code == 200 and "<p>ann</p>" in page.text, page.text
    events = []
    while not events or events[-1]["type"] != "answer":
        events.append(seen.get(timeout=20))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "request" and "pause" in kinds, kinds
    assert {"type": "sent", "status": 200} in events, events
    assert page.cookies.get("webhub_debug") == session or "webhub_debug" in page.headers.get(
        "set-cookie", "")

    # The owner's browser, signed in on node 1 with a session cookie, drives the session
    # through node 1: the Origin check on node 0 sees the Host the browser used.
    origin = cluster.nodes[1].url
    with httpx.Client(base_url=origin, timeout=30) as browser_tab:
        signed = browser_tab.post("/api/auth/login", json={
            "name": "olive", "password": "correct horse battery"})
        assert signed.status_code == 200, signed.text
        detached = browser_tab.post(f"/api/webjobs/debug-session/{session}/command",
                                    json={"command": "detach"}, headers={"Origin": origin})
    assert detached.status_code == 200, detached.text
