"""The editor's Qt-free helpers: completion rules, header checks and diffs."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from console_app.client.connection import HubConnection
from console_app.client.jobs import available_shape
from console_app.editor.catalog import GLOBALS, MEMBERS, SIGNATURES
from console_app.editor.completion import call_tip, complete
from console_app.editor.diffing import unified_diff
from console_app.editor.header_check import HeaderProblem, check_header, declared_secrets
from console_app.editor.hub_context import HubContext, context_from_available
from shared.header import Limits, parse_header
from shared.wire import ShapeError, decode
from shared.wire.jobs import JobList

JOBS = Path(__file__).resolve().parents[2] / "jobs"


# -- completion -----------------------------------------------------------------------

def test_db_dot_offers_exec_with_its_signature() -> None:
    found = complete("const rows = await db.")
    assert found is not None and found.items == ("exec",) and found.kind == "member"
    assert found.prefix == ""
    assert SIGNATURES["db.exec"].startswith("db.exec(sql, params?)")


@pytest.mark.parametrize(("before", "expected"), [
    ("return response.", {"json", "html", "text", "csv", "pdf", "file", "redirect", "raw"}),
    ("console.", {"log", "info", "debug", "warn", "error"}),
    ("x = request.", {"method", "url", "path", "query", "headers", "ip", "caller",
                      "rawBody", "rawBytes"}),
    ("request.caller.", {"kind", "id", "name", "userClass"}),
    ("limits.", {"runtimeMs", "memoryMb", "cpuMs"}),
    ("crypto.", {"hmac", "hash", "timingSafeEqual", "randomUUID", "getRandomValues"}),
    ("secrets.", {"get"}),
])
def test_member_lists(before: str, expected: set[str]) -> None:
    found = complete(before)
    assert found is not None and set(found.items) == expected


def test_member_prefix_narrows_case_insensitively() -> None:
    found = complete("request.RAW")
    assert found is not None and found.items == ("rawBody", "rawBytes")
    assert found.prefix == "RAW"
    assert complete("unknownThing.") is None
    assert complete("crypto.nothing") is None


def test_secrets_get_offers_declared_names_in_any_quote() -> None:
    for quote in "\"'`":
        found = complete(f"const key = secrets.get({quote}st", secrets=["stripe", "crm", "st2"])
        assert found is not None and found.kind == "string"
        assert found.items == ("st2", "stripe") and found.prefix == "st"
    assert complete('secrets.get("', secrets=[]) is None


def test_require_offers_the_approved_modules() -> None:
    found = complete('const { format } = require("', modules=["pdf-lib", "date-fns"])
    assert found is not None and found.items == ("date-fns", "pdf-lib")
    found = complete("require('pd", modules=["pdf-lib", "date-fns"])
    assert found is not None and found.items == ("pdf-lib",) and found.prefix == "pd"


def test_globals_need_min_word_and_skip_an_exact_word() -> None:
    found = complete("  const x = par", min_word=2)
    assert found is not None and "params" in found.items and found.kind == "global"
    assert complete("p", min_word=2) is None
    assert complete("params", min_word=2) is None  # already complete
    names = {e.name for e in GLOBALS}
    assert {"params", "request", "response", "console", "db", "http", "sign", "verify",
            "limits", "crypto", "secrets", "require"} <= names


def test_call_tips_for_the_innermost_open_call() -> None:
    assert call_tip("await http(") == SIGNATURES["http"]
    assert call_tip("db.exec('x', [f(a), ") == SIGNATURES["db.exec"]
    assert call_tip("crypto.hmac('sha256', key, body") == SIGNATURES["crypto.hmac"]
    assert call_tip("response.json({ a: 1 }, ") == SIGNATURES["response.json"]
    assert call_tip("console.log(1)") is None
    assert call_tip("mystery(") is None
    assert "timeoutMs" in SIGNATURES["http"]
    assert all(e.signature for e in MEMBERS["response"])


# -- header checks ----------------------------------------------------------------------

def test_clean_and_missing_headers_have_no_problems() -> None:
    assert check_header("/*\nName: Ping\nRuntime: 60000  ms\nAccess: public\n*/\nreturn 1") == []
    assert check_header("return 1") == []


def test_problems_at_their_lines_and_columns() -> None:
    source = ("/*\n"
              "Name: Report\n"
              "Runtime: fast\n"
              "Colour: blue\n"
              "Access: everyone\n"
              " * Mode: pages\n"
              "*/\n"
              "return 1\n")
    problems = check_header(source)
    by_line = {p.line: p for p in problems}
    assert sorted(by_line) == [3, 4, 5, 6]
    assert by_line[3].column == 10 and "Runtime" in by_line[3].message
    assert by_line[3].length == 4
    assert by_line[4] == HeaderProblem(4, 1, by_line[4].message, 6)
    assert by_line[4].message == "Unknown header key 'Colour'; the hub ignores it"
    [typo] = check_header("/*\nRuntme: 5\n*/\n")
    assert typo.message.endswith("(did you mean 'Runtime'?)")
    assert by_line[5].column == 9 and "treated as owner" in by_line[5].message
    assert by_line[6].column == 10 and "Mode" in by_line[6].message


def test_the_messages_are_the_hub_parsers_own() -> None:
    source = "/*\nMemory: 0\nCPU: lots\nSecrets: ok_name, bad name!\n*/\n"
    messages = sorted(p.message for p in check_header(source))
    assert messages == sorted(parse_header(source).warnings)


def test_header_starting_on_the_comment_line() -> None:
    problems = check_header("\ufeff  /* Runtime: x\n*/\n")
    assert [(p.line, p.column) for p in problems] == [(1, 16)]


def test_unclosed_header_and_repeated_key() -> None:
    [unclosed] = check_header("/*\nName: x\nreturn 1\n")
    assert unclosed.line == 1 and "never closed" in unclosed.message
    problems = check_header("/*\nRuntime: 5\nSecrets: a\nRuntime: 6\nSecrets: b\n*/\n")
    assert [(p.line, p.column) for p in problems] == [(4, 1)]
    assert "line 2" in problems[0].message


def test_limits_above_the_server_maxima() -> None:
    maxima = Limits(runtime_ms=60_000, memory_mb=512, cpu_ms=30_000)
    [problem] = check_header("/*\nRuntime: 90000\nMemory: 512\n*/\n", maxima)
    assert problem.line == 2 and "clamped" in problem.message and "60000" in problem.message


def test_declared_secrets() -> None:
    assert declared_secrets("/*\nSecrets: stripe_signing, crm_api\n*/\n") == [
        "stripe_signing", "crm_api"]
    assert declared_secrets("return 1") == []


def test_shipped_jobs_agree_with_the_hub_parser() -> None:
    # The line finder here must see the same header lines as shared/header.py.
    sources = [p.read_text(encoding="utf-8") for p in sorted(JOBS.glob("*.job.js"))]
    assert sources
    for source in sources:
        found = [p.message for p in check_header(source)
                 if not p.message.startswith(("Unknown header key", "'"))]
        assert sorted(found) == sorted(parse_header(source).warnings)
        unknown = [p for p in check_header(source) if p.message.startswith("Unknown")]
        assert len(unknown) == len(parse_header(source).extra)


# -- diffs -------------------------------------------------------------------------------

def test_unified_diff_lines_are_typed() -> None:
    lines = unified_diff("a\n-- b\nc\n", "a\nB\nc\nd\n", "version 1", "editor")
    kinds = [line.kind for line in lines]
    assert kinds[:3] == ["file", "file", "hunk"]
    assert [line.text for line in lines if line.kind == "remove"] == ["--- b"]
    assert [line.text for line in lines if line.kind == "add"] == ["+B", "+d"]
    assert unified_diff("same", "same", "a", "b") == []


# -- what /available says of the hub --------------------------------------------------

def _available(**over: object) -> JobList:
    data = {"jobs": [], "store": "files", "modules": ["date-fns", " pdf-lib ", ""],
            "maxima": {"runtimeMs": 300000, "memoryMb": 2048, "cpuMs": 120000}, **over}
    return decode(JobList, data, strict=True)


def test_context_from_available() -> None:
    assert context_from_available(_available()) == HubContext(
        ["date-fns", "pdf-lib"], Limits(runtime_ms=300000, memory_mb=2048, cpu_ms=120000))


@pytest.mark.parametrize("maxima", [{"runtimeMs": 1, "memoryMb": 0, "cpuMs": 3},
                                    {"runtimeMs": -1, "memoryMb": 2, "cpuMs": 3}])
def test_a_maximum_that_is_no_limit_leaves_the_maxima_out(maxima: object) -> None:
    assert context_from_available(_available(maxima=maxima)).maxima is None


def test_an_older_hub_without_modules_or_maxima_leaves_both_out() -> None:
    # Read as the console reads it (HubConnection.typed, the loose decode), not strictly.
    older = {"jobs": [], "store": "files"}
    conn = HubConnection("http://hub.test")
    conn._http = httpx.Client(base_url=conn.url, transport=httpx.MockTransport(
        lambda _request: httpx.Response(200, json=older)))
    with conn:
        assert context_from_available(available_shape(conn)) == HubContext(None, None)


@pytest.mark.parametrize("data", [
    {"jobs": [], "store": "files", "modules": "date-fns", "maxima": [1, 2, 3]},
    {"jobs": [], "store": "files", "modules": ["date-fns", 3],
     "maxima": {"runtimeMs": 1, "memoryMb": 2, "cpuMs": 3}},
    {"jobs": [], "store": "files", "modules": [],
     "maxima": {"runtimeMs": 1, "memoryMb": 2}},
    {"jobs": [], "store": "files", "modules": [],
     "maxima": {"runtimeMs": 1, "memoryMb": "2", "cpuMs": 3}},
    {"jobs": [], "store": "files", "modules": [],
     "maxima": {"runtimeMs": True, "memoryMb": 2, "cpuMs": 3}},
    None,
])
def test_an_unreadable_available_answer_is_refused_not_half_read(data: object) -> None:
    with pytest.raises(ShapeError):
        decode(JobList, data, strict=True)


def test_the_problems_title_counts_in_words() -> None:
    from console_app.editor_window import _counted

    assert [_counted(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
