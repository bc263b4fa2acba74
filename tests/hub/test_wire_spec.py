"""Every management route's bodies are in ``/openapi.json``: an answer schema that says
what comes back (a ``shared.wire`` dataclass, not "any object"), and for a POST or PUT
its request body's schema, or ``NO_BODY`` saying there is none. Calling the routes with
valid and invalid bodies is test_schemathesis.py's, over this same spec."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any

import pytest

import shared.wire
from tests.hub.conftest import TEST_SECRET

# A job's own answer is whatever the job returns: the run route has no schema to give.
RUN_ROUTE = "/api/webjobs/{name}"
HTTP_METHODS = ("get", "post", "put", "delete")  # a path item's other keys are not operations


@pytest.fixture(scope="session")
def hub_spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The spec of a hub made in a temp home (the spec does not depend on the home),
    built when a test here first asks for it, never at collection."""
    from hub.api.app import create_app
    from hub.settings import load_settings

    home = str(tmp_path_factory.mktemp("spec"))
    made: dict[str, Any] = create_app(load_settings({
        "WEBHUB_HOME": home, "WEBHUB_SECRET": TEST_SECRET})).openapi()
    return made


def operations(spec_: dict[str, Any],
               methods: tuple[str, ...] = HTTP_METHODS) -> list[tuple[str, str]]:
    """Every management operation of ``spec_`` as (path, method)."""
    return [(path, method) for path, item in spec_["paths"].items() if path != RUN_ROUTE
            for method in item if method in methods]


def _resolve(spec_: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    found: dict[str, Any] = spec_["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return found


def _says_something(spec_: dict[str, Any], schema: dict[str, Any]) -> bool:
    """A schema with named properties (or a list of such), not an open object."""
    schema = _resolve(spec_, schema)
    if "anyOf" in schema:
        return all(_says_something(spec_, s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return _says_something(spec_, schema.get("items", {}))
    return bool(schema.get("properties")) or schema.get("type") in ("string", "integer")


def _answer_problem(spec_: dict[str, Any], path: str, method: str) -> str | None:
    operation = spec_["paths"][path][method]
    ok = next((r for code, r in operation["responses"].items() if code.startswith("2")), None)
    if ok is None:
        return f"{method.upper()} {path} documents no 2xx answer"
    content = ok.get("content", {})
    if not content:  # 204: nothing comes back
        return None
    schema = next(iter(content.values())).get("schema", {})
    if not _says_something(spec_, schema):
        return f"{method.upper()} {path}: its answer is not a shared.wire shape ({schema})"
    return None


def _body_problem(spec_: dict[str, Any], path: str, method: str) -> str | None:
    operation = spec_["paths"][path][method]
    if operation.get("x-webjobs-body") == "none":
        return (None if "requestBody" not in operation
                else f"{method.upper()} {path}: NO_BODY and a request body")
    body = operation.get("requestBody")
    if body is None:
        return f"{method.upper()} {path}: no request body and no NO_BODY"
    if not all(_says_something(spec_, media["schema"]) for media in body["content"].values()):
        return f"{method.upper()} {path}: its request body is not a shared.wire shape"
    return None


def test_every_answer_has_a_shape(hub_spec: dict[str, Any]) -> None:
    ops = operations(hub_spec)
    assert len(ops) > 20  # the routes were found
    problems = [p for path, method in ops if (p := _answer_problem(hub_spec, path, method))]
    assert problems == [], "\n".join(problems)


def test_every_post_or_put_declares_a_body_or_none(hub_spec: dict[str, Any]) -> None:
    ops = operations(hub_spec, ("post", "put"))
    assert len(ops) > 10  # the routes were found
    problems = [p for path, method in ops if (p := _body_problem(hub_spec, path, method))]
    assert problems == [], "\n".join(problems)


def _wire_shapes() -> list[type]:
    found = []
    for info in pkgutil.iter_modules(shared.wire.__path__):
        module = importlib.import_module(f"shared.wire.{info.name}")
        found += [v for v in vars(module).values()
                  if isinstance(v, type) and dataclasses.is_dataclass(v)
                  and v.__module__ == module.__name__]
    return found


def test_every_wire_shape_is_frozen_and_named_once() -> None:
    shapes = _wire_shapes()
    assert shapes
    names = [s.__name__ for s in shapes]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
    assert [s.__name__ for s in shapes if not s.__dataclass_params__.frozen] == []  # type: ignore[attr-defined]


def test_every_wire_shape_is_in_the_spec(hub_spec: dict[str, Any]) -> None:
    """A shape no route uses is a shape nobody keeps in step with the hub."""
    schemas = hub_spec["components"]["schemas"]
    assert sorted(s.__name__ for s in _wire_shapes() if s.__name__ not in schemas) == []
