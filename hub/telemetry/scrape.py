"""Who may scrape ``GET /metrics``: an address in ``WEBHUB_METRICS_ALLOW`` (addresses
or networks; the address the hub believes, so behind a trusted proxy the forwarded
one), or anyone sending the system token as a bearer token. The check reads no
database: a scrape every few seconds must cost nothing but the figures."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from hub.abuse import equal_secrets, parse_trusted_proxies
from shared.errors import BadRequest, Forbidden, NotSignedIn

__all__ = ["ScrapeAccess"]


class ScrapeAccess:
    def __init__(self, allow: str, system_token: str) -> None:
        try:
            self.networks = parse_trusted_proxies(allow)
        except BadRequest as exc:
            raise BadRequest(f"WEBHUB_METRICS_ALLOW: {exc.message}") from None
        self.system_token = system_token

    def check(self, address: str, headers: Mapping[str, str]) -> None:
        """Returns when the scrape may go on; NotSignedIn (401) without a credential,
        Forbidden (403) with one that is not the system token."""
        if self._allowed(address):
            return
        scheme, _, token = headers.get("authorization", "").partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        if token and equal_secrets(token, self.system_token):
            return
        if token or "x-api-key" in headers or "cookie" in headers:
            raise Forbidden("Only the system token, or an address in WEBHUB_METRICS_ALLOW, "
                            "may read /metrics")
        raise NotSignedIn("/metrics needs the system token (or an address in "
                          "WEBHUB_METRICS_ALLOW)")

    def _allowed(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.networks)
