"""shared.text: every string the hub writes can be encoded as UTF-8."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.text import (
    REPLACEMENT,
    clean_json,
    clean_text,
    json_text_deeper_than,
    loads_json,
    may_hold_lone_surrogate,
    nesting_depth,
    nests_deeper_than,
)

# Every code point, lone surrogates included (hypothesis leaves out Cs by default).
ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()))
def _json_values(floats: st.SearchStrategy[float],
                 ints: st.SearchStrategy[int]) -> st.SearchStrategy[object]:
    return st.recursive(
        st.none() | st.booleans() | ints | floats | ANY_TEXT,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner,
                                                                      max_size=4),
        max_leaves=20)


JSON_VALUES = _json_values(st.floats(allow_nan=False), st.integers())
# What a job can read back: no NaN, no infinity, no integer beyond a double's range.
FINITE_JSON_VALUES = _json_values(st.floats(allow_nan=False, allow_infinity=False),
                                  st.integers(min_value=-(2**63), max_value=2**63))


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    assert clean_text("x\ud800y") == f"x{REPLACEMENT}y"
    assert clean_text("\udfff") == REPLACEMENT
    assert clean_text("😀😀"[:3]) == "😀😀"[:3]  # Python's str is code points: no cut pair


def test_a_surrogate_pair_becomes_its_character() -> None:
    assert clean_text("\ud83d\ude00") == "😀"


def test_clean_text_is_returned_as_it_is() -> None:
    text = "café ☕"
    assert clean_text(text) is text


@given(ANY_TEXT)
def test_cleaned_text_always_encodes(text: str) -> None:
    cleaned = clean_text(text)
    cleaned.encode("utf-8")
    assert len(cleaned) <= len(text)


@given(JSON_VALUES)
def test_cleaned_json_always_encodes(value: object) -> None:
    json.dumps(clean_json(value), ensure_ascii=False).encode("utf-8")


def test_clean_json_keeps_what_needs_nothing() -> None:
    value = {"a": ["b", {"c": 1}], "d": None}
    assert clean_json(value) is value
    assert clean_json({"k\ud800": ["\udc00"]}) == {f"k{REPLACEMENT}": [REPLACEMENT]}


def test_nesting_depth_needs_no_recursion() -> None:
    assert nesting_depth(1) == 0
    assert nesting_depth([]) == 1
    assert nesting_depth({"a": [1, {"b": []}]}) == 4
    deep: object = []
    for _ in range(100_000):
        deep = [deep]
    assert nesting_depth(deep) == 100_001


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e999", "-1e400",
                                  "1" + "0" * 309, "1" * 5000])
def test_loads_json_refuses_what_no_job_could_read(text: str) -> None:
    with pytest.raises(ValueError):
        loads_json(text)


@given(FINITE_JSON_VALUES)
def test_loads_json_reads_back_every_finite_value(value: object) -> None:
    assert loads_json(json.dumps(value)) == value


@given(FINITE_JSON_VALUES)
def test_what_is_skipped_needs_no_cleaning_or_depth_walk(value: object) -> None:
    for raw in (json.dumps(value), json.dumps(value, ensure_ascii=False).encode("utf-8",
                                                                             "surrogatepass")):
        parsed = json.loads(raw)
        if not may_hold_lone_surrogate(raw):
            assert clean_json(parsed) == parsed
        assert nests_deeper_than(raw, parsed, 2) == (nesting_depth(parsed) > 2)


def test_utf16_json_bytes_are_walked() -> None:
    assert may_hold_lone_surrogate('"\ud800"'.encode("utf-16-le", "surrogatepass"))
    assert may_hold_lone_surrogate(b'{"a":"\\ud800"}')
    assert not may_hold_lone_surrogate('{"a":"é"}'.encode())


# ---------------------------------------------------------------- depth, read from the text


@given(value=JSON_VALUES, depth=st.integers(0, 12))
def test_the_depth_read_from_the_text_is_the_parsed_values(value: object, depth: int) -> None:
    """Strings holding brackets, quotes and escapes included: the text's reading agrees
    with a walk of the parsed value, as str, as UTF-8 and as UTF-16 bytes."""
    text = json.dumps(value)
    expected = nesting_depth(value) > depth
    assert json_text_deeper_than(text, depth) is expected
    assert json_text_deeper_than(text.encode(), depth) is expected
    assert json_text_deeper_than(text.encode("utf-16"), depth) is expected


@pytest.mark.parametrize("text", [
    r'["\\"]', r'{"a[": "]{\"["}', "[" * 5 + "]" * 5,
    "[" + "[" * 30 + "1" + "]" * 30 + "," + ("[" * 30 + "1" + "]" * 30 + ",") * 300 + "1]",
])
def test_brackets_in_strings_do_not_count_and_chains_do(text: str) -> None:
    """Long chains shrink little a pass: the rest is read from the runs of brackets."""
    for depth in (3, 7, 31, 32, 40):
        assert json_text_deeper_than(text, depth) is (nesting_depth(json.loads(text)) > depth)


@pytest.mark.parametrize("text", ["]]]]]]]][[[[[[[[", "[[[[[[[[[" + "]" * 3, "}{" * 10,
                                  "]" + ("[" * 30 + "1" + "]" * 30 + ",") * 300])
def test_text_that_is_not_json_is_left_to_the_parser(text: str) -> None:
    assert json_text_deeper_than(text, 2) is False or text.count("[") > text.count("]")


def test_bytes_that_are_no_text_are_left_to_the_parser() -> None:
    """gzip sent as JSON: NULs at its start make it look UTF-16 or UTF-32, and no
    encoding reads it; the depth reading says nothing and the parser refuses it."""
    assert json_text_deeper_than(b"\x1f\x8b\x08\x00" + b"\xff" * 100, 2) is False
