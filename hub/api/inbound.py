"""From an HTTP request to what a job sees: ``params`` and ``request``, plus the
engine flags (``enableLogger``, ``raw``, ``_console``, ``_debug``) taken out of them."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import ClientDisconnect, Request

from hub.auth import WITHHELD_HEADERS
from shared.errors import BadRequest, BodyStalled, BodyTooLarge
from shared.text import (
    MAX_JSON_DEPTH,
    clean_json,
    clean_text,
    json_text_deeper_than,
    loads_json,
    may_hold_lone_surrogate,
)

ENGINE_FLAGS = ("enableLogger", "raw", "_console", "_debug")
BODY_IDLE_S = 30.0  # how long a request body may go without a byte before it is refused
# A JSON or form body larger than this is parsed in a thread, off the event loop that
# answers every other caller (parsing 10 MB takes the better part of a second).
OFF_LOOP_BYTES = 64 * 1024


@dataclass
class Inbound:
    params: Any
    request: dict[str, Any]
    flags: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def flag(self, name: str) -> bool:
        return self.flags.get(name, "").lower() in ("1", "true", "yes", "on")


def _collect(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Pairs to a dict; a repeated name becomes an array (a checkbox group). Linear: a
    repeated name's array is appended to in place, never copied."""
    out: dict[str, Any] = {}
    repeated: dict[str, list[Any]] = {}
    for key, value in pairs:
        if key in repeated:
            repeated[key].append(value)
        elif key in out:
            out[key] = repeated[key] = [out[key], value]
        else:
            out[key] = value
    return out


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


def parse_json(text: str | bytes, what: str = "The request body") -> Any:
    """JSON from outside, as the hub can carry it: nested at most ``MAX_JSON_DEPTH``
    deep (else HUB-001), every lone surrogate as U+FFFD."""
    data = parse_exact_json(text, what)
    return clean_json(data) if may_hold_lone_surrogate(text) else data


def parse_exact_json(text: str | bytes, what: str = "The request body") -> Any:
    """As :func:`parse_json`, but its text as sent (lone surrogates kept): for a caller
    that refuses them (see :func:`refuse_lone_surrogates`) before cleaning the rest."""
    if json_text_deeper_than(text, MAX_JSON_DEPTH):  # read from the text: nothing parsed yet
        raise BadRequest(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        data = loads_json(text)
    except RecursionError:  # pragma: no cover - the text was measured first
        raise BadRequest(f"{what} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError:
        raise BadRequest(f"{what} is not valid JSON") from None
    except UnicodeDecodeError as exc:  # the decoder's own wording is not the caller's business
        raise BadRequest(f"{what} is not valid JSON: byte {exc.start} is not UTF-8 (or UTF-16 or "
                         "UTF-32 with a byte order mark)") from None
    except ValueError as exc:  # NaN, Infinity, a number no job could read back
        raise BadRequest(f"{what} is not valid JSON: {exc}") from None
    return data


def refuse_lone_surrogates(data: dict[str, Any], fields: tuple[str, ...]) -> None:
    """HUB-001 when one of ``fields`` is text UTF-8 cannot carry: the hub keeps it
    (a job's code, a secret's value) and a silent U+FFFD would change what it does."""
    for name in fields:
        value = data.get(name)
        if isinstance(value, str) and clean_text(value) != value:
            raise BadRequest(f"'{name}' holds a lone surrogate (\\ud800-\\udfff), "
                             "which is not text: send the characters themselves")


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


def _parsed_text_body(ctype: str, body: bytes) -> Any:
    """A JSON or form body's parameters (``...`` for any other type)."""
    if ctype == "application/json" or ctype.endswith("+json"):
        return parse_json(body)
    if ctype == "application/x-www-form-urlencoded":
        text = body.decode("utf-8", errors="replace")
        return _collect(parse_qsl(text, keep_blank_values=True))
    return ...


async def _body_params(request: Request, body: bytes) -> Any:
    ctype = media_type(request)
    if not body:
        return {}
    if len(body) > OFF_LOOP_BYTES:
        parsed = await asyncio.to_thread(_parsed_text_body, ctype, body)
    else:
        parsed = _parsed_text_body(ctype, body)
    if parsed is not ...:
        return parsed
    if ctype == "multipart/form-data":
        try:
            form = await request.form()
        except Exception:
            raise BadRequest("The multipart form could not be read") from None
        return _collect([(clean_text(k), clean_text(v)) for k, v in form.multi_items()
                         if isinstance(v, str)])
    return {}


def _split_flags(params: Any, flags: dict[str, str]) -> Any:
    if isinstance(params, dict):
        for name in ENGINE_FLAGS:
            if name in params:
                value = params.pop(name)
                flags[name] = str(value[-1] if isinstance(value, list) else value)
    return params


async def read_inbound(request: Request, max_body: int, address: str) -> Inbound:
    query = _collect(list(request.query_params.multi_items()))
    flags: dict[str, str] = {}
    params: Any = _split_flags(dict(query), flags)
    body = b""
    if request.method not in ("GET", "HEAD"):
        body = await read_body(request, max_body)
        posted = _split_flags(await _body_params(request, body), flags)
        params = {**params, **posted} if isinstance(posted, dict) else posted
    view = {
        "method": request.method,
        "url": str(request.url),
        "path": request.url.path,
        "query": _split_flags(query, {}),
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
