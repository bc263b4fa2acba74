"""From an HTTP request to what a job sees: ``params`` and ``request``, plus the
engine flags (``enableLogger``, ``raw``, ``_console``, ``_debug``) taken out of them."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import ClientDisconnect, Request

from hub.auth import WITHHELD_HEADERS
from hub.services.json_bodies import (
    ENGINE_FLAGS,
    OFF_LOOP_BYTES,
    collect_pairs,
    params_off_process,
    parse_exact_json,
    parse_form,
    parse_json,
    refuse_lone_surrogates,
    split_flags,
)
from shared.errors import BadRequest, BodyStalled, BodyTooLarge
from shared.text import clean_json, clean_text, may_hold_lone_surrogate

__all__ = [
    "ENGINE_FLAGS",
    "ClientGone",
    "Inbound",
    "media_type",
    "parse_json",
    "raw_body_view",
    "read_body",
    "read_inbound",
    "read_json_object",
    "refuse_lone_surrogates",
]

BODY_IDLE_S = 30.0  # how long a request body may go without a byte before it is refused
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


@dataclass
class Inbound:
    params: Any
    request: dict[str, Any]
    flags: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def flag(self, name: str) -> bool:
        return self.flags.get(name, "").lower() in ("1", "true", "yes", "on")


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit} bytes"


class ClientGone(Exception):
    """The client disconnected; nobody is left to answer."""


async def read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge(f"The request body is larger than {_size(max_bytes)}")
    chunks, size = [], 0
    stream = request.stream()
    try:
        while (chunk := await _next_chunk(stream)) is not None:
            size += len(chunk)
            if size > max_bytes:
                raise BodyTooLarge(f"The request body is larger than {_size(max_bytes)}")
            chunks.append(chunk)
    except ClientDisconnect:  # gone before its body was in: nobody to answer
        raise ClientGone() from None
    body = b"".join(chunks)
    request._body = body  # lets Starlette's form parser reuse what was read
    return body


async def _next_chunk(stream: AsyncIterator[bytes]) -> bytes | None:
    """The body's next piece, None at its end; BodyStalled when none comes for
    ``BODY_IDLE_S`` (a body shorter than its Content-Length would otherwise hold the
    request, and its connection, for as long as the client keeps the socket open)."""
    try:
        async with asyncio.timeout(BODY_IDLE_S):
            return await anext(stream)
    except StopAsyncIteration:
        return None
    except TimeoutError:
        raise BodyStalled(f"The request body stopped arriving: nothing came for "
                          f"{BODY_IDLE_S:g} s") from None


async def read_json_object(request: Request, max_bytes: int,
                           exact: tuple[str, ...] = ()) -> dict[str, Any]:
    """A request body that must be one JSON object (an empty body is ``{}``). A lone
    surrogate is refused in the ``exact`` fields and carried as U+FFFD elsewhere."""
    body = await read_body(request, max_bytes)
    data = parse_exact_json(body or b"{}")
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object")
    if not may_hold_lone_surrogate(body):
        return data
    refuse_lone_surrogates(data, exact)
    cleaned: dict[str, Any] = clean_json(data)
    return cleaned


def media_type(request: Request) -> str:
    """The request's Content-Type without its parameters, lower case ("" if none)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _is_json(ctype: str) -> bool:
    return ctype == "application/json" or ctype.endswith("+json")


async def _body_params(request: Request, body: bytes) -> Any:
    ctype = media_type(request)
    if not body:
        return {}
    if _is_json(ctype):
        return parse_json(body)
    if ctype == "application/x-www-form-urlencoded":
        return parse_form(body)
    if ctype == "multipart/form-data":
        try:
            form = await request.form()
        except Exception:
            raise BadRequest("The multipart form could not be read") from None
        return collect_pairs([(clean_text(k), clean_text(v)) for k, v in form.multi_items()
                         if isinstance(v, str)])
    return {}


async def read_inbound(request: Request, max_body: int, address: str) -> Inbound:
    query = collect_pairs(list(request.query_params.multi_items()))
    flags: dict[str, str] = {}
    params: Any = split_flags(dict(query), flags)
    body = b""
    if request.method not in ("GET", "HEAD"):
        body = await read_body(request, max_body)
        ctype = media_type(request)
        if len(body) > OFF_LOOP_BYTES and (_is_json(ctype) or ctype in (FORM, MULTIPART)):
            # Parsed in a process of its own and never built here (see json_bodies).
            params = await params_off_process(
                body, params, flags, form=ctype == FORM,
                multipart=request.headers.get("content-type", "") if ctype == MULTIPART else "")
        else:
            posted = split_flags(await _body_params(request, body), flags)
            params = {**params, **posted} if isinstance(posted, dict) else posted
    view = {
        "method": request.method,
        "url": str(request.url),
        "path": request.url.path,
        "query": split_flags(query, {}),
        "headers": {k: v for k, v in request.headers.items() if k not in WITHHELD_HEADERS},
        "ip": address,
        **raw_body_view(body),
    }
    return Inbound(params, view, flags, body)


def raw_body_view(body: bytes) -> dict[str, str]:
    """The body exactly as received, for ``request.rawBody`` / ``request.rawBytes()``.

    Valid UTF-8 crosses once, as text (the prelude re-encodes it for ``rawBytes()``,
    which gives back the same bytes); anything else crosses once, as base64, and the
    prelude decodes ``rawBody`` from it (with replacement characters) only if the job
    reads it. An empty body costs one empty string."""
    if not body:
        return {"rawBody": ""}
    try:
        return {"rawBody": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"rawBase64": base64.b64encode(body).decode("ascii")}
