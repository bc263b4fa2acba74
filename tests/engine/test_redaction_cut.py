"""Redactor.cut finds the longest tail that begins a secret value in linear time,
with the same results as the quadratic search it replaced."""

from __future__ import annotations

from hub.engine.redaction import MASK, Redactor


def reference_cut(redactor: Redactor, text: str) -> str:
    """The former implementation: every tail size, longest first."""
    text = redactor.text(text)
    for value in redactor.values:
        for size in range(min(len(value) - 1, len(text)), 0, -1):
            if text.endswith(value[:size]):
                return text[:-size] + MASK
    return text


CASES = [
    (["s3cret"], "token=s3c"),
    (["s3cret"], "token=s3cret and s3"),
    (["s3cret"], "nothing here"),
    (["s3cret"], ""),
    (["s3cret"], "s"),
    (["aaab"], "xaaaaaa"),
    (["abab"], "zababa"),
    (["abcabd"], "..abcab"),
    (["long-secret-value", "lo"], "see l"),
    (["long-secret-value", "xyz"], "a long-sec"),
    (['q"uote'], 'say q\\"uo'),
    (["ünï"], "prefix ün"),
    (["secret"], "secre" + "secret"[:3]),
]


def test_cut_matches_the_former_search() -> None:
    for values, text in CASES:
        redactor = Redactor(values)
        assert redactor.cut(text) == reference_cut(redactor, text), (values, text)


def test_cut_masks_the_longest_tail() -> None:
    redactor = Redactor(["abcabd"])
    assert redactor.cut("..abcab") == ".." + MASK
    assert redactor.cut("..abca") == ".." + MASK
    assert redactor.cut("..abd") == "..abd"


def test_cut_of_a_full_length_line_against_a_longest_value() -> None:
    # (its speed is not asserted here: the suite times nothing)
    secret = "a" * 16_384 + "b"
    redactor = Redactor([secret])
    assert redactor.cut("a" * 16_384) == MASK
    assert redactor.cut("x" * 16_384) == "x" * 16_384


def test_bytes_masks_and_keeps_other_bytes() -> None:
    redactor = Redactor(["s3cret"])
    assert redactor.bytes(b"a s3cret \xff") == b"a *** \xff"
    assert Redactor().bytes(b"s3cret") == b"s3cret"


def test_history_masks_only_what_it_keeps_with_the_same_result() -> None:
    from hub.history.record import MAX_RESULT_BYTES, bound_result
    from hub.services.history import _masked_body

    secret = "s3cret-value-" * 8
    redactor = Redactor([secret, "ab"])
    bodies = [b"x" * 10, (secret * 9000).encode(), b"y" * (MAX_RESULT_BYTES - 5) + secret.encode(),
              (("ab" * 40_000) + secret * 100).encode(), b"\xff" + secret.encode() * 700]
    for body in bodies:
        kept = bound_result(_masked_body(body, redactor), "text/plain")[:2]  # (text, truncated)
        assert kept == bound_result(redactor.bytes(body), "text/plain")[:2]
