"""Typed management bodies: read a request body into its ``shared.wire`` dataclass, and
show every such body in ``/openapi.json``.

A body is read by the hub's own guarded reader (size cap, nesting depth, lone
surrogates: ``hub.api.inbound.read_json_object``), *inside* the route, after the caller
was checked: so nobody unauthenticated makes the hub read a large body, and a route can
refuse a bad path before reading. FastAPI therefore never sees the body parameter, so
:meth:`TypedBody.doc` goes in the route's ``openapi_extra`` and
:func:`install_wire_schemas` adds the dataclasses' schemas to the spec.

A body is read with ``shared.wire.decode``, the console's own reader of the same shapes:
one definition of what the wire takes, JSON's rules (``"1"`` is not a number, ``true``
is not ``1``); unknown keys are skipped. A failure is ``HUB-001`` naming the field.
pydantic only writes the shapes' schemas for the spec."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import FastAPI
from pydantic import TypeAdapter
from starlette.requests import Request

from hub.api.inbound import read_json_object
from shared.errors import BadRequest
from shared.wire import ShapeError, decode

__all__ = ["NO_BODY", "TypedBody", "install_wire_schemas", "wire_problem"]

T = TypeVar("T")
REF = "#/components/schemas/{model}"
_BODIES: dict[str, type] = {}  # every TypedBody's dataclass, by name, for the spec


@dataclass(frozen=True)
class TypedBody(Generic[T]):
    """A route's JSON body: its dataclass, its size cap and the fields in which a lone
    surrogate is refused (elsewhere it is carried as U+FFFD)."""

    model: type[T]
    limit: int
    exact: tuple[str, ...] = ()
    required: bool = True  # False: an empty body reads as {}

    def __post_init__(self) -> None:
        known = _BODIES.setdefault(self.model.__name__, self.model)
        if known is not self.model:
            raise TypeError(f"two wire bodies are named {self.model.__name__}")

    @property
    def doc(self) -> dict[str, Any]:
        """The route's ``openapi_extra``: its request body."""
        schema = {"$ref": REF.format(model=self.model.__name__)}
        return {"requestBody": {"required": self.required,
                                "content": {"application/json": {"schema": schema}}}}

    async def read(self, request: Request, limit: int | None = None) -> T:
        data = await read_json_object(request, self.limit if limit is None else limit,
                                      exact=self.exact)
        return self.check(data)

    def check(self, data: dict[str, Any]) -> T:
        """``data`` (an already-read JSON object) as the body's dataclass."""
        try:
            return decode(self.model, data)
        except ShapeError as err:
            raise BadRequest(wire_problem(err)) from None


# decode's words for what it expected, as a sentence about a field ends.
_MUST_BE = {"a boolean": "must be true or false", "an object": "must be a JSON object"}
_EXPECTED = re.compile(r"expected (.*?), got ")


def wire_problem(err: ShapeError) -> str:
    """The problem as an owner reads it: ``'cron' must be a string``, ``'items.0.n' must
    be a whole number``; of a field that may be null, what else it may be."""
    where = re.sub(r"\[(\d+)\]", r".\1", err.path).removeprefix("$").removeprefix(".")
    wanted = _EXPECTED.match(err.problem)
    if err.problem == "missing":
        said = "must be given"
    elif wanted is None:
        said = f"is not valid: {err.problem}"
    elif wanted[1].startswith("one of "):
        said = f"is not valid: it must be {wanted[1]}"
    else:
        said = _MUST_BE.get(wanted[1], f"must be {wanted[1]}")
    return f"'{where}' {said}" if where else f"The body {said}"


def install_wire_schemas(app: FastAPI) -> None:
    """Make ``app.openapi()`` carry every request body's schema under components."""
    make_spec = app.openapi

    def spec_with_bodies() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = make_spec()
        schemas = spec.setdefault("components", {}).setdefault("schemas", {})
        for name, model in sorted(_BODIES.items()):
            schema = TypeAdapter(model).json_schema(ref_template=REF, mode="validation")
            for sub_name, sub in schema.pop("$defs", {}).items():
                schemas.setdefault(sub_name, sub)
            schemas.setdefault(name, schema)
        return spec

    app.openapi = spec_with_bodies  # type: ignore[method-assign]


# The openapi_extra of a POST/PUT that takes no body (say so, or the spec test asks why
# it has none).
NO_BODY: dict[str, Any] = {"x-webjobs-body": "none"}
