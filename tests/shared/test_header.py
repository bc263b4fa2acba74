"""shared.header: the job header parser and limit resolution."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.header import DEFAULT_LIMITS, JobHeader, Limits, parse_header, resolve_limits

# The "header, in full" example from the job-writing reference, comments and all.
FULL = """/*
Name: Staff PDF report              shown in the jobs list
Description: One line on what it does and what it expects
Author: IQX Limited
Version: 1.2.0
Last Updated: 2026-10-05
Runtime: 60000                      ms of wall clock (default 10000)
Memory: 512                         MB of heap (default 256)
CPU: 20000                          ms of CPU time (default 5000)
Access: owner                       public | user (default) | owner | key
Mode: page                          when the job renders a browser page
*/
return { ok: true }
"""
MAXIMA = Limits(runtime_ms=300_000, memory_mb=2048, cpu_ms=120_000)


def test_full_example() -> None:
    h = parse_header(FULL, "staff_report")
    assert (h.description, h.author, h.version, h.last_updated) == (
        "One line on what it does and what it expects", "IQX Limited", "1.2.0", "2026-10-05")
    assert (h.runtime, h.memory, h.cpu) == (60000, 512, 20000)
    assert (h.access, h.mode, h.extra, h.warnings) == ("owner", "page", {}, [])


def test_text_fields_keep_their_whole_value() -> None:
    # Decided: a text value is the whole rest of the line (a description has spaces);
    # the reference's right-hand column is commentary, not part of a real header.
    header = parse_header("/*\nName: Staff PDF report   for HR\n*/")
    assert header.name == "Staff PDF report   for HR"


def test_keys_are_case_insensitive_and_decorated_lines_and_indent_are_fine() -> None:
    source = "\n   /**\n * NAME: x\n *   last updated : today\n * runtime: 20_000\n"
    source += " * ACCESS: Public\n * mode: PAGE\n */\nreturn 1"
    h = parse_header(source)
    assert (h.name, h.last_updated, h.runtime, h.access, h.mode) == (
        "x", "today", 20000, "public", "page")
    assert h.warnings == []


def test_single_line_header() -> None:
    assert parse_header("/* Name: tiny */ return 1").name == "tiny"


@pytest.mark.parametrize("source", [
    "return 1",
    "",
    "const a = 1\n/*\nName: late\nAccess: public\n*/",
    "// Name: line comment\nreturn 1",
    "/* Name: never closed\nreturn 1",
])
def test_no_header_gives_defaults(source: str) -> None:
    assert parse_header(source) == JobHeader()


def test_unknown_keys_kept_in_extra_lower_cased() -> None:
    h = parse_header("/*\nName: n\nTags: a, b\nOn Call Team: ops: night\n*/")
    assert h.extra == {"tags": "a, b", "on call team": "ops: night"}
    assert h.warnings == []


@pytest.mark.parametrize(("line", "field"), [
    ("Runtime: soon", "runtime"), ("Memory: -5", "memory"), ("CPU: 0", "cpu"),
    ("Runtime:", "runtime"), ("Memory: lots", "memory"), ("CPU: 1e3", "cpu"),
])
def test_unreadable_limit_falls_back_with_warning(line: str, field: str) -> None:
    h = parse_header(f"/*\n{line}\n*/")
    assert getattr(h, field) is None
    assert len(h.warnings) == 1 and h.warnings[0].lower().startswith(field)
    assert resolve_limits(h, MAXIMA).limits == DEFAULT_LIMITS


def test_fractional_limit_below_one_is_never_zero() -> None:
    h = parse_header("/*\nRuntime: 0.5\n*/")
    assert h.runtime is None or h.runtime >= 1


@pytest.mark.parametrize("job_name", [None, "report", "public_report"])
def test_unknown_access_falls_back_to_owner(job_name: str | None) -> None:
    h = parse_header("/*\nAccess: everyone\n*/", job_name)
    assert h.access == "owner"
    assert len(h.warnings) == 1 and "Access" in h.warnings[0]


@pytest.mark.parametrize(("job_name", "access"), [
    (None, "user"), ("report", "user"), ("public_ping", "public"), ("mypublic_x", "user"),
])
def test_default_access_follows_job_name(job_name: str | None, access: str) -> None:
    assert parse_header("/*\nName: n\n*/", job_name).access == access
    assert parse_header("return 1", job_name).access == access


def test_declared_access_beats_public_name() -> None:
    assert parse_header("/*\nAccess: key\n*/", "public_x").access == "key"


def test_unknown_mode_warns_and_stays_job() -> None:
    h = parse_header("/*\nMode: batch\n*/")
    assert h.mode == "job"
    assert len(h.warnings) == 1 and "Mode" in h.warnings[0]


@pytest.mark.parametrize(("line", "isolation"), [
    ("", "warm"), ("Isolation: warm", "warm"), ("Isolation: fresh", "fresh"),
    ("isolation:   FRESH", "fresh"), (" * Isolation: fresh (uses with)", "fresh")])
def test_isolation_is_read(line: str, isolation: str) -> None:
    header = parse_header(f"/*\n{line}\n*/\nreturn 1")
    assert (header.isolation, header.warnings, header.extra) == (isolation, [], {})


@pytest.mark.parametrize("value", ["cold", "", "frsh", "isolated", "fresh-ish"])
def test_unknown_isolation_warns_on_its_place_and_stays_warm(value: str) -> None:
    header = parse_header(f"/*\nName: n\n  Isolation: {value}\n*/")
    assert header.isolation == "warm"
    [warning] = header.warnings
    assert warning.startswith("Isolation:") and "treated as warm" in warning
    assert header.warning_places == [(3, 14)]
    assert "isolation" not in header.extra


# Characters that end a header line (str.splitlines) or could close the comment.
_LINE_ENDS = "*\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@given(st.text(alphabet=st.characters(blacklist_characters=_LINE_ENDS), max_size=40))
def test_isolation_is_warm_or_fresh_and_only_warm_or_fresh_are_silent(value: str) -> None:
    header = parse_header(f"/*\nIsolation: {value}\n*/")
    assert header.isolation in ("warm", "fresh")
    words = value.split()
    readable = bool(words) and words[0].lower() in ("warm", "fresh")
    # Whatever the text, the header either read a value or said why it did not.
    assert bool(header.warnings) is not readable
    if readable:
        assert header.isolation == words[0].lower()


# --- resolve_limits --------------------------------------------------------------

def _header(runtime: int | None = None, memory: int | None = None,
            cpu: int | None = None) -> JobHeader:
    return JobHeader(runtime=runtime, memory=memory, cpu=cpu)


def test_defaults_when_nothing_declared() -> None:
    r = resolve_limits(_header(), MAXIMA)
    assert (r.limits, r.extended, r.notes) == (DEFAULT_LIMITS, False, ())


def test_declared_values_within_maxima() -> None:
    r = resolve_limits(parse_header(FULL), MAXIMA)
    assert r.limits == Limits(60000, 512, 20000)
    assert r.extended and r.notes == ()


def test_clamps_each_limit_with_one_note() -> None:
    r = resolve_limits(_header(1_000_000, 4096, 5_000), MAXIMA)
    assert r.limits == Limits(300_000, 2048, 5_000)
    assert len(r.notes) == 2
    assert r.notes[0].startswith("Runtime") and "300000" in r.notes[0]
    assert r.notes[1].startswith("Memory") and "2048" in r.notes[1]


@pytest.mark.parametrize(("header", "extended"), [
    (_header(runtime=10_000), False),
    (_header(runtime=10_001), True),
    (_header(memory=128, cpu=1_000), False),
    (_header(cpu=5_001), True),
    (_header(memory=257), True),
])
def test_extended_only_above_a_default(header: JobHeader, extended: bool) -> None:
    assert resolve_limits(header, MAXIMA).extended is extended


def test_clamped_down_to_default_is_not_extended() -> None:
    r = resolve_limits(_header(memory=1024), Limits(300_000, 256, 120_000))
    assert r.limits.memory_mb == 256 and not r.extended and len(r.notes) == 1


def test_custom_defaults() -> None:
    defaults = Limits(1_000, 64, 500)
    r = resolve_limits(_header(cpu=600), MAXIMA, defaults)
    assert r.limits == Limits(1_000, 64, 600) and r.extended


# --- limits with units (issue 17: "Runtime: 10 s" was read as 10 ms) -----------------

@pytest.mark.parametrize(("line", "field", "value"), [
    ("Runtime: 10 s", "runtime", 10_000), ("Runtime: 10s", "runtime", 10_000),
    ("Runtime: 10000s", "runtime", 10_000_000), ("CPU: 5 s", "cpu", 5_000),
    ("Runtime: 2 min", "runtime", 120_000), ("Runtime: 1.5 min", "runtime", 90_000),
    ("Runtime: 500 ms", "runtime", 500), ("Runtime: 500", "runtime", 500),
    ("Runtime: 30 seconds of wall clock", "runtime", 30_000),
    ("Runtime: 60000 of wall clock", "runtime", 60_000),
    ("Runtime: 10 s, at most", "runtime", 10_000),
    ("Memory: 1 GB", "memory", 1024), ("Memory: 512 MB", "memory", 512),
    ("Memory: 512MB", "memory", 512), ("Memory: 0.5 GB", "memory", 512),
    ("Memory: 512", "memory", 512),
])
def test_limits_read_their_unit(line: str, field: str, value: int) -> None:
    header = parse_header(f"/*\n{line}\n*/")
    assert (getattr(header, field), header.warnings) == (value, [])


@pytest.mark.parametrize("line", [
    "Runtime: 10 h", "Runtime: 2 hours", "Runtime: 10 m", "Runtime: 1 GB", "CPU: 512 MB",
    "Memory: 512 KB", "Memory: 10 s", "Memory: 1 TB", "Memory: 2g", "Runtime: 10x",
    "Runtime: 10s3", "Runtime: 0.5 ms", "Runtime: 0.5", "Memory: 0 GB", "CPU: 10,000",
    "Runtime: 1e3 ms",
])
def test_a_unit_the_key_does_not_take_is_refused_never_misread(line: str) -> None:
    header = parse_header(f"/*\nName: n\n{line}\n*/")
    key = line.split(":")[0].lower()
    assert getattr(header, key) is None
    assert len(header.warnings) == 1 and header.warnings[0].startswith(line.split(":")[0])
    assert header.warning_places == [(3, len(line.split(":")[0]) + 3)]


def test_warnings_are_placed_on_their_line_and_value() -> None:
    source = "\n\n  /**\n * Access: all\n *  Mode:  batch\n */ return 1"
    header = parse_header(source)
    assert header.warning_places == [(4, 12), (5, 12)]
    assert parse_header("/* Runtime: soon */").warning_places == [(1, 13)]
    # Only a newline starts an editor's line: a lone CR splits header lines but does
    # not count as a line of its own.
    assert parse_header("/*\r\nName: a\rMode: x\n*/").warning_places == [(2, 15)]


_UNITS = {"runtime": [("ms", 1), ("s", 1000), ("min", 60_000)],
          "cpu": [("ms", 1), ("s", 1000), ("min", 60_000)],
          "memory": [("MB", 1), ("GB", 1024)]}


@given(key=st.sampled_from(sorted(_UNITS)), number=st.integers(1, 10**9), data=st.data(),
       glued=st.booleans())
def test_a_value_with_its_unit_round_trips(key: str, number: int, data: st.DataObject,
                                          glued: bool) -> None:
    unit, factor = data.draw(st.sampled_from(_UNITS[key]))
    spelled = data.draw(st.sampled_from([unit, unit.lower(), unit.upper()]))
    line = f"{key}: {number}{'' if glued else ' '}{spelled}"
    header = parse_header(f"/*\n{line}\n*/")
    assert (getattr(header, key), header.warnings) == (number * factor, [])


@given(st.text())
def test_any_header_text_parses_without_raising(text: str) -> None:
    for source in (text, f"/*\n{text}\n*/", f"/*\nRuntime: {text}\nMemory: {text}\n*/"):
        header = parse_header(source)
        assert len(header.warning_places) == len(header.warnings)
        for limit in (header.runtime, header.memory, header.cpu):
            assert limit is None or limit >= 1


def test_secrets_lines_add_up_and_a_bad_name_is_left_out_with_a_warning() -> None:
    header = parse_header("/*\nSecrets: stripe_key, crm.token\nSecrets: stripe_key 9bad ok-2\n*/")
    assert header.secrets == ("stripe_key", "crm.token", "ok-2")
    assert len(header.warnings) == 1 and "'9bad' is not a secret name" in header.warnings[0]


def test_the_limits_global_a_job_sees() -> None:
    assert MAXIMA.as_job_view() == {"runtimeMs": 300_000, "memoryMb": 2048, "cpuMs": 120_000}
