"""What every route needs from the running hub, kept on ``app.state``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import lru_cache
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from typing import Annotated

from fastapi import Depends
from starlette.requests import Request

from hub.abuse import client_address
from hub.auth import Caller, Identity, check_owner, check_same_origin, run_caller
from hub.cluster.nodes import NodeRegistry
from hub.engine.engine import Engine
from hub.limiting import Limits, RequestLimit
from hub.services.catalog import Catalog
from hub.services.debugging import Debugging, DebugSessions
from hub.services.history import History
from hub.services.identity import IdentityService
from hub.services.keys import KeyService
from hub.services.node_health import NodeHealth
from hub.services.outside import HubBridge
from hub.services.readiness import Readiness
from hub.services.runs import JobRunner
from hub.services.scheduling import Scheduling
from hub.services.secrets import SecretsService
from hub.settings import Settings
from hub.store.identity import IdentityStore
from hub.telemetry.prometheus import HubMetrics
from hub.telemetry.scrape import ScrapeAccess


@dataclass
class Hub:
    settings: Settings
    engine: Engine
    runner: JobRunner
    catalog: Catalog
    users: IdentityStore
    identity: Identity
    public_limiter: RequestLimit
    sign_ins: IdentityService  # sign-in, sessions, users' tokens: what auth_routes asks
    trusted: list[IPv4Network | IPv6Network]
    outside: HubBridge
    history: History
    scheduling: Scheduling
    debug_sessions: DebugSessions
    secrets: SecretsService
    keys: KeyService
    nodes: NodeRegistry | None = None  # this node's heartbeat and the cluster's other nodes
    limits: Limits | None = None  # what public_limiter and sign_in count in (closed at stop)


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def address_of(request: Request) -> str:
    """The client's address: the socket peer, or X-Forwarded-For from a trusted proxy."""
    peer = request.client.host if request.client else None
    forwarded = ", ".join(request.headers.getlist("x-forwarded-for")) or None
    trusted = hub_of(request).trusted
    if not trusted:  # the default: no header is believed, the peer is the address
        return _peer_address(peer)
    return client_address(peer, forwarded, trusted)


@lru_cache(maxsize=1024)
def _peer_address(peer: str | None) -> str:
    """The canonical form of a peer (``client_address`` with nothing trusted): parsing
    an address costs more than the rest of the request's identity, and a hub's callers
    are few addresses again and again."""
    return client_address(peer, None, [])


@lru_cache(maxsize=1024)
def _ip(peer: str) -> IPv4Address | IPv6Address | None:
    try:
        return ip_address(peer)
    except ValueError:
        return None


def peer_is_trusted(request: Request) -> bool:
    """Whether the socket peer is one of WEBHUB_TRUSTED_PROXIES."""
    trusted = hub_of(request).trusted
    if not trusted:
        return False
    address = _ip(request.client.host if request.client else "")
    return address is not None and any(address in network for network in trusted)


def public_scheme(request: Request, peer_trusted: bool | None = None) -> str:
    """http or https as the browser sees it (a trusted proxy may terminate TLS)."""
    if peer_is_trusted(request) if peer_trusted is None else peer_trusted:
        forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        if forwarded in ("http", "https"):
            return forwarded
    return request.url.scheme


def own_origin(request: Request) -> str:
    """The hub's origin as the browser sees it, for the same-origin check."""
    host = request.url.netloc
    trusted = peer_is_trusted(request)
    if trusted:
        host = request.headers.get("x-forwarded-host", "").split(",")[0].strip() or host
    return f"{public_scheme(request, trusted)}://{host}"


async def caller_of(request: Request, page_job: bool | None = None) -> Caller:
    """Who is calling. The lookup reads the hub database; a server database (not the
    embedded SQLite file) is read in a thread, so a slow or unreachable server never
    holds up the event loop. For a job run (``page_job`` says whether it is a
    ``Mode: page`` job), a cross-site request's session counts for nobody
    (``hub.auth.run_caller``). Only a session is judged by where the request comes
    from (both checks pass any other caller by), so only then is the hub's own
    origin worked out."""
    hub = hub_of(request)
    proof = ("authorization" in request.headers or "x-api-key" in request.headers
             or bool(request.cookies))
    if proof and hub.users.db.url.is_server:
        caller = await asyncio.to_thread(hub.identity.resolve, request.headers,
                                         request.cookies)
    else:
        caller = hub.identity.resolve(request.headers, request.cookies)
    if caller.via != "session":
        return caller
    origin = own_origin(request)
    if page_job is not None:
        caller = run_caller(caller, request.method, request.headers, origin, page_job)
    check_same_origin(caller, request.method, request.headers, origin)
    return caller


async def owner_of(request: Request) -> Caller:
    caller = await caller_of(request)
    check_owner(caller)
    return caller


# What a route declares it needs, as typed parameters (``catalog: CatalogDep``): FastAPI
# hands each one over, so a route names its services instead of digging in ``Hub``.
def _settings(request: Request) -> Settings:
    return hub_of(request).settings


def _catalog(request: Request) -> Catalog:
    return hub_of(request).catalog


def _runner(request: Request) -> JobRunner:
    return hub_of(request).runner


def _history(request: Request) -> History:
    return hub_of(request).history


def _scheduling(request: Request) -> Scheduling:
    return hub_of(request).scheduling


def _debug_sessions(request: Request) -> DebugSessions:
    return hub_of(request).debug_sessions


def _secrets(request: Request) -> SecretsService:
    return hub_of(request).secrets


SettingsDep = Annotated[Settings, Depends(_settings)]
CatalogDep = Annotated[Catalog, Depends(_catalog)]
RunnerDep = Annotated[JobRunner, Depends(_runner)]
HistoryDep = Annotated[History, Depends(_history)]
SchedulingDep = Annotated[Scheduling, Depends(_scheduling)]
DebugSessionsDep = Annotated[DebugSessions, Depends(_debug_sessions)]
SecretsDep = Annotated[SecretsService, Depends(_secrets)]


def _sign_ins(request: Request) -> IdentityService:
    return hub_of(request).sign_ins


def _keys(request: Request) -> KeyService:
    return hub_of(request).keys


IdentityDep = Annotated[IdentityService, Depends(_sign_ins)]
KeysDep = Annotated[KeyService, Depends(_keys)]
OwnerDep = Annotated[Caller, Depends(owner_of)]  # the owner calling (checked first)


def debugging_of(hub: Hub) -> Debugging:
    """The debugger's service over this hub's parts (it keeps no state of its own)."""
    return Debugging(hub.runner, hub.catalog, hub.history, hub.engine, hub.debug_sessions)


def _debugging(request: Request) -> Debugging:
    return debugging_of(hub_of(request))


DebuggingDep = Annotated[Debugging, Depends(_debugging)]


def _node_health(request: Request) -> NodeHealth:
    hub = hub_of(request)
    return NodeHealth(hub.engine, hub.settings.node)


NodeHealthDep = Annotated[NodeHealth, Depends(_node_health)]


# What the probes and the Prometheus scrape read, kept beside the Hub on ``app.state``.
def _readiness(request: Request) -> Readiness:
    readiness: Readiness = request.app.state.readiness
    return readiness


def _prometheus(request: Request) -> HubMetrics:
    metrics: HubMetrics = request.app.state.prometheus
    return metrics


def _scrape_access(request: Request) -> ScrapeAccess:
    access: ScrapeAccess = request.app.state.scrape_access
    return access


ReadinessDep = Annotated[Readiness, Depends(_readiness)]
PrometheusDep = Annotated[HubMetrics, Depends(_prometheus)]
ScrapeAccessDep = Annotated[ScrapeAccess, Depends(_scrape_access)]
