"""How the Manage page's *Debug…* opens the debugger: a page job is a live session
(attach: its real browser requests stop in the debugger, with *Open page* and *Copy
URL*), any other job one simulated run with the job's remembered parameters.

The request goes through ``nav.sig_open_debugger`` like the editor's; the live choice
travels in the parameters under :data:`DEBUG_LIVE_KEY`, which the debugger window
takes out before anything reaches the job."""

from __future__ import annotations

from typing import Any, Protocol

from console_app.session import HubSession

__all__ = ["DEBUG_LIVE_KEY", "debug_job"]

DEBUG_LIVE_KEY = "__live__"


class _Job(Protocol):
    @property
    def is_page(self) -> bool: ...


def debug_job(session: HubSession, name: str, job: _Job | None,
              params: dict[str, Any]) -> None:
    """Open the debugger on ``name``: attached live if ``job`` is a page job."""
    if not name:
        return
    chosen = dict(params)
    if job is not None and job.is_page:
        chosen = {DEBUG_LIVE_KEY: True}  # a page's parameters come from its browser
    session.nav.sig_open_debugger.emit(name, chosen)
