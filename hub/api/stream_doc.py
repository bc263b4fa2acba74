"""How a route that answers with an NDJSON stream shows in ``/openapi.json``: as
``application/x-ndjson`` whose lines are the shapes it names.

A streaming route returns its own ``StreamingResponse``, so FastAPI never serializes
its answer; :func:`ndjson_answer` only gives the route's decorator what the spec says.
The response class is a ``JSONResponse`` for the spec's sake alone: FastAPI writes a
non-JSON class's answer as a bare string, without the lines' schema."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from hub.api.answers import NDJSON

__all__ = ["NDJSONLines", "ndjson_answer"]


class NDJSONLines(JSONResponse):
    """The spec's name for an NDJSON answer (never sent: the route streams its own)."""

    media_type = NDJSON


def ndjson_answer(lines: Any, about: str) -> dict[str, Any]:
    """The decorator's keywords for a stream whose lines are ``lines`` (a union of
    dataclasses), ``about`` saying how they follow each other."""
    return {"response_class": NDJSONLines, "response_model": lines,
            "response_description": about}
