"""The worker protocol writes and reads its lines with orjson, and what crosses is what
the standard ``json`` made of it: each difference between the two goes the old way.

The reference below is the protocol as it was before orjson (``json`` alone)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine import crossing, protocol
from shared.text import clean_json


def reference_encode(obj: Any) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(clean_json(obj), ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8") + b"\n"


def reference_decode(line: bytes) -> Any:
    if b"\\u" in line and protocol._LONE_ESCAPE.search(line):
        return clean_json(json.loads(line))
    return json.loads(line)


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types (1 is not 1.0, NaN is NaN)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) and (
        _types(a) == _types(b))


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
SCALARS = (st.none() | st.booleans() | TEXT
           | st.integers(min_value=-(10**25), max_value=10**25)
           | st.integers(min_value=-(2**64), max_value=2**64)
           | st.floats(allow_nan=False, allow_infinity=False))
KEYS = TEXT | st.integers(-5, 5) | st.booleans() | st.none()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_a_line_reads_as_the_json_line_did(value: Any) -> None:
    line = protocol.encode({"v": value})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert same(json.loads(line), json.loads(reference_encode({"v": value})))


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans())
def test_a_line_is_read_as_json_reads_it(value: Any, ascii_only: bool) -> None:
    cleaned = clean_json(value)  # json writes a lone surrogate only as an escape
    line = json.dumps({"v": cleaned}, ensure_ascii=ascii_only).encode() + b"\n"
    assert same(protocol.decode(line), reference_decode(line))


@pytest.mark.parametrize("line", [
    b'{"n":12345678901234567890123}',      # beyond 64 bits: an int, not a float
    b'{"n":18446744073709551616}',
    b'{"n":-9223372036854775809}',
    b'{"n":[NaN,Infinity,-Infinity]}',     # json reads them; orjson refuses them
    b'{"n":1e400}',
    b'{"s":"\\ud800"}',                     # a lone surrogate escape: U+FFFD
    b'{"s":"\xed\xa0\x80"}',                # a surrogate written as UTF-8
    b'{"s":"caf\xc3\xa9 \\u00e9 \\ud83d\\ude00"}',
    b'\xef\xbb\xbf{"bom":1}',
    b'"text"',
])
def test_lines_orjson_reads_differently(line: bytes) -> None:
    assert same(protocol.decode(line), reference_decode(line))


@pytest.mark.parametrize("depth", [900, 901])  # orjson's, then json's
def test_deep_lines_are_read_as_json_reads_them(depth: int) -> None:
    line = b"[" * depth + b"]" * depth
    assert protocol.decode(line) == reference_decode(line)


@pytest.mark.parametrize("depth", [1010, 1030, 5000])
def test_nesting_json_refuses_is_still_refused(depth: int) -> None:
    """json gives up near its recursion limit (orjson would read 1,024 levels)."""
    line = b"[" * depth + b"]" * depth
    with pytest.raises(RecursionError):
        reference_decode(line)
    with pytest.raises(RecursionError):
        protocol.decode(line)


def test_a_line_json_cannot_read_fails_as_it_did() -> None:
    for line in (b'{"a":', b'{"a":1}x', b'\xff', b"{'a': 1}"):
        with pytest.raises(ValueError):
            protocol.decode(line)
        with pytest.raises(ValueError):
            json.loads(line)


def test_the_sandbox_json_is_read_as_json_reads_it() -> None:
    for text in ('{"a":"\ud800"}', '{"n":99999999999999999999}', '[1,2.5,"é"]', "nope", ""):
        expected = crossing.parse_json(text.encode("utf-8", "surrogatepass"))
        try:
            reference: Any = json.loads(text)
        except ValueError:
            reference = None
        assert same(crossing.parse_json(text), reference)
        if "\ud800" not in text:
            assert same(expected, reference)


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize("value", [
    datetime.datetime(2026, 1, 1), datetime.date(2026, 1, 1), _Point(1), {1, 2}, b"bytes",
    object(),
])
def test_a_value_json_refuses_is_still_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        reference_encode({"v": value})
    with pytest.raises(TypeError):
        protocol.encode({"v": value})


def test_keys_that_are_not_text_are_written_as_json_writes_them() -> None:
    value: dict[Any, Any] = {1: "a", False: "b", None: "c", 2.5: "d", "e": {3: [4]}}
    assert protocol.encode(value) == reference_encode(value)


def test_deep_nesting_is_written_as_json_writes_it() -> None:
    value: Any = []
    for _ in range(300):  # orjson stops at 255 levels
        value = [value]
    assert protocol.encode({"v": value}) == reference_encode({"v": value})


def test_a_number_no_json_can_carry_crosses_as_null() -> None:
    """The one difference (see the module docstring of hub.engine.protocol): nothing
    sends one, and V8's JSON could not have read json's ``NaN``."""
    line = protocol.encode({"v": [math.nan, math.inf, -math.inf, 1.5]})
    assert json.loads(line) == {"v": [None, None, None, 1.5]}
