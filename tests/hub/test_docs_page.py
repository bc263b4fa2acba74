"""``/docs`` serves the API reference from the hub's own copy of Swagger UI (no CDN),
public like ``/openapi.json``; a real Chromium shows the management routes on it."""

from __future__ import annotations

import httpx

from tests.hub.browser import chromium, fresh_context
from tests.hub.conftest import HubProcess


def test_the_page_and_only_its_own_files_are_served(client: httpx.Client) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "docs/assets/swagger-ui-bundle.js" in page.text and "openapi.json" in page.text
    script = client.get("/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert script.headers["x-content-type-options"] == "nosniff"
    for other in ("package.json", "index.html", "..%2Fpackage.json", "swagger-ui.js.map"):
        refused = client.get(f"/docs/assets/{other}")
        assert refused.status_code == 404 and refused.json()["code"] == "SYS-404", other


def test_a_browser_shows_the_management_routes(hub: HubProcess) -> None:
    with chromium() as browser, fresh_context(browser) as context:
        page = context.new_page()
        seen_failures: list[str] = []
        page.on("requestfailed", lambda r: seen_failures.append(r.url))
        page.goto(f"{hub.url}/docs")
        page.get_by_text("/api/webjobs/save", exact=True).first.wait_for()
        assert page.get_by_text("/api/webjobs/schedules", exact=True).count() >= 1
        assert seen_failures == []
