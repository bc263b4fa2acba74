"""``python -m hub.probe``: ask a local hub's probe, for a container's HEALTHCHECK and
systemd's ExecStartPost (neither image nor host need curl). Exit 0 when the probe
says 200; 1 otherwise, after ``--wait`` seconds of asking again."""

from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.error
import urllib.request

PROBES = ("healthz", "readyz")
RETRY_S = 0.25  # between tries while waiting for a starting hub: no event to await
# No proxies: the probe asks a hub on this host, and urllib would send even 127.0.0.1
# through HTTP_PROXY unless NO_PROXY names it (a container's healthcheck then fails).
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def answers(url: str, timeout_s: float) -> bool:
    try:
        with _DIRECT.open(url, timeout=timeout_s) as reply:
            return int(reply.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def wait_for(url: str, wait_s: float, timeout_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        if answers(url, timeout_s):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(RETRY_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hub.probe", description=__doc__)
    parser.add_argument("probe", nargs="?", choices=PROBES, default="readyz")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8700))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--wait", type=float, default=0.0,
                        help="seconds to keep asking while the hub starts (default: ask once)")
    parser.add_argument("--timeout", type=float, default=2.5, help="seconds for one answer")
    args = parser.parse_args(argv)
    url = f"http://{args.host}:{args.port}/api/webjobs/{args.probe}"
    if wait_for(url, args.wait, args.timeout):
        return 0
    print(f"{url} did not answer 200", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
