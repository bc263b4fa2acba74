"""What a job's answer may carry as HTTP headers: the hub refuses, as the run's failure,
headers no HTTP server can send or a browser would misread.

A header name must be an HTTP token and a value latin-1 text without line breaks or
control characters (a CR/LF would start a header of the job's choosing; the server
would otherwise drop the connection or fail the answer). ``Set-Cookie`` may not name
a cookie the hub itself reads, and ``Location`` (``response.redirect``) must be
relative or http(s): a ``javascript:`` or ``data:`` target runs in the hub's origin.

Pure functions of the answer's metadata: the runner checks every run's answer, so
the plain and NDJSON answers and history all carry the same failure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hub.auth import HUB_COOKIES

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 field names
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # C0, DEL, C1; a tab is allowed
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# What a URL parser drops before it reads the scheme: leading C0 controls and spaces
# anywhere in front, tabs and line breaks anywhere ("java\tscript:" is javascript:).
_URL_IGNORED = re.compile(r"[\t\n\r]")
_SAFE_SCHEMES = frozenset({"http", "https"})
_NAME_SHOWN = 60


def answer_problem(meta: Mapping[str, Any]) -> str | None:
    """Why the answer described by ``meta`` cannot be sent, or None when it can."""
    status = meta.get("status", 200)
    if isinstance(status, int) and 100 <= status < 200:
        # An interim status is the server's to send (a 101 would switch protocols).
        return f"status {status} is an interim answer, not a job's (use 200-599)"
    headers = meta.get("headers") or {}
    for name, value in headers.items():
        problem = _header_problem(str(name), str(value))
        if problem is not None:
            return problem
    if not any(str(k).lower() == "content-type" for k in headers):
        problem = _value_problem("Content-Type", str(meta.get("format") or ""))
        if problem is not None:
            return problem
    filename = meta.get("filename")
    if isinstance(filename, str):
        return _value_problem("the file name", filename)
    return None


def _header_problem(name: str, value: str) -> str | None:
    if not _TOKEN.fullmatch(name):
        return (f"'{_shown(name)}' is not a header name (letters, digits and "
                "!#$%&'*+.^_`|~- only)")
    problem = _value_problem(f"header '{name}'", value)
    if problem is not None:
        return problem
    lower = name.lower()
    if lower == "set-cookie":
        return _cookie_problem(value)
    if lower == "location":
        return _location_problem(value)
    return None


def _value_problem(what: str, value: str) -> str | None:
    if _CONTROL.search(value):
        return f"{what} holds a line break or another control character"
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return f"{what} holds characters outside latin-1 (HTTP headers cannot carry them)"
    return None


def _cookie_problem(value: str) -> str | None:
    # A comma may join cookies in one header for some clients: every piece is checked.
    for piece in value.split(","):
        name = piece.split("=", 1)[0].strip().lower()
        if not name and "=" in piece:
            # A browser keeps a nameless cookie and sends back its value alone:
            # "=webhub_session=x" would come back as the hub's session cookie.
            return "Set-Cookie needs a cookie name before its '='"
        if name in HUB_COOKIES:
            return f"Set-Cookie may not set the hub's own cookie '{name}'"
    return None


def _location_problem(url: str) -> str | None:
    seen = _URL_IGNORED.sub("", url).lstrip("".join(map(chr, range(0x21))))
    scheme = _SCHEME.match(seen)
    if scheme is not None and scheme.group(1).lower() not in _SAFE_SCHEMES:
        return (f"a redirect must go to an http(s) or relative URL, not "
                f"'{_shown(scheme.group(1))}:'")
    return None


def _shown(text: str) -> str:
    return text[:_NAME_SHOWN].encode("unicode_escape").decode("ascii")
