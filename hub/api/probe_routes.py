"""The orchestrator's probes: ``/healthz`` (the process answers) and ``/readyz`` (send
it work). Neither asks for a sign-in, and neither says more than a reason's code and
sentence (no address, no setting's value)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import JSONResponse

from hub.api.deps import ReadinessDep
from hub.api.routes import PREFIX

# Not in /openapi.json: they are for orchestrators and load balancers, not API clients
# (the README's "Operating the hub" describes them).
router = APIRouter(prefix=PREFIX)
NO_STORE = {"Cache-Control": "no-store"}


@router.api_route("/healthz", methods=["GET", "HEAD"], include_in_schema=False)
async def healthz() -> JSONResponse:
    """200 while the process answers: no check, nothing reached."""
    return JSONResponse({"ok": True}, headers=NO_STORE)


@router.api_route("/readyz", methods=["GET", "HEAD"], include_in_schema=False)
async def readyz(readiness: ReadinessDep) -> JSONResponse:
    """200 when a worker can be had and the stores answer at this code's schema;
    503 with the reasons otherwise."""
    reasons = await readiness.reasons()
    if not reasons:
        return JSONResponse({"ok": True}, headers=NO_STORE)
    return JSONResponse({"ok": False, "reasons": [r.as_json() for r in reasons]},
                        status_code=503, headers=NO_STORE)
