"""hub.api.typed.TypedBody: any JSON object is either its shape or HUB-001 naming the
field — never another exception (which would be a 500)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub.api.typed import TypedBody
from shared.errors import BadRequest


@dataclass(frozen=True)
class ProbeItem:
    n: int


@dataclass(frozen=True)
class ProbeBody:
    name: str
    count: int = 0
    ratio: float = 0.0
    on: bool = False
    mode: Literal["a", "b"] = "a"
    params: dict[str, Any] | None = None
    items: tuple[ProbeItem, ...] = ()
    note: str | None = None


BODY = TypedBody(ProbeBody, 10_000)


@pytest.mark.parametrize(("data", "says"), [
    ({}, "'name' must be given"),
    ({"name": 1}, "'name' must be a string"),
    ({"name": "x", "count": "1"}, "'count' must be a whole number"),
    ({"name": "x", "count": True}, "'count' must be a whole number"),
    ({"name": "x", "count": 1.5}, "'count' must be a whole number"),
    ({"name": "x", "on": 1}, "'on' must be true or false"),
    ({"name": "x", "params": [1]}, "'params' must be a JSON object"),
    ({"name": "x", "note": 5}, "'note' must be a string"),
    ({"name": "x", "items": {}}, "'items' must be an array"),
    ({"name": "x", "items": [{"n": "1"}]}, "'items.0.n' must be a whole number"),
    ({"name": "x", "mode": "c"}, "'mode' is not valid"),
    ({"name": "x", "ratio": 10**400}, "'ratio' must be a number a double can hold"),
])
def test_a_wrong_body_names_its_field(data: dict[str, Any], says: str) -> None:
    with pytest.raises(BadRequest) as caught:
        BODY.check(data)
    assert caught.value.message.startswith(says), caught.value.message


def test_json_numbers_as_json_reads_them() -> None:
    got = BODY.check({"name": "x", "count": 10**25, "ratio": 2, "items": [{"n": 1}],
                      "unknown": 1})
    assert got.count == 10**25 and got.ratio == 2.0 and got.items == (ProbeItem(1),)


def test_two_bodies_of_one_name_are_a_mistake() -> None:
    @dataclass(frozen=True)
    class ProbeBody:  # another class, the same name as the one above
        x: int

    with pytest.raises(TypeError, match="two wire bodies"):
        TypedBody(ProbeBody, 10)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=15)
FIELDS = st.sampled_from(["name", "count", "ratio", "on", "mode", "params", "items", "note"])


@given(st.dictionaries(FIELDS | st.text(max_size=6), JSON, max_size=8))
def test_any_object_is_the_shape_or_hub_001(data: dict[str, Any]) -> None:
    try:
        BODY.check(data)
    except BadRequest as err:
        assert err.code == "HUB-001" and err.message.startswith(("'", "The body"))
