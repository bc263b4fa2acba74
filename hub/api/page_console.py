"""The console drawer of a page job: ``?_console=1`` adds, under the page's HTML, a
collapsible ``<details>`` with the run's console lines and their milliseconds, its
run time, the method and parameters the job saw, the run's id and ``ref``.

Only an OWNER signed in with a browser session gets it (a token is a script, not a
person looking at the page), or everybody on a dev server with
``WEBJOB_PAGE_CONSOLE=1``; anyone else gets the page byte for byte as without the
flag. The drawer runs no script, so it works under any CSP the page has; its
inline ``<style>`` is allowed by the hub's page CSP, and without it the drawer is
still a plain, readable ``<details>``.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from starlette.requests import Request

from hub.api.deps import hub_of
from hub.api.inbound import Inbound
from hub.auth import Caller
from hub.services.json_bodies import JsonParams
from hub.services.run_outcome import RunResult, mask_params

DRAWER_ID = "webjobs-console"
# A runaway log must not turn a page into megabytes of drawer.
MAX_LINES = 500
MAX_MESSAGE_CHARS = 4000

_STYLE = (
    f"#{DRAWER_ID}{{all:initial;display:block;margin:2rem 0 0;border-top:2px solid #2459d6;"
    "background:#f5f7fb;color:#1d2430;font:13px/1.45 ui-monospace,monospace}"
    f"#{DRAWER_ID} summary{{cursor:pointer;padding:.5rem .75rem;font-weight:600}}"
    f"#{DRAWER_ID} .wj-body{{padding:0 .75rem .75rem}}"
    f"#{DRAWER_ID} table{{border-collapse:collapse;width:100%}}"
    f"#{DRAWER_ID} td,#{DRAWER_ID} th{{text-align:left;vertical-align:top;padding:.1rem .5rem}}"
    f"#{DRAWER_ID} pre{{white-space:pre-wrap;word-break:break-word;margin:0}}"
    f"#{DRAWER_ID} .wj-warn{{color:#8a5a00}}#{DRAWER_ID} .wj-error{{color:#b3261e}}"
)


def console_drawer(request: Request, inbound: Inbound, caller: Caller,
                   result: RunResult) -> bytes | None:
    """The drawer for this answer, or None when it gets none (no flag, not an HTML
    page, a failure, or a caller who may not see it)."""
    if not inbound.flag("_console") or result.error is not None or not _is_html(result):
        return None
    if not (hub_of(request).settings.page_console or _owner_session(caller)):
        return None
    return render_drawer(result, inbound)


def insert_drawer(page: bytes, drawer: bytes) -> bytes:
    """``drawer`` just before the page's last ``</body>``, or at its end."""
    at = page.lower().rfind(b"</body")
    return page + drawer if at < 0 else page[:at] + drawer + page[at:]


def _owner_session(caller: Caller) -> bool:
    return caller.kind == "user" and caller.user_class == "OWNER" and caller.via == "session"


def _is_html(result: RunResult) -> bool:
    headers = result.meta.get("headers") or {}
    given = next((str(v) for k, v in headers.items() if str(k).lower() == "content-type"), None)
    content_type = given if given is not None else str(result.meta.get("format") or "")
    return content_type.strip().lower().startswith("text/html")


def render_drawer(result: RunResult, inbound: Inbound) -> bytes:
    method = str(inbound.request.get("method") or "")
    # The run's ref is what its history record and log lines carry; the engine's
    # result has it once the runner copies it there, else the run id identifies it.
    ref = result.ref
    facts = [("Run time", f"{result.runtime_ms} ms (CPU {result.cpu_ms} ms)"),
             ("Method", method), ("Run", result.job_id)] + ([("Ref", ref)] if ref else [])
    summary = (f"Console: {len(result.logs)} line{'' if len(result.logs) == 1 else 's'}, "
               f"{result.runtime_ms} ms, {method}" + (f", ref {ref}" if ref else ""))
    text = (f'<details id="{DRAWER_ID}" data-job-id="{escape(result.job_id)}">'
            f"<style>{_STYLE}</style><summary>{escape(summary)}</summary>"
            f'<div class="wj-body"><table class="wj-facts">{_rows(facts)}</table>'
            f"<h4>Parameters</h4><pre class=\"wj-params\">"
            f"{escape(_params_text(result.redactor.deep(_shown(inbound.params))))}"
            f"</pre><h4>Console</h4>{_console_table(result)}</div></details>")
    # Character references keep the drawer ASCII, right in any charset a page declares.
    return text.encode("ascii", "xmlcharrefreplace")


def _rows(facts: list[tuple[str, str]]) -> str:
    return "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in facts)


def _shown(params: Any) -> Any:
    """A large body's bounded, masked preview (see JsonParams); else the parameters."""
    return params.preview if isinstance(params, JsonParams) else params


def _params_text(params: Any) -> str:
    # As history keeps them: a value under a secret-looking name is shown as ***.
    return json.dumps(mask_params(params), ensure_ascii=False, indent=2, default=str)


def _console_table(result: RunResult) -> str:
    if not result.logs:
        return '<p class="wj-empty">Nothing was logged.</p>'
    rows = []
    for line in result.logs[:MAX_LINES]:
        message = line.message
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + f"... ({len(line.message)} characters)"
        level = escape(line.level)
        rows.append(f'<tr class="wj-{level}"><td>{line.t}&nbsp;ms</td><td>{level}</td>'
                    f"<td><pre>{escape(message)}</pre></td></tr>")
    more = len(result.logs) - MAX_LINES
    tail = f'<p class="wj-more">{more} more lines not shown.</p>' if more > 0 else ""
    return f'<table class="wj-lines">{"".join(rows)}</table>{tail}'
