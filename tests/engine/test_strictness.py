"""The strict-mode check (``hub.engine.strictness``, ``js/strict_check.js``): each
construct strict mode refuses is found at its own line and column, with a message
that says what to change, and nothing else is. Where V8 can tell, each case is also
run in a bare V8 context, sloppy and strict, so the test says what V8 says."""

from __future__ import annotations

import pytest
from py_mini_racer import JSEvalException, MiniRacer

from hub.engine import strictness
from hub.engine.strictness import StrictFinding, check, strict_findings

FRESH = "add `Isolation: fresh` to the header to keep the old behaviour"


def found(source: str) -> list[tuple[int, int, str]]:
    return [(f.line, f.column, f.kind) for f in strict_findings(source)]


def v8_runs(source: str, strict: bool) -> bool:
    """Whether ``source`` (a function body) runs without throwing in a new context."""
    racer = MiniRacer()
    directive = "'use strict';" if strict else ""
    try:
        racer.eval(f"(function () {{ {directive}\n{source}\n}})()")
    except JSEvalException:
        return False
    finally:
        racer.close()
    return True


# (source, where the finding is, kind, what the message must tell): each of these runs
# in sloppy mode and fails in strict mode.
REFUSED = [
    ("counter = 5", (1, 1), "undeclared", "declare it (let counter)"),
    ("for (k in {a: 1}) {}", (1, 6), "undeclared", "for (const k in …)"),
    ("for (k of [1]) {}", (1, 6), "undeclared", "for (const k of …)"),
    ("[a] = [1, 2]", (1, 2), "undeclared", "undeclared name a"),
    ("({p: {q}} = {p: {q: 1}})", (1, 7), "undeclared", "undeclared name q"),
    ("var o = {a: 1}\nwith (o) { a = 2 }", (2, 1), "with", "name the object"),
    ("return 010", (1, 8), "octal", "0o10"),
    ("return 09", (1, 8), "octal", "write 9"),
    ("return '\\01'", (1, 9), "octal-escape", "\\x01"),
    ("return 'ab\\8'", (1, 11), "octal-escape", "write 8"),
    ("return '\\08'", (1, 9), "octal-escape", "\\x00"),
    ("var y = 1; delete y", (1, 12), "delete", "delete a property"),
    ("function f() { arguments = [] }\nf()", (1, 16), "arguments", "a variable of your own"),
]


@pytest.mark.parametrize(("source", "place", "kind", "hint"), REFUSED)
def test_each_construct_strict_mode_refuses_is_found(source: str, place: tuple[int, int],
                                                     kind: str, hint: str) -> None:
    [finding] = strict_findings(source)
    assert ((finding.line, finding.column), finding.kind) == (place, kind)
    assert hint in finding.message and FRESH in finding.message
    assert "strict mode" in finding.message
    assert v8_runs(source, strict=False) and not v8_runs(source, strict=True)


@pytest.mark.parametrize(("source", "place", "shown"), [
    ("let a = 1\n  x += 1", (2, 3), "`x += …`"), ("n++", (1, 1), "`n++`"),
    ("--n", (1, 3), "`--n`"), ("m ??= 1", (1, 1), "`m ??= …`")])
def test_an_assignment_that_reads_an_undeclared_name_throws_in_any_mode(
        source: str, place: tuple[int, int], shown: str) -> None:
    [finding] = strict_findings(source)
    assert ((finding.line, finding.column), finding.kind) == (place, "undeclared")
    assert finding.message.startswith(f"{shown} reads the undeclared name")
    # Isolation: fresh would not help: the message does not offer it.
    assert "ReferenceError in any mode" in finding.message and FRESH not in finding.message
    assert not v8_runs(source, strict=False) and not v8_runs(source, strict=True)


def test_destructuring_reports_each_undeclared_name_and_not_the_declared() -> None:
    assert found("let b\n[a, b, ...c] = [1, 2, 3]") == [(2, 2, "undeclared"),
                                                       (2, 11, "undeclared")]
    assert found("({a, b: [c = d = 1]} = {})") == [(1, 3, "undeclared"), (1, 10, "undeclared"),
                                                  (1, 14, "undeclared")]


def test_assigning_a_built_in_global_is_named_as_such() -> None:
    [finding] = strict_findings("Math = {}")
    assert (finding.kind, finding.line, finding.column) == ("built-in", 1, 1)
    assert "built-in global Math" in finding.message and "myMath" in finding.message
    assert found("undefined = 1; JSON += 1; URL = null") == [
        (1, 1, "built-in"), (1, 16, "built-in"), (1, 27, "built-in")]


def test_job_globals_are_declared() -> None:
    assert found("params = {}; request = 1; limits = 0; console = null; db = 1; http = 1\n"
                 "crypto = 1; secrets = 1; setTimeout = 1; Promise = 1; breakpoint = 1\n"
                 "userID = 1; isAuthenticated = 1; response = 1; sign = verify = require = 1\n"
                 "setInterval = clearTimeout = clearInterval = queueMicrotask = 1") == []


def test_what_strict_mode_allows_is_not_found() -> None:
    source = """
    let a = 1; const o = {x: 1}; var v
    a = 2; a += 1; a++; o.x = 2; o['y'] = 3; [a, v] = [1, 2]; ({x: a} = o)
    const n = 0.5 + 0 + 0x10 + 0o10 + 0b1 + 1e3 + 10n + 1_000
    const s = '\\0' + "\\x41\\u0041\\n" + '\\\\1' + `\\0` + String.raw`\\01`
    delete o.x; delete o['y']
    for (const k in o) {} for (let i = 0; i < 1; i++) {} for (v of [1]) {}
    """
    assert found(source) == []


def test_scopes_nested_functions_params_and_shadowing() -> None:
    source = """\
function outer(p, {q}, [r], ...rest) {
  p = q = r = rest = 1
  const inner = (s = (p = 2)) => { s = 3; t = 4 }
  function deeper() { let p; p = 5; u = 6 }
}
{ let scoped; scoped = 1 }
scoped = 2
"""
    assert found(source) == [(3, 43, "undeclared"), (4, 37, "undeclared"),
                             (7, 1, "undeclared")]


def test_var_and_function_declarations_are_hoisted() -> None:
    source = """\
early = 1
if (true) { var early }
later()
function later() { again = 1; var again }
g = 2
function g() {}
fn = 3
{ function fn() {} }
"""
    # A function declared in a block belongs to the block in strict mode.
    assert found(source) == [(7, 1, "undeclared")]


def test_catch_params_class_names_and_static_blocks() -> None:
    source = """\
try { } catch (e) { e = 1 }
try { } catch ({message, stack: [first]}) { message = first = 1 }
try { } catch { e = 2 }
class K { static { var sv; sv = 1; K = 2; w = 3 } m() { K = 1 } }
const C = class Named { m() { Named = 1; x = 1 } }
const f = function self() { self = 1 }
"""
    assert found(source) == [(3, 17, "undeclared"), (4, 43, "undeclared"),
                             (5, 42, "undeclared")]


def test_labels_are_not_names() -> None:
    assert found("outer: for (;;) { inner: while (true) { break outer; continue inner } }") == []
    assert found("label: { break label }\nlabel = 1") == [(2, 1, "undeclared")]


def test_switch_cases_share_one_block_and_loop_heads_their_own() -> None:
    source = """\
switch (1) { case 1: let a; break; default: a = 1 }
for (let i = 0; i < 1; i++) { i = 2 }
i = 3
for (const [k, v] of []) { k; v }
k = 1
"""
    assert found(source) == [(3, 1, "undeclared"), (5, 1, "undeclared")]


def test_inside_with_a_name_may_be_the_objects_property() -> None:
    # Only the `with` is reported: `a` may well be a property of `o`.
    assert found("const o = {}\nwith (o) { a = 1; function f() { b = 2 } }") == [(2, 1, "with")]


def test_places_count_newlines_and_characters() -> None:
    # A line is ended by \n only (as the header's warnings count), columns are code
    # points: the emoji is one character, not two UTF-16 units.
    assert found("/* Name: x */\r\nlet a = '😀'; b = 1") == [(2, 14, "undeclared")]
    assert found("'\u2028'; c = 1\nd = 2") == [(1, 6, "undeclared"), (2, 1, "undeclared")]


def test_a_job_with_very_many_findings_lists_the_first_and_counts_the_rest() -> None:
    findings = strict_findings("\n".join(f"v{i} = {i}" for i in range(70)))
    assert len(findings) == 51
    assert [f.line for f in findings[:50]] == list(range(1, 51))
    assert findings[-1].kind == "more" and "20 more" in findings[-1].message


@pytest.mark.parametrize("source", ["return (", "let let = 1", "}", "@", "a = `${"])
def test_code_that_does_not_parse_has_no_findings(source: str) -> None:
    assert check(source) == {"ok": False}
    assert strict_findings(source) == ()


def test_deep_nesting_is_no_failure() -> None:
    assert strict_findings("x = " + "[" * 100_000 + "]" * 100_000) == ()


def test_answers_are_kept_by_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    source = "kept_by_text = 1 // test_answers_are_kept_by_the_text"
    first = strict_findings(source)
    calls: list[str] = []

    def counted(text: str) -> dict[str, object]:
        calls.append(text)
        return {"ok": False}

    monkeypatch.setattr(strictness, "check", counted)
    assert strict_findings(source) == first and calls == []
    assert strict_findings(source + " ") == () and len(calls) == 1


@pytest.mark.expected_warning
def test_a_failing_walk_is_logged_and_finds_nothing(monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    from shared.errors import InternalError

    def broken(source: str) -> dict[str, object]:
        raise InternalError("The strict-mode check failed: TypeError: x")

    monkeypatch.setattr(strictness, "check", broken)
    assert strict_findings("walk_fails = 1 // test_a_failing_walk") == ()
    assert "strict-mode check skipped" in caplog.text


def test_a_finding_as_a_warning_names_its_place() -> None:
    finding = StrictFinding(3, 7, "with", "`with` is not allowed")
    assert finding.as_text() == "Line 3, column 7: `with` is not allowed"
