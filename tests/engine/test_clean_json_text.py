"""``clean_json_text`` hands back JSON text with no lone-surrogate escape unchanged
(the very object: most results hold no backslash at all) and replaces each lone one."""

from __future__ import annotations

from hub.engine.protocol import clean_json_text


def test_text_without_a_lone_escape_is_handed_back_as_it_is() -> None:
    for text in (b'[{"id":1,"name":"row-1"}]', b'"a\\\\ud800"', b'"\\n\\u00e9"', b""):
        assert clean_json_text(text) is text


def test_each_lone_escape_is_the_replacement_character() -> None:
    assert clean_json_text(b'["\\ud800","\\uDBFF\\\\ud800"]') == (
        '["\ufffd","\ufffd\\\\ud800"]'.encode())
