"""shared.header: the job header parser and limit resolution."""

from __future__ import annotations

import pytest

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
