"""What can go wrong between the console and a hub.

Failures the hub reports arrive as the classes of :mod:`shared.errors`, rebuilt
from their wire code. This module adds the ones only the console can see::

    WebJobsError (shared.errors)
    ├── ... every hub failure, by wire code
    └── HubUnreachable   CONSOLE-001  no answer: refused, timed out, dropped mid-way
        └── NotAHub      CONSOLE-002  something answered, but not a WebJobs hub
"""

from __future__ import annotations

from shared.errors import WebJobsError


class HubUnreachable(WebJobsError):
    code = "CONSOLE-001"
    http_status = 0


class NotAHub(HubUnreachable):
    code = "CONSOLE-002"


def describe_error(exc: BaseException) -> str:
    """How the console words a failure: ``SYS-404: There is no schedule 9 (ref …)``,
    the code first, as support asks for it; anything else by its type."""
    if isinstance(exc, WebJobsError):
        ref = f" (ref {exc.ref})" if exc.ref else ""
        return f"{exc.code}: {exc.message}{ref}"
    return f"{type(exc).__name__}: {exc}"
