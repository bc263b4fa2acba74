"""The two answer forms of a run (see the README's *Answers* section).

Plain: what a browser, ``?raw=1`` or ``Accept: application/json`` gets: the
job's own status, headers and body (a plain JSON result indented for a browser
only); failures as a JSON error object.
NDJSON: what every other client gets: event lines, then one metadata line and
the data, or a single failure line.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from typing import Any

from starlette.responses import Response

from hub.api.page_console import insert_drawer
from hub.services.run_outcome import RunResult, new_ref
from shared.errors import WebJobsError
from shared.ndjson import Failure, MetaData, encode_line

log = logging.getLogger("webhub")
NDJSON = "application/x-ndjson"

# A job page may run its own inline scripts and load https: assets, nothing else.
PAGE_CSP = ("default-src 'self' https: data:; script-src 'self' 'unsafe-inline' https:; "
            "style-src 'self' 'unsafe-inline' https:; img-src 'self' https: data: blob:; "
            "font-src 'self' https: data:; connect-src 'self' https:; "
            "frame-ancestors 'self'; base-uri 'self'; object-src 'none'")

_UNSAFE_FILENAME = re.compile(r'[^A-Za-z0-9._ -]')
# Document types a browser runs scripts in besides the XML family (see runs_scripts).
SCRIPT_TYPES = frozenset({"text/html", "application/xhtml+xml", "image/svg+xml", "text/xsl",
                          "application/xslt+xml", "multipart/x-mixed-replace"})


def wants_stream(flags_raw: bool, flags_logger: bool, accept: str) -> bool:
    if flags_raw:
        return False
    if flags_logger:
        return True
    accept = accept.lower()
    return not ("text/html" in accept or "application/json" in accept)


def wants_pretty(accept: str) -> bool:
    """A plain JSON result is indented for a browser, whose tab shows it to a person,
    and compact for a script (``Accept: application/json``, ``?raw=1``): the same
    data, a third fewer bytes to send and to parse."""
    return "text/html" in accept.lower()


def failure_object(err: WebJobsError, runtime_ms: int | None = None) -> dict[str, Any]:
    out = err.to_wire()
    if runtime_ms is not None:
        out["runtime"] = runtime_ms
    return out


def error_response(err: WebJobsError, runtime_ms: int | None = None,
                   stream: bool = False, job_id: str | None = None) -> Response:
    """A failure as JSON (or one NDJSON line); ``job_id`` names the run that failed,
    so a client can look it up in history without searching."""
    body = failure_object(err, runtime_ms)
    # Set here too: the hub's last-resort 500 is sent outside every middleware.
    headers = {"X-Content-Type-Options": "nosniff"}
    if job_id:
        headers["X-Job-Id"] = job_id
    if err.retry_after:
        headers["Retry-After"] = str(err.retry_after)
    if stream:
        return Response(_failure_line(body), err.http_status, headers, media_type=NDJSON)
    text = json.dumps(body, ensure_ascii=False)
    return Response(text, err.http_status, headers, media_type="application/json")


def _failure_line(body: dict[str, Any]) -> bytes:
    fields = Failure.__dataclass_fields__
    return encode_line(Failure(**{k: v for k, v in body.items() if k in fields and k != "success"}))


def refusal(err: WebJobsError, method: str, path: str, stream: bool = False) -> Response:
    """The answer for a request refused before (or instead of) a run, logged with
    the ``ref`` it carries."""
    if err.ref is None:
        err.ref = new_ref()
    log.info("%s %s -> %s %s ref=%s", method, path, err.code, err.message, err.ref)
    return error_response(err, stream=stream)


def result_bytes(result: RunResult) -> bytes:
    return result.body  # binary bodies were decoded by the worker


def runs_scripts(content_type: str) -> bool:
    """Whether a browser may run scripts in a document of ``content_type``: HTML, and
    every XML type (XHTML, SVG, and XML that an XSLT turns into a page). A type it
    cannot read is treated as one: with ``nosniff`` a browser does not guess, but the
    page CSP costs nothing on a download. A list of types (``text/plain,text/html``)
    runs scripts when any of them does: browsers take one of them, often the last."""
    return any(_type_runs_scripts(part) for part in content_type.split(","))


def _type_runs_scripts(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    kind, _, sub = media.partition("/")
    if not kind or not sub:
        return True
    return media in SCRIPT_TYPES or sub == "xml" or sub.endswith("+xml")


def _job_headers(result: RunResult) -> dict[str, str]:
    meta = result.meta
    headers = {str(k): str(v) for k, v in (meta.get("headers") or {}).items()
               if k.lower() not in ("content-length", "transfer-encoding")}
    lower = {k.lower() for k in headers}
    if "content-type" not in lower:
        headers["Content-Type"] = str(meta.get("format") or "application/octet-stream")
    if meta.get("filename") and "content-disposition" not in lower:
        safe = _UNSAFE_FILENAME.sub("_", str(meta["filename"]))[:150] or "download"
        headers["Content-Disposition"] = f'attachment; filename="{safe}"'
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    if "content-security-policy" not in lower and runs_scripts(content_type):
        headers["Content-Security-Policy"] = PAGE_CSP
    headers["X-Job-Id"] = result.job_id
    return headers


_NO_BODY = frozenset({204, 304})


def plain_response(result: RunResult, drawer: bytes | None = None) -> Response:
    """``drawer``: the page console to add to an HTML page (``hub.api.page_console``)."""
    if result.error is not None:
        return error_response(result.error, result.runtime_ms, job_id=result.job_id)
    body = result_bytes(result)
    if drawer is not None:
        body = insert_drawer(body, drawer)
    status = int(result.meta.get("status", 200))
    if status in _NO_BODY:  # HTTP forbids a body here: sending one breaks the connection
        body = b""
    return Response(body, status, _job_headers(result))


def stream_status(result: RunResult) -> int:
    """The HTTP status of an NDJSON answer sent whole (not live) to a client that did
    not ask for NDJSON by name: a job's own 4xx or 5xx, so a client that looks only at
    the status — a webhook sender sends ``Accept: */*`` and reads nothing else — sees a
    refusal such as a 401. Any other status stays in the metadata line (a 204 or 304
    cannot carry the lines, a 3xx without its Location would strand a client), and so
    does every status for a client that asked for ``application/x-ndjson``: it reads
    the metadata line, and a 4xx there is an answer, not a failed request."""
    status = int(result.meta.get("status", 200))
    return status if 400 <= status <= 599 else 200


def masked_answer(result: RunResult) -> RunResult:
    """``result`` with its secret values masked in the body too: for a debugger's
    stream, which shows the run to its owner, not the job's answer to its caller."""
    if not result.redactor or result.error is not None:
        return result
    return dataclasses.replace(result, body=result.redactor.bytes(result.body))


def meta_line(result: RunResult, data: bytes) -> bytes:
    meta = result.meta
    return encode_line(MetaData(
        jobId=result.job_id, type=str(meta.get("type", "json")),
        format=str(meta.get("format", "application/json")), status=int(meta.get("status", 200)),
        contentLength=len(data), runtime=result.runtime_ms, filename=meta.get("filename")))


def stream_tail(result: RunResult) -> bytes:
    """The end of an NDJSON answer: metadata and data, or the failure line."""
    if result.error is not None:
        return _failure_line(failure_object(result.error, result.runtime_ms))
    data = result_bytes(result)
    tail = b"\n" if result.meta.get("type") == "json" else b""
    return meta_line(result, data) + data + tail
