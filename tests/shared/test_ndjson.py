"""shared.ndjson: the line types, the writer and the tolerant stream reader."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.ndjson import (
    DebugAnswer,
    DebugExpanded,
    DebugPause,
    DebugRequest,
    DebugStart,
    Failure,
    LogLine,
    MetaData,
    Payload,
    UnknownLine,
    encode_line,
    parse_line,
    read_stream,
)
from shared.text import clean_text

LOG = LogLine("info", "héllo — 世界 🚀", 12)
META = MetaData(jobId="job_1", type="json", format="application/json", status=200,
                contentLength=11, runtime=84)
FAIL = Failure(error="über kaputt", code="JOB-003", runtime=9, limit="cpu")
FULL_META = MetaData("j", "csv", "text/csv", 200, 3, 1, filename="a.csv")
FULL_FAIL = Failure("e", "JOB-001", "r", 1, "memory", 2, 3)


def _one_line(event: LogLine | MetaData | Failure) -> dict[str, object]:
    data = encode_line(event)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    obj: dict[str, object] = json.loads(data)
    return obj


def test_encode_log_line() -> None:
    data = encode_line(LogLine("warn", "a\nb", 5))
    assert data == b'{"type":"log","level":"warn","message":"a\\nb","t":5}\n'


def test_encode_keeps_non_ascii_as_utf8() -> None:
    data = encode_line(LOG)
    assert "héllo — 世界 🚀".encode() in data and b"\\u" not in data
    assert _one_line(LOG)["message"] == LOG.message


def test_encode_meta_omits_none_fields() -> None:
    obj = _one_line(META)
    assert "filename" not in obj
    assert obj["isMetaData"] is True and obj["success"] is True and obj["type"] == "json"
    assert _one_line(FULL_META)["filename"] == "a.csv"


def test_encode_failure_omits_none_fields() -> None:
    obj = _one_line(FAIL)
    assert obj == {"error": "über kaputt", "code": "JOB-003", "runtime": 9, "limit": "cpu",
                   "success": False}


@pytest.mark.parametrize("event", [LOG, META, FAIL, FULL_META, FULL_FAIL])
def test_parse_line_round_trips(event: LogLine | MetaData | Failure) -> None:
    assert parse_line(encode_line(event)) == event
    assert parse_line(encode_line(event).decode()) == event


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"", None), (b"   ", None), (b"not json", None), (b"[1,2]", None), (b"42", None),
        (b'"str"', None), (b"\xff\xfe{", None),
        (b'{"type":"log"}', LogLine("log", "", 0)),
        (b'{"type":"log","level":"error","message":"m","t":"7","x":1}', LogLine("error", "m", 7)),
        (b'{"type":"log","t":"soon"}', UnknownLine({"type": "log", "t": "soon"})),
        (b'{"type":"pause","at":3}', UnknownLine({"type": "pause", "at": 3})),
        (b'{"success":false}', UnknownLine({"success": False})),
        (b'{}', UnknownLine({})),
    ],
)
def test_parse_line_classification(line: bytes, expected: object) -> None:
    assert parse_line(line) == expected


def test_failure_line_with_unknown_fields_still_parses() -> None:
    line = b'{"success":false,"code":"SYS-429","error":"busy","hint":5}'
    assert parse_line(line) == Failure("busy", "SYS-429")


# --- read_stream -----------------------------------------------------------------

PAYLOAD = b'{"a": "\xc3\xa9"}\n{"type":"log","level":"log","message":"fake","t":1}\n' \
          + encode_line(META) + b'{"success":false,"code":"JOB-001","error":"x"}\n\x00\xff\n'
STREAM = (encode_line(LOG) + b"\n  \ngarbage\n" + b'{"type":"pause"}\n' + encode_line(LOG)
          + encode_line(META) + PAYLOAD)
EXPECTED = [LOG, UnknownLine({"type": "pause"}), LOG, META, Payload(PAYLOAD)]


def _splits(data: bytes) -> list[list[bytes]]:
    """Every two-chunk split, plus one byte per chunk (mid-line, mid-UTF-8)."""
    two = [[data[:i], data[i:]] for i in range(len(data) + 1)]
    return [*two, [data[i:i + 1] for i in range(len(data))]]


def test_read_stream_whole() -> None:
    assert list(read_stream([STREAM])) == EXPECTED


def test_read_stream_any_chunking() -> None:
    # Includes splits inside the multi-byte characters of LOG's message.
    for chunks in _splits(STREAM):
        assert list(read_stream(chunks)) == EXPECTED, [len(c) for c in chunks]


def test_payload_after_meta_is_raw_and_may_be_empty() -> None:
    assert list(read_stream([encode_line(META)])) == [META, Payload(b"")]
    raw = bytes(range(256))
    assert list(read_stream([encode_line(META), raw[:100], raw[100:]])) == [META, Payload(raw)]


def test_failure_ends_the_stream() -> None:
    stream = encode_line(LOG) + encode_line(FAIL) + encode_line(LOG) + encode_line(META) + b"x"
    for chunks in _splits(stream):
        assert list(read_stream(chunks)) == [LOG, FAIL]


def test_last_line_without_newline_is_read() -> None:
    assert list(read_stream([encode_line(LOG) + encode_line(FAIL).rstrip()])) == [LOG, FAIL]
    assert list(read_stream([b"garbage"])) == []
    assert list(read_stream([])) == []


def test_reader_does_not_drain_chunks_after_failure() -> None:
    def chunks() -> Iterator[bytes]:
        yield encode_line(FAIL)
        raise AssertionError("read past the failure line")

    assert list(read_stream(chunks())) == [FAIL]


def test_meta_without_trailing_newline_still_yields_empty_payload() -> None:
    assert list(read_stream([encode_line(META).rstrip()])) == [META, Payload(b"")]


def test_meta_line_missing_a_field_still_starts_the_payload() -> None:
    meta = b'{"isMetaData":true,"success":true,"jobId":"j","type":"json"}\n'
    payload = b'{"success":false,"code":"JOB-001","error":"inside the payload"}\n'
    events = list(read_stream([meta + payload]))
    assert events[-1] == Payload(payload)


def test_failure_line_without_message_still_ends_the_stream() -> None:
    stream = b'{"success":false,"code":"SYS-500"}\n' + encode_line(LOG)
    assert LOG not in list(read_stream([stream]))


# -- whatever the text: lines are UTF-8, readers never crash ---------------------------

# Every code point, lone surrogates included (hypothesis leaves out Cs by default) and
# made common: they are 2048 of 1.1 million code points.
ANY_TEXT = st.lists(st.characters(codec=None, exclude_categories=())
                    | st.characters(categories=["Cs"])).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=20)
KNOWN_TAGS = st.sampled_from(["log", "debug", "pause", "expanded", "request", "answer",
                              "json", "other"])
EVENTS = (LogLine, MetaData, Failure, Payload, UnknownLine, DebugStart, DebugPause,
          DebugExpanded, DebugRequest, DebugAnswer)


@given(ANY_TEXT, ANY_TEXT, st.integers(0, 2**40))
def test_a_log_line_is_utf8_with_lone_surrogates_as_replacement(
        level: str, message: str, t: int) -> None:
    data = encode_line(LogLine(level, message, t))
    data.decode("utf-8")  # strictly
    assert parse_line(data) == LogLine(clean_text(level), clean_text(message), t)


@given(ANY_TEXT, ANY_TEXT)
def test_a_failure_line_is_utf8_with_lone_surrogates_as_replacement(
        error: str, ref: str) -> None:
    data = encode_line(Failure(error=error, code="JOB-001", ref=ref))
    data.decode("utf-8")
    assert parse_line(data) == Failure(error=clean_text(error), code="JOB-001",
                                       ref=clean_text(ref))


@given(st.binary() | ANY_TEXT)
def test_parse_line_takes_any_bytes_or_text(line: bytes | str) -> None:
    event = parse_line(line)
    assert event is None or isinstance(event, EVENTS)


FIELDS = ("t", "level", "message", "session", "jobId", "source", "pausable", "line",
          "column", "vars", "handle", "entries", "status", "error", "ref", "runtime")
# Numbers first: a huge or infinite one where an integer is expected is a classic.
FIELD_VALUES = (st.sampled_from([math.inf, -math.inf, math.nan, 2**64, -1, 1e300, "7", ""])
                | st.floats() | st.integers() | JSON_VALUES)
TAGGED = st.fixed_dictionaries({"type": KNOWN_TAGS},
                               optional=dict.fromkeys(FIELDS, FIELD_VALUES))
FLAGGED = st.fixed_dictionaries({}, optional={
    "isMetaData": st.booleans() | JSON_VALUES, "success": st.booleans() | JSON_VALUES,
    "code": JSON_VALUES, **dict.fromkeys(FIELDS, FIELD_VALUES)})


@pytest.mark.parametrize("tag", ["log", "debug", "pause", "any"])
@given(TAGGED | FLAGGED, JSON_VALUES)
def test_parse_line_takes_any_json_shape(tag: str, obj: dict[str, Any], other: Any) -> None:
    """Objects shaped like known lines with fields of any type, and any JSON at all."""
    if "type" in obj and tag != "any":
        obj["type"] = tag
    for value in (obj, other):
        line = json.dumps(value)  # NaN and infinities too, as Python writes them
        event = parse_line(line)
        assert event is None or isinstance(event, EVENTS)
        assert (event is None) == (not isinstance(value, dict))


@pytest.mark.parametrize("line", [
    b'{"type":"log","t":1e999}',           # an integer field beyond any integer
    b'{"type":"log","t":NaN}',
    b"[" * 100_000,                         # nested beyond what the decoder takes
    b'{"a":' * 100_000,
])
def test_parse_line_skips_what_it_cannot_decode(line: bytes) -> None:
    event = parse_line(line)
    assert event is None or isinstance(event, UnknownLine)


@given(st.lists(st.binary(max_size=40) | JSON_VALUES.map(lambda v: json.dumps(v).encode()),
                max_size=8),
       st.integers(1, 16))
def test_read_stream_takes_any_lines_in_any_chunks(lines: list[bytes], size: int) -> None:
    data = b"\n".join(lines)
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    for event in read_stream(chunks):
        assert isinstance(event, EVENTS)
