"""JSON values to the wire's dataclasses and back, by their type hints (stdlib only).

What a hint may be: a dataclass, ``str``, ``int``, ``float``, ``bool``, ``Any``,
``None``, a ``StrEnum``, ``Literal[...]``, ``tuple[X, ...]``, ``list[X]``,
``dict[str, X]`` and unions of these (``X | None``). JSON's rules apply: ``true`` is
not a number, a whole number is a float, an array is read as a tuple or list."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

__all__ = ["ShapeError", "decode", "encode"]

T = TypeVar("T")


class ShapeError(ValueError):
    """A JSON value that is not the shape asked for; ``path`` says where (``$.runs[2].id``)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def decode(cls: type[T], value: Any, *, strict: bool = False) -> T:
    """``value`` (parsed JSON) as ``cls``; :class:`ShapeError` when it is not one.
    Unknown keys of an object are skipped, or refused when ``strict``."""
    decoded: T = _read(cls, value, "$", strict)
    return decoded


def encode(value: Any, *, drop_none: bool = False) -> Any:
    """A dataclass (or anything built of them) as plain JSON values. ``drop_none``
    leaves out the dataclass's own fields that are None, for a request body where an
    absent field means "as it is" and a null would ask to clear it; a null inside a
    field's value (a job's parameter) is that value's and stays."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
        return {name: encode(item) for name, item in fields
                if not (drop_none and item is None)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _read(hint: Any, value: Any, path: str, strict: bool) -> Any:
    if hint is Any:
        return value
    if hint is None or hint is type(None):
        return _expect(value is None, value, path, "null")
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return _read_union(hint, value, path, strict)
    if origin is Literal:
        allowed = get_args(hint)  # True == 1 in Python; on the wire they differ
        return _expect(any(a == value and type(a) is type(value) for a in allowed),
                       value, path, f"one of {list(allowed)}")
    if origin in (tuple, list):
        return _read_sequence(hint, origin, value, path, strict)
    if origin is dict:
        return _read_mapping(get_args(hint)[1], value, path, strict)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _read_object(hint, value, path, strict)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _read_enum(hint, value, path)
    return _read_scalar(hint, value, path)


def _expect(ok: bool, value: Any, path: str, wanted: str) -> Any:
    if not ok:
        raise ShapeError(path, f"expected {wanted}, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def _read_scalar(hint: Any, value: Any, path: str) -> Any:
    if hint is bool:
        return _expect(isinstance(value, bool), value, path, "a boolean")
    if hint is int:
        return _expect(type(value) is int, value, path, "a whole number")
    if hint is float:
        _expect(type(value) in (int, float), value, path, "a number")
        try:
            return float(value)
        except OverflowError:  # a whole number past a double's range
            raise ShapeError(path, "expected a number a double can hold, got a number") from None
    if hint is str:
        return _expect(isinstance(value, str), value, path, "a string")
    raise TypeError(f"{path}: the wire has no type {hint!r}")  # a mistake in a shape


def _read_union(hint: Any, value: Any, path: str, strict: bool) -> Any:
    options = get_args(hint)
    if value is None and type(None) in options:
        return None
    given = [option for option in options if option is not type(None)]
    if len(given) == 1:  # X | None with a value: X's own problem, with its own path
        return _read(given[0], value, path, strict)
    problems = []
    for option in options:
        try:
            return _read(option, value, path, strict)
        except ShapeError as err:
            problems.append(err.problem)
    raise ShapeError(path, " or ".join(problems))


def _read_sequence(hint: Any, origin: type, value: Any, path: str, strict: bool) -> Any:
    _expect(isinstance(value, list), value, path, "an array")
    item = get_args(hint)[0]  # tuple[X, ...] and list[X]: the item's hint comes first
    items = [_read(item, v, f"{path}[{i}]", strict) for i, v in enumerate(value)]
    return tuple(items) if origin is tuple else items


def _read_mapping(item: Any, value: Any, path: str, strict: bool) -> Any:
    _expect(isinstance(value, dict), value, path, "an object")
    return {k: _read(item, v, f"{path}.{k}", strict) for k, v in value.items()}


def _read_object(cls: type, value: Any, path: str, strict: bool) -> Any:
    _expect(isinstance(value, dict), value, path, "an object")
    hints = _hints(cls)
    given: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        if field.name in value:
            given[field.name] = _read(hints[field.name], value[field.name],
                                      f"{path}.{field.name}", strict)
        elif (field.default is dataclasses.MISSING
              and field.default_factory is dataclasses.MISSING):
            raise ShapeError(f"{path}.{field.name}", "missing")
    if strict:
        unknown = sorted(set(value) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ShapeError(path, f"unknown keys {unknown}")
    return cls(**given)


def _read_enum(cls: type[enum.Enum], value: Any, path: str) -> Any:
    try:
        return cls(value)
    except ValueError:
        raise ShapeError(path, f"expected one of {[m.value for m in cls]}, "
                               f"got {_kind(value)}") from None
