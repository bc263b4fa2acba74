"""The outside world as a job sees it: checked, pinned HTTP calls (``http(url, options)``)."""

from __future__ import annotations

from hub.outside.http_client import CallBudget, fetch
from hub.outside.netpolicy import (
    NetPolicy,
    Resolver,
    Target,
    check_url,
    display_url,
    system_resolver,
)

__all__ = [
    "CallBudget",
    "NetPolicy",
    "Resolver",
    "Target",
    "check_url",
    "display_url",
    "fetch",
    "system_resolver",
]
