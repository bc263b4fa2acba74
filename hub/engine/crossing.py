"""Everything that crosses from a job's V8 context into Python is checked here.

A job can rewrite the intrinsics the prelude uses, so nothing it sends is
trusted: malformed console lines are dropped, a malformed bridge call is
refused, and an outcome of the wrong shape becomes a plain JOB-001.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from hub.engine.protocol import loads
from shared.ndjson import LOG_LEVELS
from shared.text import clean_text

LEVELS = frozenset(LOG_LEVELS)
_CODES = frozenset({"JOB-001", "JOB-002", "JOB-003", "JOB-004"})
_TYPES = frozenset({"json", "html", "text", "csv", "pdf", "file", "redirect", "raw"})
_ENCODINGS = frozenset({"utf8", "base64", "base64url"})
UNREADABLE = {"ok": False, "code": "JOB-001", "message": "The job's outcome could not be read"}
# A response's headers: the hub, Starlette and uvicorn each handle every one of them on
# the event loop (a million took seconds), and no HTTP client wants more.
MAX_RESPONSE_HEADERS = 100
MAX_RESPONSE_HEADER_BYTES = 64 * 1024


def log_line(item: Any) -> list[Any] | None:
    """``[level, message, ms]`` or None."""
    if (isinstance(item, list) and len(item) == 3 and item[0] in LEVELS
            and isinstance(item[1], str) and isinstance(item[2], int | float)):
        return [item[0], item[1], int(item[2])]
    return None


def log_lines(items: Any) -> list[list[Any]]:
    if not isinstance(items, list):
        return []
    return [line for line in map(log_line, items) if line is not None]


def parse_json(text: str | bytes) -> Any:
    try:
        return loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def bridge_call(obj: Any) -> dict[str, Any] | None:
    if isinstance(obj, dict) and type(obj.get("id")) is int and isinstance(obj.get("op"), str):
        return {"id": obj["id"], "op": obj["op"], "args": obj.get("args")}
    return None


def _int(value: Any, low: int, high: int) -> int | None:
    return value if type(value) is int and low <= value <= high else None


def _failure(meta: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": False, "code": meta.get("code"),
                           "message": str(meta.get("message", ""))[:20_000]}
    if out["code"] not in _CODES:
        return dict(UNREADABLE)
    for key in ("line", "column"):
        if _int(meta.get(key), 1, 10_000_000) is not None:
            out[key] = meta[key]
    for key in ("limit", "where"):
        if isinstance(meta.get(key), str):
            out[key] = meta[key]
    if meta.get("reported") is True:
        out["reported"] = True
    if meta.get("syntax") is True:
        out["syntax"] = True
    return out


def _success(meta: dict[str, Any]) -> dict[str, Any]:
    headers = meta.get("headers", {})
    if (meta.get("type") not in _TYPES or not isinstance(meta.get("format"), str)
            or _int(meta.get("status"), 100, 599) is None
            or meta.get("encoding") not in _ENCODINGS or not isinstance(headers, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())):
        return dict(UNREADABLE)
    size = sum(len(k) + len(v) for k, v in headers.items())
    if len(headers) > MAX_RESPONSE_HEADERS or size > MAX_RESPONSE_HEADER_BYTES:
        return {"ok": False, "code": "JOB-001",
                "message": f"The job's response has {len(headers)} headers ({size} characters)"
                           f": at most {MAX_RESPONSE_HEADERS}, {MAX_RESPONSE_HEADER_BYTES // 1024}"
                           " KB in all"}
    out = {k: meta[k] for k in ("ok", "type", "format", "status", "encoding")}
    out["headers"] = headers
    if isinstance(meta.get("filename"), str):
        out["filename"] = meta["filename"]
    return out


def outcome_meta(meta: Any) -> dict[str, Any]:
    """The outcome's metadata in a known shape (logs kept under ``logs``)."""
    if not isinstance(meta, dict):
        return dict(UNREADABLE)
    clean = _success(meta) if meta.get("ok") is True else _failure(meta)
    clean["logs"] = log_lines(meta.get("logs"))
    return clean


def body_bytes(meta: dict[str, Any], body: str) -> bytes | None:
    """The body as bytes; None when a binary body is not valid base64."""
    encoding = meta.get("encoding", "utf8")
    if encoding == "utf8":
        try:
            return body.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: carried as U+FFFD
            return clean_text(body).encode("utf-8")
    try:
        text = body.strip()
        padded = text + "=" * (-len(text) % 4)
        if encoding == "base64url":
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
