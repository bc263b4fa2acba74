"""Text that UTF-8 can carry, and JSON whose shape the hub can afford.

JSON and JavaScript strings are UTF-16: ``"\\ud800"`` is valid JSON text and a valid
JavaScript string, but no UTF-8 encoder takes a lone surrogate. Everything the hub
writes — the worker protocol, history, the spool, the log, NDJSON — is UTF-8, so
text from outside (a request body, a job's output) passes :func:`clean_text` or
:func:`clean_json` first: a surrogate pair becomes the character it stands for, a
lone surrogate becomes U+FFFD. Nothing else changes, and text that is already
clean is returned as it is (the common case costs one encode).

:func:`nesting_depth` measures a parsed JSON value without recursion, so a
request nested thousands deep is refused at the door instead of overflowing a
recursive encoder later.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
import sys
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "REPLACEMENT", "clean_json", "clean_text", "json_text_deeper_than",
           "loads_json", "may_hold_lone_surrogate", "nesting_depth", "nests_deeper_than"]

REPLACEMENT = "\ufffd"
# How deep JSON from outside may nest: far more than any real payload, far less than
# what a recursive encoder (Python's or the worker protocol's) can take.
MAX_JSON_DEPTH = 64


def clean_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates as U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 with surrogatepass keeps every code unit; decoding it back joins a
        # high+low pair into its character and replaces each lone one.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean_json(value: Any) -> Any:
    """A JSON value (dicts, lists, scalars) with every key and string cleaned.

    What needed no cleaning is returned as it is (the same object); the walk itself
    still builds a list a container (:func:`may_hold_lone_surrogate` tells when to skip
    it). It recurses: callers bound the depth first (the door refuses deep requests; a
    parsed job output is as deep as ``json`` allowed)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        items = [clean_json(v) for v in value]
        changed = any(a is not b for a, b in zip(value, items, strict=True))
        return items if changed else value
    if isinstance(value, dict):
        pairs = [(clean_json(k), clean_json(v)) for k, v in value.items()]
        changed = any(k is not k2 or v is not v2
                      for (k, v), (k2, v2) in zip(value.items(), pairs, strict=True))
        return dict(pairs) if changed else value
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:24]} is beyond a double's range")
    return value


def _int_a_job_can_read(text: str) -> int:
    value = int(text)  # Python itself refuses more than 4300 digits (ValueError)
    if abs(value) > sys.float_info.max:
        raise ValueError(f"the number {text[:24]}… is beyond a double's range")
    return value


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_json(text: str | bytes) -> Any:
    """``json.loads`` as RFC 8259 means JSON: ``NaN``, ``Infinity`` and numbers beyond a
    double's range raise ``ValueError`` (Python takes them; a job's JSON could not
    carry them back: they became ``Infinity`` text V8 cannot parse, or ``null``)."""
    return json.loads(text, parse_float=_finite_float, parse_int=_int_a_job_can_read,
                      parse_constant=_not_a_number)


def may_hold_lone_surrogate(raw: str | bytes) -> bool:
    """Whether JSON text could parse to a lone surrogate. ``json`` reads bytes with
    ``surrogatepass``, so besides a ``\\udXXX`` escape an encoded surrogate
    (``ED A0..BF``) makes one, and UTF-16/32 bytes are walked; a ``str`` could hold one
    itself. False lets a caller skip :func:`clean_json`'s walk."""
    if isinstance(raw, str):
        return "\\ud" in raw or "\\uD" in raw or clean_text(raw) is not raw
    if raw[:4].count(0) or raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    return (b"\\ud" in raw or b"\\uD" in raw
            or (b"\xed" in raw and _ENCODED_SURROGATE.search(raw) is not None))


_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")


def nests_deeper_than(raw: str | bytes, value: Any, depth: int) -> bool:
    """Whether parsed JSON ``value`` (read from ``raw``) nests deeper than ``depth``;
    text with no more brackets than that cannot, and is not walked."""
    brackets = (raw.count("[") + raw.count("{") if isinstance(raw, str)
                else raw.count(b"[") + raw.count(b"{"))
    return brackets > depth and nesting_depth(value) > depth


# Outside strings, only brackets matter to depth, and a brace counts as a bracket.
_TO_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_CHUNK = 256 * 1024  # each C call below holds the GIL for a few milliseconds at most
_RUNS = re.compile(rb"\[+|\]+")


def _outside_strings(text: bytes) -> list[bytes]:
    """The brackets of JSON text (its escapes already removed, so every quote opens or
    closes a string) that are not inside a string, a chunk at a time."""
    out, inside = [], False
    for start in range(0, len(text), _CHUNK):
        parts = text[start:start + _CHUNK].split(b'"')
        kept = b"".join(parts[1::2] if inside else parts[::2])
        out.append(kept.translate(_TO_BRACKETS, _NOT_BRACKETS))
        inside ^= len(parts) % 2 == 0  # an odd number of quotes in the chunk
    return out


def json_text_deeper_than(raw: str | bytes, depth: int) -> bool:
    """Whether JSON *text* nests deeper than ``depth``, read from the text before
    anything is parsed: strings dropped, then one nesting level stripped a pass
    (every ``[]`` left is innermost) — text still left after ``depth`` passes is
    deeper; once a pass strips little for its length (few, long chains), the rest of the
    depth is read from the lengths of the runs of brackets. Each step is a C call over at
    most a chunk or the brackets left, so no parsed value is walked. Text that is not
    JSON may be read either way; the parser refuses it."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    elif raw[:4].count(0) or raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        # UTF-16 or UTF-32, which json reads too: its code units could look like quotes.
        try:
            raw = raw.decode(json.detect_encoding(raw), "surrogatepass").encode(
                "utf-8", "surrogatepass")
        except UnicodeError:
            return False  # not text at all (gzip, say): the parser refuses it
    if raw.count(b"[") + raw.count(b"{") <= depth:
        return False
    brackets = b"".join(_outside_strings(raw.replace(b"\\\\", b"").replace(b'\\"', b"")))
    stripped_levels = 0
    while brackets and stripped_levels < depth:
        stripped = brackets.replace(b"[]", b"")
        if len(stripped) == len(brackets):
            return False  # unbalanced: not JSON, and the parser says so
        stripped_levels += 1
        shrank, brackets = len(brackets) - len(stripped), stripped
        if shrank * 10 < len(brackets):
            break  # few leaves left for their length: read the rest from its runs
    if not brackets or stripped_levels >= depth:
        return bool(brackets)
    # Runs of "[" then "]" alternate; the depth is the running sum's peak.
    runs = _RUNS.findall(brackets)
    if runs[0][0] != ord("["):
        return False
    signed = map(operator.mul, map(len, runs), itertools.cycle((1, -1)))
    peak: int = max(itertools.accumulate(signed))
    return stripped_levels + peak > depth


def nesting_depth(value: Any) -> int:
    """How deep a JSON value nests (a scalar is 0, ``[]`` and ``{}`` are 1)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest
