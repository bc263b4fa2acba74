"""``/docs``: the management API's reference (Swagger UI over ``/openapi.json``).

Both are public, like the spec always was: the spec is the same for every hub of one
version (it names no job, holds no data), generated clients and API testers read it
without a token, and every route it describes checks its own caller. Swagger UI's files
come from npm (``hub/api/docs_ui``, pinned by its lockfile) and are served by the hub
itself, so the page works on a hub with no way out to a CDN."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse
from starlette.responses import Response

from shared.errors import NotFound

router = APIRouter()
ASSETS = Path(__file__).resolve().parent / "docs_ui" / "node_modules" / "swagger-ui-dist"
# The only files the page loads; nothing else of the package is reachable.
SERVED = ("swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png")

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>WebJobs hub API</title>
<link rel="icon" href="docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="docs/assets/swagger-ui.css"></head>
<body><div id="reference"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({url: "openapi.json", dom_id: "#reference", deepLinking: true});</script>
</body></html>"""

MISSING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>WebJobs hub API</title></head>
<body><p>The API reference's page is not installed on this hub (<code>make setup</code>
installs it). The spec itself is at <a href="openapi.json">/openapi.json</a>.</p></body></html>"""


@router.get("/docs", include_in_schema=False)
async def api_reference() -> Response:
    if not (ASSETS / SERVED[1]).is_file():
        return HTMLResponse(MISSING)
    return HTMLResponse(PAGE)


@router.get("/docs/assets/{file}", include_in_schema=False)
async def api_reference_asset(file: str) -> Response:
    if file not in SERVED or not (ASSETS / file).is_file():
        raise NotFound("No such file of the API reference")
    return FileResponse(ASSETS / file, headers={"Cache-Control": "public, max-age=86400"})
