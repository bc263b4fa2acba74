"""The job-name rules both sides check with: the whole name, ASCII letters, digits, _ and -."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shared.names import JOB_NAME_RE, MAX_NAME_LENGTH, RESERVED_NAMES


def test_a_final_newline_or_any_other_character_is_refused() -> None:
    assert JOB_NAME_RE.match("public_ping-2")
    for bad in ("evil\n", "a b", "ä", "", "a/b", "a.b"):
        assert not JOB_NAME_RE.match(bad), bad


@given(st.text(max_size=20))
def test_a_name_matches_exactly_when_every_character_is_allowed(name: str) -> None:
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
    assert bool(JOB_NAME_RE.match(name)) == (bool(name) and set(name) <= allowed)


def test_reserved_names_are_names_and_the_cap_is_sane() -> None:
    assert all(JOB_NAME_RE.match(name) for name in RESERVED_NAMES)
    assert "health" in RESERVED_NAMES and MAX_NAME_LENGTH == 100
