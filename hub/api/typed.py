"""Typed management bodies: read a request body into its ``shared.wire`` dataclass, and
show every such body in ``/openapi.json``.

A body is read by the hub's own guarded reader (size cap, nesting depth, lone
surrogates: ``hub.api.inbound.read_json_object``), *inside* the route, after the caller
was checked: so nobody unauthenticated makes the hub read a large body, and a route can
refuse a bad path before reading. FastAPI therefore never sees the body parameter, so
:meth:`TypedBody.doc` goes in the route's ``openapi_extra`` and
:func:`install_wire_schemas` adds the dataclasses' schemas to the spec.

Validation is pydantic's strict JSON mode: ``"1"`` is not a number and ``true`` is not
``1``, as on the wire; unknown keys are skipped. A failure is ``HUB-001`` naming the
field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fastapi import FastAPI
from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request

from hub.api.inbound import read_json_object
from shared.errors import BadRequest

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
    _adapter: TypeAdapter[T] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_adapter", TypeAdapter(self.model))
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
            # json, not orjson: a body may hold a whole number past 64 bits.
            return self._adapter.validate_json(json.dumps(data), strict=True)
        except ValidationError as err:
            raise BadRequest(wire_problem(err)) from None


_MUST_BE = {
    "missing": "must be given", "string_type": "must be a string",
    "int_type": "must be a whole number", "int_from_float": "must be a whole number",
    "float_type": "must be a number", "bool_type": "must be true or false",
    "dict_type": "must be a JSON object", "dataclass_type": "must be a JSON object",
    "model_type": "must be a JSON object", "list_type": "must be an array",
    "tuple_type": "must be an array", "none_required": "must be null",
}


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "none", "list", "dict", "tuple"})


def wire_problem(err: ValidationError) -> str:
    """The first problem, as an owner reads it: ``'cron' must be a string``."""
    first = err.errors(include_url=False)[0]
    # A union's member shows in the path as its type ('params.dict[str,any]'): not a field.
    where = ".".join(str(part) for part in first["loc"]
                     if isinstance(part, int) or ("[" not in part and part not in _TYPE_TAGS))
    said = _MUST_BE.get(first["type"]) or f"is not valid: {first['msg']}"
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
