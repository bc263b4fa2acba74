"""shared.wire.decode: JSON values into the wire's dataclasses by their hints, JSON's
rules kept (true is not a number, a whole number is a float), and back with encode."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.wire import ShapeError, decode, encode


class Colour(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Inner:
    n: int
    ratio: float


@dataclass(frozen=True)
class Outer:
    name: str
    inner: Inner
    items: tuple[Inner, ...]
    tags: list[str]
    extra: dict[str, int]
    colour: Colour
    mode: Literal["a", 1]
    anything: Any
    flag: bool = False
    note: str | None = None
    nothing: None = None
    either: int | str = 0


GOOD: dict[str, Any] = {
    "name": "x", "inner": {"n": 1, "ratio": 2}, "items": [{"n": 2, "ratio": 0.5}],
    "tags": ["a"], "extra": {"k": 3}, "colour": "red", "mode": 1, "anything": [None],
    "flag": True, "note": None, "nothing": None, "either": "s",
}


def test_a_good_value_decodes_and_encodes_back() -> None:
    got = decode(Outer, GOOD)
    assert got.inner == Inner(1, 2.0) and isinstance(got.inner.ratio, float)
    assert got.items == (Inner(2, 0.5),) and got.tags == ["a"] and got.colour is Colour.RED
    assert encode(got) == {**GOOD, "inner": {"n": 1, "ratio": 2.0}}
    assert encode([Colour.BLUE, (1,)]) == ["blue", [1]]


def test_encode_can_leave_out_the_fields_that_are_none_and_only_those() -> None:
    got = decode(Outer, {**GOOD, "anything": {"kept": None}})
    sent = encode(got, drop_none=True)
    assert "note" not in sent and "nothing" not in sent
    assert sent == {k: v for k, v in encode(got).items() if v is not None}
    assert sent["anything"] == {"kept": None}  # a null inside a value is the value's
    assert encode([None], drop_none=True) == [None]


def test_defaults_fill_what_is_absent_and_unknown_keys_are_skipped_unless_strict() -> None:
    given_ = {k: v for k, v in GOOD.items() if k not in ("flag", "note", "nothing")}
    got = decode(Outer, {**given_, "later": 1})
    assert got.flag is False and got.note is None
    with pytest.raises(ShapeError, match=r"unknown keys \['later'\]"):
        decode(Outer, {**given_, "later": 1}, strict=True)


@pytest.mark.parametrize(("change", "where", "says"), [
    ({"name": 1}, "$.name", "expected a string, got a number"),
    ({"inner": {"n": True, "ratio": 1}}, "$.inner.n", "expected a whole number, got a boolean"),
    ({"inner": {"n": 1.0, "ratio": 1}}, "$.inner.n", "whole number"),
    ({"inner": {"n": 1, "ratio": "1"}}, "$.inner.ratio", "expected a number, got a string"),
    ({"inner": {"ratio": 1}}, "$.inner.n", "missing"),
    ({"inner": {"n": 1, "ratio": 10**400}}, "$.inner.ratio", "a double can hold"),
    ({"inner": []}, "$.inner", "expected an object, got an array"),
    ({"items": {}}, "$.items", "expected an array, got an object"),
    ({"items": [{"n": 1, "ratio": None}]}, "$.items[0].ratio", "got null"),
    ({"extra": {"k": "v"}}, "$.extra.k", "expected a whole number"),
    ({"colour": "green"}, "$.colour", "one of ['red', 'blue']"),
    ({"mode": True}, "$.mode", "one of ['a', 1]"),
    ({"mode": "b"}, "$.mode", "one of"),
    ({"flag": 1}, "$.flag", "expected a boolean"),
    ({"note": 5}, "$.note", "expected a string, got a number"),
    ({"either": 1.5}, "$.either", "expected a whole number, got a number or expected a string"),
    ({"nothing": 0}, "$.nothing", "expected null"),
    ({"tags": [object()]}, "$.tags[0]", "got object"),
])
def test_each_wrong_shape_says_where(change: dict[str, Any], where: str, says: str) -> None:
    with pytest.raises(ShapeError) as caught:
        decode(Outer, {**GOOD, **change})
    assert caught.value.path == where and says in str(caught.value)


def test_a_hint_the_wire_has_not_is_a_mistake_in_the_shape() -> None:
    @dataclass(frozen=True)
    class Odd:
        when: bytes

    with pytest.raises(TypeError, match="no type"):
        decode(Odd, {"when": "x"})


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@given(JSON)
def test_any_json_value_is_decoded_or_refused_with_shape_error(value: Any) -> None:
    try:
        got = decode(Outer, value)
    except ShapeError as err:
        assert err.path.startswith("$")
    else:
        assert json.loads(json.dumps(encode(got))) == encode(got)


@given(st.builds(Inner, st.integers(), st.floats(allow_nan=False, allow_infinity=False)))
def test_encode_then_decode_is_the_same_value(inner: Inner) -> None:
    assert decode(Inner, json.loads(json.dumps(encode(inner))), strict=True) == inner
