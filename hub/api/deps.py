"""What every route needs from the running hub, kept on ``app.state``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network

from starlette.requests import Request

from hub.abuse import RateLimiter, SignInThrottle, client_address
from hub.auth import Caller, Identity, check_owner, check_same_origin, run_caller
from hub.engine.engine import Engine
from hub.secrets.service import SecretsService
from hub.services.catalog import Catalog
from hub.services.debugging import DebugSessions
from hub.services.history import History
from hub.services.outside import HubBridge
from hub.services.runs import JobRunner
from hub.services.scheduling import Scheduling
from hub.settings import Settings
from hub.store.identity import IdentityStore


@dataclass
class Hub:
    settings: Settings
    engine: Engine
    runner: JobRunner
    catalog: Catalog
    users: IdentityStore
    identity: Identity
    public_limiter: RateLimiter
    sign_in: SignInThrottle
    sign_in_rate: RateLimiter
    trusted: list[IPv4Network | IPv6Network]
    outside: HubBridge
    history: History
    scheduling: Scheduling
    debug_sessions: DebugSessions
    secrets: SecretsService


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def address_of(request: Request) -> str:
    """The client's address: the socket peer, or X-Forwarded-For from a trusted proxy."""
    peer = request.client.host if request.client else None
    forwarded = ", ".join(request.headers.getlist("x-forwarded-for")) or None
    return client_address(peer, forwarded, hub_of(request).trusted)


def _peer_trusted(request: Request) -> bool:
    from ipaddress import ip_address

    peer = request.client.host if request.client else ""
    try:
        address = ip_address(peer)
    except ValueError:
        return False
    return any(address in network for network in hub_of(request).trusted)


def public_scheme(request: Request) -> str:
    """http or https as the browser sees it (a trusted proxy may terminate TLS)."""
    if _peer_trusted(request):
        forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        if forwarded in ("http", "https"):
            return forwarded
    return request.url.scheme


def own_origin(request: Request) -> str:
    """The hub's origin as the browser sees it, for the same-origin check."""
    host = request.url.netloc
    if _peer_trusted(request):
        host = request.headers.get("x-forwarded-host", "").split(",")[0].strip() or host
    return f"{public_scheme(request)}://{host}"


async def caller_of(request: Request, page_job: bool | None = None) -> Caller:
    """Who is calling. The lookup reads the hub database; a server database (not the
    embedded SQLite file) is read in a thread, so a slow or unreachable server never
    holds up the event loop. For a job run (``page_job`` says whether it is a
    ``Mode: page`` job), a cross-site request's session counts for nobody
    (``hub.auth.run_caller``)."""
    hub = hub_of(request)
    proof = ("authorization" in request.headers or "x-api-key" in request.headers
             or bool(request.cookies))
    if proof and hub.users.db.url.kind == "odbc":
        caller = await asyncio.to_thread(hub.identity.resolve, request.headers,
                                         request.cookies)
    else:
        caller = hub.identity.resolve(request.headers, request.cookies)
    origin = own_origin(request)
    if page_job is not None:
        caller = run_caller(caller, request.method, request.headers, origin, page_job)
    check_same_origin(caller, request.method, request.headers, origin)
    return caller


async def owner_of(request: Request) -> Caller:
    caller = await caller_of(request)
    check_owner(caller)
    return caller
