"""A job's console line in the hub's log is exactly one line of writable text,
whatever the job printed (newlines, line separators, controls, lone surrogates), in
the text format and the JSON one; the access log's credential-like query values are
masked; the run's fields reach a record written during a run."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from hub.logsetup import RunFields, hub_handler, mask_query, run_fields
from hub.services.job_console import (
    JOB_LOG,
    LINE_CHARS,
    RUN_CHARS,
    ServerConsole,
    console_log_text,
    cut_console_text,
)
from shared.ndjson import LogLine

FIELDS = RunFields("job_1", "lines", "r3f", "user:ann")
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=80)
LEVELS = st.sampled_from(["log", "info", "warn", "error", "debug", "odd"])


@contextlib.contextmanager
def captured(log_format: str, logger: logging.Logger = JOB_LOG,
             stream: io.StringIO | None = None) -> Iterator[io.StringIO]:
    """What ``logger`` writes through the hub's handler (into ``stream``, or a new one),
    for the block."""
    stream = io.StringIO() if stream is None else stream
    handler = hub_handler(log_format, "node-a", stream)
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield stream
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def _one_line(out: str) -> str:
    assert out.endswith("\n") and out.count("\n") == 1, repr(out)
    assert len(out.splitlines()) == 1, repr(out)
    out.encode("utf-8")  # strictly: nothing a stream could refuse
    return out[:-1]


@given(text=ANY_TEXT, level=LEVELS)
def test_any_console_text_is_one_text_log_line(text: str, level: str) -> None:
    with captured("text") as stream:
        ServerConsole(5, FIELDS).write(LogLine(level, text, 0))
    line = _one_line(stream.getvalue())
    assert f" webhub.job run=job_1: [WebJob:lines] {level} " in line
    if text.isprintable() and "\u2028" not in text and "\u2029" not in text:
        assert line.endswith(text)


@given(text=ANY_TEXT, level=LEVELS)
def test_any_console_text_is_one_json_log_line(text: str, level: str) -> None:
    with captured("json") as stream:
        ServerConsole(5, FIELDS).write(LogLine(level, text, 0))
    record = json.loads(_one_line(stream.getvalue()))
    assert record["message"] == console_log_text("lines", level, text)
    assert {k: record[k] for k in ("logger", "run", "job", "ref", "caller", "node")} == {
        "logger": "webhub.job", "run": "job_1", "job": "lines", "ref": "r3f",
        "caller": "user:ann", "node": "node-a"}


@given(job_text=ANY_TEXT)
def test_console_text_is_escaped_not_dropped(job_text: str) -> None:
    shown = console_log_text("j", "log", job_text)
    assert shown.startswith("[WebJob:j] log ")
    assert not any(c in shown for c in "\n\r\x00\x1b\x85\u2028\u2029")
    assert len(shown) >= len("[WebJob:j] log ") + len(job_text)  # escaped, never dropped


def test_levels_map_to_logging_levels() -> None:
    with captured("json") as stream:
        console = ServerConsole(10, FIELDS)
        for level in ("error", "warn", "info", "log", "debug"):
            console.write(LogLine(level, "x", 0))
    levels = [json.loads(line)["level"] for line in stream.getvalue().splitlines()]
    assert levels == ["ERROR", "WARNING", "INFO", "INFO", "DEBUG"]


def test_past_the_cap_one_note_counts_the_rest() -> None:
    with captured("text") as stream:
        console = ServerConsole(3, FIELDS)
        console.ended([LogLine("log", f"n{i}", 0) for i in range(8)])
    lines = stream.getvalue().splitlines()
    assert [line.rsplit(" ", 1)[1] for line in lines[:3]] == ["n0", "n1", "n2"]
    assert len(lines) == 4 and lines[3].endswith(
        "[WebJob:lines] warn 5 more console lines not logged (WEBJOB_LOG_LINES=3); "
        "history keeps up to 300")


def test_a_watched_run_is_logged_as_it_goes_and_not_again_at_its_end() -> None:
    seen: list[LogLine] = []
    with captured("text") as stream:
        console = ServerConsole(10, FIELDS)
        on_log = console.watching(seen.append)
        assert on_log is not None
        on_log(LogLine("log", "live", 0))
        assert "live" in stream.getvalue()  # before the run ends
        console.ended(seen)
    assert seen == [LogLine("log", "live", 0)] and stream.getvalue().count("live") == 1
    assert ServerConsole(10, FIELDS).watching(None) is None  # an unwatched run stays so


def test_records_written_during_a_run_carry_its_fields() -> None:
    other = logging.getLogger("webhub.test_server_log_lines")
    with captured("json", other) as stream:
        with run_fields(FIELDS):
            other.info("inside")
        other.info("outside")
    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["run"] == "job_1" and inside["caller"] == "user:ann"
    assert "run" not in outside and outside["node"] == "node-a"


_CUT_NOTE = re.compile(r"\u2026 \((\d+) more characters\)\Z")


@given(text=ANY_TEXT, limit=st.integers(1, 60))
def test_a_cut_text_keeps_its_start_and_counts_the_rest(text: str, limit: int) -> None:
    shown = cut_console_text(text, limit)
    if len(text) <= limit:
        assert shown == text
        return
    note = _CUT_NOTE.search(shown)
    assert note is not None, shown
    kept = shown[:note.start()]
    assert text.startswith(kept) and len(kept) + int(note.group(1)) == len(text)
    assert limit - 1 <= len(kept) <= limit
    if len(kept) < limit:  # only to keep a surrogate pair whole
        assert "\ud800" <= text[len(kept)] <= "\udbff"


def _kept_chars(message: str, text: str) -> int:
    """How much of ``text`` a logged ``message`` shows (checking what it says of the rest)."""
    body = message.removeprefix("[WebJob:lines] log ")
    note = _CUT_NOTE.search(body)
    kept = body[:note.start()] if note else body
    assert text.startswith(kept)
    assert len(kept) + (int(note.group(1)) if note else 0) == len(text), (message, len(text))
    return len(kept)


@given(lengths=st.lists(st.integers(0, 100), max_size=12))
def test_a_run_logs_at_most_its_share_of_characters(lengths: list[int]) -> None:
    texts = [chr(ord("a") + i) * n for i, n in enumerate(lengths)]
    with captured("json") as stream:
        ServerConsole(8, FIELDS, line_chars=40, run_chars=150).ended(
            [LogLine("log", text, 0) for text in texts])
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    logged = [r["message"] for r in records if r["level"] == "INFO"]
    kept = [_kept_chars(message, text) for message, text in zip(logged, texts, strict=False)]
    assert all(k <= 40 for k in kept) and sum(kept) <= 150
    left_out = len(texts) - len(logged)
    notes = [r["message"] for r in records if r["level"] == "WARNING"]
    if not left_out:
        assert notes == []
        return
    spent = "WEBJOB_LOG_LINES=8" if len(logged) == 8 else "150 characters of console text a run"
    assert len(logged) == 8 or sum(kept) == 150  # a line is left out only past a cap
    assert notes == [f"[WebJob:lines] warn {left_out} more console lines not logged ({spent}); "
                     "history keeps up to 300"]


def test_megabytes_of_console_make_a_bounded_log() -> None:
    huge = "x" * (10 * 1024 * 1024)
    with captured("text") as stream:
        ServerConsole(200, FIELDS).ended([LogLine("log", huge, 0)] * 50)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith(f"x\u2026 ({len(huge) - LINE_CHARS} more characters)")
    assert lines[0].count("x") == LINE_CHARS and len(lines) == RUN_CHARS // LINE_CHARS + 1
    assert sum(line.count("x") for line in lines[:-1]) == RUN_CHARS
    assert lines[-1].endswith(f"[WebJob:lines] warn {50 - RUN_CHARS // LINE_CHARS} more console "
                              f"lines not logged ({RUN_CHARS} characters of console text a run); "
                              "history keeps up to 300")


SECRET_NAMES = st.sampled_from(["token", "api_key", "password", "sig", "session", "Auth"])
PLAIN_NAMES = st.sampled_from(["n", "page", "name", "q"])
VALUES = st.text(st.characters(codec="utf-8"), min_size=1, max_size=20)


@given(st.lists(st.tuples(st.one_of(SECRET_NAMES, PLAIN_NAMES), VALUES), max_size=5))
def test_access_paths_never_show_a_credential_like_value(pairs: list[tuple[str, str]]) -> None:
    from urllib.parse import parse_qsl, urlencode

    path = "/api/webjobs/x?" + urlencode(pairs)
    shown = parse_qsl(mask_query(path).partition("?")[2], keep_blank_values=True)
    expected = [(k, "***" if k in ("token", "api_key", "password", "sig", "session", "Auth")
                 else v) for k, v in pairs]
    assert shown == expected
    assert mask_query("/api/webjobs/x") == "/api/webjobs/x"
