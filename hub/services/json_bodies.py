"""JSON from callers: parsed in the hub when small, in a process of its own when large.

Parsing is not the hub's to pay for a caller: 10 MB of JSON takes CPython from 0.2 s
(a wide array of empty objects) to 2 s (arrays nested 60 deep, a list each) in one C
call that holds the interpreter lock, so a thread would still stop the event loop that
answers everybody. A body over :data:`OFF_LOOP_BYTES` is therefore read in a separate
process (:func:`parse_large_body`). What comes back is small, or plain bytes: whether it
is JSON the hub takes, the engine flags it held, the parameters' JSON text when it had
to change (flags taken out, the query merged in, lone surrogates cleaned) and a preview
bounded like history's copy. The hub never builds the value: the worker does
(:class:`~hub.engine.model.JsonParams`), against the job's own memory and time.
"""

from __future__ import annotations

import asyncio
import gc
import json
import multiprocessing
from collections.abc import AsyncGenerator
from concurrent.futures import ProcessPoolExecutor
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.formparsers import MultiPartParser

from hub.engine.model import JsonParams
from hub.history.record import bound_params
from shared.errors import BadRequest, TooManyRequests
from shared.text import (
    MAX_JSON_DEPTH,
    clean_json,
    clean_text,
    json_text_deeper_than,
    loads_json,
    may_hold_lone_surrogate,
)

__all__ = [
    "ENGINE_FLAGS",
    "OFF_LOOP_BYTES",
    "JsonParams",
    "params_off_process",
    "parse_exact_json",
    "parse_json",
    "parse_large_body",
    "refuse_lone_surrogates",
    "split_flags",
]

ENGINE_FLAGS = ("enableLogger", "raw", "_console", "_debug")
# A JSON or form body over this is parsed in another process.
OFF_LOOP_BYTES = 64 * 1024
_PARSERS = 2  # processes; more bodies than that wait their turn, the loop never does
# Bodies parsed or waiting for a parser at once; past it a caller is asked to come back
# (SYS-429) rather than queued, each queued body being up to WEBJOB_MAX_BODY_MB held.
MAX_WAITING = 8


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
        return loads_json(text)
    except RecursionError:  # pragma: no cover - the text was measured first
        raise BadRequest(f"{what} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError:
        raise BadRequest(f"{what} is not valid JSON") from None
    except UnicodeDecodeError as exc:  # the decoder's own wording is not the caller's business
        raise BadRequest(f"{what} is not valid JSON: byte {exc.start} is not UTF-8 (or UTF-16 or "
                         "UTF-32 with a byte order mark)") from None
    except ValueError as exc:  # NaN, Infinity, a number no job could read back
        raise BadRequest(f"{what} is not valid JSON: {exc}") from None


def refuse_lone_surrogates(data: dict[str, Any], fields: tuple[str, ...]) -> None:
    """HUB-001 when one of ``fields`` is text UTF-8 cannot carry: the hub keeps it
    (a job's code, a secret's value) and a silent U+FFFD would change what it does."""
    for name in fields:
        value = data.get(name)
        if isinstance(value, str) and clean_text(value) != value:
            raise BadRequest(f"'{name}' holds a lone surrogate (\\ud800-\\udfff), "
                             "which is not text: send the characters themselves")


def collect_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
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


def parse_form(body: bytes) -> dict[str, Any]:
    """An ``application/x-www-form-urlencoded`` body's fields."""
    return collect_pairs(parse_qsl(body.decode("utf-8", errors="replace"),
                                   keep_blank_values=True))


def split_flags(params: Any, flags: dict[str, str]) -> Any:
    """``params`` without the engine's flags, which go into ``flags``."""
    if isinstance(params, dict):
        for name in ENGINE_FLAGS:
            if name in params:
                value = params.pop(name)
                flags[name] = str(value[-1] if isinstance(value, list) else value)
    return params


def parse_multipart(body: bytes, content_type: str) -> dict[str, Any]:
    """A ``multipart/form-data`` body's text fields (files are left out)."""
    async def stream() -> AsyncGenerator[bytes, None]:
        yield body

    parser = MultiPartParser(Headers({"content-type": content_type}), stream())
    try:
        form = asyncio.run(parser.parse())
    except Exception:
        raise BadRequest("The multipart form could not be read") from None
    try:
        return collect_pairs([(clean_text(k), clean_text(v)) for k, v in form.multi_items()
                              if isinstance(v, str)])
    finally:
        asyncio.run(form.close())


def parse_large_body(body: bytes, query: dict[str, Any], form: bool = False,
                     multipart: str = "") -> tuple[str | None, dict[str, str], bytes | None, Any]:
    """In a parser process: (the refusal or None, the engine flags, the parameters'
    JSON text when it is not ``body`` as sent, their bounded preview). ``form``: an
    urlencoded body rather than JSON; ``multipart``: a multipart one's Content-Type."""
    # Millions of containers made at once set off the cyclic collector again and again,
    # each pass over everything made so far: the parse grows with the square of the
    # body. A parsed body holds no cycle, so the collector waits until it is built.
    gc.disable()
    try:
        data = (parse_multipart(body, multipart) if multipart else parse_form(body) if form
                else parse_exact_json(body))
    except BadRequest as exc:
        return exc.message, {}, None, None
    finally:
        gc.enable()
    flags: dict[str, str] = {}
    cleaned = clean_json(data) if may_hold_lone_surrogate(body) else data
    posted = split_flags(cleaned, flags)
    params = {**query, **posted} if isinstance(posted, dict) else posted
    as_sent = (not form and not multipart and cleaned is data and not flags and not query
               and not (body[:4].count(0) or body[:3] == b"\xef\xbb\xbf"
                        or body[:2] in (b"\xff\xfe", b"\xfe\xff")))
    text = None if as_sent else json.dumps(
        params, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return None, flags, text, bound_params(params)


_pool: ProcessPoolExecutor | None = None
_waiting = 0  # large bodies parsed or waiting for a parser, on this node


def _parsers() -> ProcessPoolExecutor:
    global _pool
    if _pool is None:  # started on the first large body: a hub that gets none never pays
        _pool = ProcessPoolExecutor(_PARSERS, mp_context=multiprocessing.get_context("spawn"))
    return _pool


def close_parsers() -> None:
    """End the parser processes (the hub is stopping): left running, they outlived it."""
    global _pool
    pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


async def params_off_process(body: bytes, query: dict[str, Any], flags: dict[str, str],
                             form: bool = False, multipart: str = "") -> JsonParams:
    """A large JSON (``form``, ``multipart``) body's parameters, parsed in a parser
    process; its engine flags go into ``flags``. HUB-001 for what the parse refuses."""
    global _waiting
    if _waiting >= MAX_WAITING:
        raise TooManyRequests("Too many large request bodies are being read; try again in a "
                              "moment", retry_after=1)
    _waiting += 1
    try:
        loop = asyncio.get_running_loop()
        refusal, found, text, preview = await loop.run_in_executor(
            _parsers(), parse_large_body, body, query, form, multipart)
    finally:
        _waiting -= 1
    if refusal is not None:
        raise BadRequest(refusal)
    flags.update(found)
    return JsonParams(body if text is None else text, preview)
