"""Who may scrape ``GET /metrics``: anyone sending ``WEBHUB_METRICS_TOKEN`` or the system
token as a bearer token, or an address in ``WEBHUB_METRICS_ALLOW`` (addresses or
networks, none by default; the address the hub believes, so behind a trusted proxy the
forwarded one). A request that came through a proxy the hub does not trust (it carries
a forwarding header) is never let in by its address: to the hub, every request from a
reverse proxy on the same machine comes from loopback. The check reads no database: a
scrape every few seconds must cost nothing but the figures."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from hub.abuse import equal_secrets, parse_trusted_proxies
from shared.errors import BadRequest, Forbidden, NotSignedIn

__all__ = ["ScrapeAccess"]


class ScrapeAccess:
    def __init__(self, allow: str, *tokens: str | None) -> None:
        try:
            self.networks = parse_trusted_proxies(allow)
        except BadRequest as exc:
            raise BadRequest(f"WEBHUB_METRICS_ALLOW: {exc.message}") from None
        self.tokens = tuple(token for token in tokens if token)

    def check(self, address: str, headers: Mapping[str, str], *, proxied: bool = False) -> None:
        """Returns when the scrape may go on; NotSignedIn (401) without a credential,
        Forbidden (403) with one that is not a scrape token. ``proxied``: the request
        came through a proxy the hub does not trust, so its address says nothing."""
        if not proxied and self._allowed(address):
            return
        scheme, _, token = headers.get("authorization", "").partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        # Every token compared, so the time taken does not say which one nearly matched.
        if token and sum(equal_secrets(token, known) for known in self.tokens):
            return
        if token or "x-api-key" in headers or "cookie" in headers:
            raise Forbidden("Only WEBHUB_METRICS_TOKEN, the system token or an address in "
                            "WEBHUB_METRICS_ALLOW may read /metrics")
        raise NotSignedIn("/metrics needs WEBHUB_METRICS_TOKEN or the system token (or an "
                          "address in WEBHUB_METRICS_ALLOW)")

    def _allowed(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.networks)
