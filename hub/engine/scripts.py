"""The sandbox's JavaScript files (hub/engine/js/), in the order production evaluates them.

This is the one list: the engine evaluates ``sandbox_source(host)`` and the JS tests
load ``web_apis_source()`` (the files before the run machinery, which needs a host),
so a test sees the files exactly as a run does. Each file is a plain script that
installs what it defines on the global; they hand each other their parts through
hidden globals that the next file takes and deletes (``__webjob_web`` among the web
files; ``__webjob_bytes``, ``__webjob_responses``, ``__webjob_crypto`` and
``__webjob_debug_runtime`` to the prelude; then the prelude's and run.js's own).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

# The web APIs a bare V8 lacks (web/base.js first: the others take its helpers;
# web/events.js last: it deletes them), the sandbox's byte helpers, and the job's
# `response` and `crypto`. None of them reads a per-run global while it is evaluated
# (setTimeout, console, reportError are read when called), so a warm isolate
# evaluates them once for all its runs.
WEB_APIS: tuple[str, ...] = (
    "web/base.js",
    "web/text.js",
    "web/buffer.js",
    "web/url_parse.js",
    "web/url.js",
    "web/clone.js",
    "web/events.js",
    "bytes.js",
    "responses.js",
    "crypto.js",
)
# The run machinery after them (the debugger's runtime first: prelude.js takes it),
# then one host: a fresh context's (``Isolation: fresh``) or a warm isolate's, which
# comes after SES and lockdown().
MACHINERY: tuple[str, ...] = ("debug_runtime.js", "prelude.js", "run.js")
FRESH_HOST = "fresh_host.js"
WARM_HOST = "warm_host.js"
# Every file some sandbox evaluates (what the package must ship, what the JS checks read).
SANDBOX_FILES: tuple[str, ...] = (*WEB_APIS, *MACHINERY, FRESH_HOST, WARM_HOST)

JOIN = "\n;\n"  # a file's last line may be a comment (//# sourceURL=...)


@cache
def file_text(name: str) -> str:
    """One sandbox file's text, read once."""
    return (resources.files("hub.engine") / "js" / name).read_text(encoding="utf-8")


@cache
def joined(*names: str) -> str:
    """The files, in this order, as one script (each eval is a round trip into V8)."""
    return JOIN.join(file_text(name) for name in names)


def web_apis_source() -> str:
    """The web APIs and helpers, as one script: what the JS tests evaluate."""
    return joined(*WEB_APIS)


def sandbox_source(host: str) -> str:
    """The whole sandbox up to and including ``host`` (FRESH_HOST or WARM_HOST)."""
    if host not in (FRESH_HOST, WARM_HOST):
        raise ValueError(f"not a sandbox host: {host!r}")
    return joined(*WEB_APIS, *MACHINERY, host)
