"""The step debugger's instrumentation: the rewritten job pauses where it should,
shows the right variables, and otherwise behaves (and numbers its lines) exactly
like the job it came from. Instrumented code runs here in a bare V8 context with
a reference ``__dbg`` runtime that records every pause."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hub.engine import v8
from hub.engine.instrument import _new_racer, instrument
from shared.errors import InternalError

# The runtime a debug run must provide, reduced to recording what it is given.
RUNTIME = r"""
globalThis.__trace = [];
globalThis.__logs = [];
globalThis.__done = null;
const __show = (vars) => JSON.parse(JSON.stringify(vars, (k, x) =>
  x === undefined ? '<undefined>' : typeof x === 'function' ? '<function>' :
  x instanceof Error ? String(x) : x));
globalThis.__dbg = {
  v(f) {
    try { return f(); } catch (e) { if (e instanceof ReferenceError) return '<tdz>'; throw e; }
  },
  async pause(line, column, get, frame) {
    __trace.push({kind: 'pause', line, column, vars: __show(get()), frame: frame && frame.name});
  },
  async breakpoint(line, column, get, frame, ...args) {
    __trace.push({kind: 'breakpoint', line, column, vars: __show(get()), args});
  },
  enter(name, line) { __frames.push(['enter', name, line]); return {name, line}; },
  leave(frame) { __frames.push(['leave', frame.name]); },
  caught(error, frame) { __frames.push(['caught', frame.name, String(error)]); },
  async uncaught(error, frame) { __frames.push(['uncaught', frame.name, String(error)]); },
};
globalThis.__frames = [];
globalThis.console = {log: (...a) => { __logs.push(a.join(' ')); }};
globalThis.breakpoint = () => undefined;
"""

# Run like the sandbox does: the body on the wrapper's first line, as job.js.
RUN = ("(async function(){{{code}\n}})().then("
       "v => {{ __done = JSON.stringify({{ok: true, value: v}}); }}, "
       "e => {{ __done = JSON.stringify("
       "{{ok: false, error: String(e), stack: String(e.stack)}}); }})"
       "\n//# sourceURL=job.js\n")


def run(code: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run a job body to its end: its outcome, the pauses it made and its logs."""
    racer = v8.Racer()
    try:
        racer.eval(RUNTIME)
        racer.eval(f"globalThis.params = {json.dumps(params)};")
        racer.eval(RUN.format(code=code))
        for _ in range(100):  # each eval lets V8 run the microtasks still queued
            done = racer.eval("__done")
            if done is not None:
                break
        outcome: dict[str, Any] = json.loads(str(done))
        outcome["trace"] = json.loads(str(racer.eval("JSON.stringify(__trace)")))
        outcome["logs"] = json.loads(str(racer.eval("JSON.stringify(__logs)")))
        outcome["frames"] = json.loads(str(racer.eval("JSON.stringify(__frames)")))
        return outcome
    finally:
        racer.close()


def debug_run(source: str, params: dict[str, Any]) -> dict[str, Any]:
    result = instrument(source)
    assert result.ok, result.error
    # Every line keeps its number; the job's frame closes on a line after the last.
    assert result.code.count("\n") == source.count("\n") + 1
    return run(result.code, params)


JOB = """\
const factor = params.factor;
let total = 0;
async function addLater(x) {
  const y = x * factor;
  return y;
}
const double = async (v) => {
  return v * 2;
};
function plain(v) { debugger; return v + 1; }
if (factor > 1) total += 1; else total -= 1;
for (let i = 0; i < 2; i++) total += i;
for (const item of params.items) {
  total += await addLater(item);
}
const squares = params.items.map(r => r * r);
let n = 0;
while (n < 2) n++;
do { n--; } while (n > 0);
try {
  throw new Error("boom");
} catch (err) {
  total += err.message.length;
} finally {
  total += plain(0);
}
switch (total) {
  case 0: total = -1; break;
  default: total += 100;
}
outer: for (const k in {a: 1, b: 2}) {
  for (;;) { continue outer; }
}
{
  const shadow = "inner";
  debugger;
  let later = 1;
}
const shadow = "outer";
breakpoint();
console.log(total, await double(total), squares.join(","));
return {total, squares, doubled: await double(3)};
"""
PARAMS = {"factor": 2, "items": [1, 2]}
JOB_LINES = [1, 2, 7, 11, 11, 12, 12, 12, 13, 14, 4, 5, 14, 4, 5, 16, 17, 18, 18, 18,
             19, 19, 19, 20, 21, 23, 25, 27, 29, 31, 32, 32, 32, 32, 35, 36, 37, 39, 40,
             41, 8, 42, 8]


@pytest.fixture(scope="module")
def job_run() -> dict[str, Any]:
    return debug_run(JOB, PARAMS)


def pauses(outcome: dict[str, Any], line: int) -> list[dict[str, Any]]:
    return [p for p in outcome["trace"] if p["line"] == line]


def test_pauses_come_in_execution_order(job_run: dict[str, Any]) -> None:
    assert [p["line"] for p in job_run["trace"]] == JOB_LINES
    assert [p["line"] for p in job_run["trace"] if p["kind"] == "breakpoint"] == [36, 40]
    # Two statements on one line are told apart by their column.
    assert [p["column"] for p in pauses(job_run, 11)] == [1, 17]
    assert [p["column"] for p in pauses(job_run, 32)] == [3, 14, 3, 14]


def test_the_result_is_unchanged(job_run: dict[str, Any]) -> None:
    plain = run(JOB, PARAMS)
    assert plain["ok"] and plain["trace"] == []
    assert job_run["value"] == plain["value"] == {"total": 113, "squares": [1, 4],
                                                  "doubled": 6}
    assert job_run["logs"] == plain["logs"] == ["113 226 1,4"]


def test_sync_functions_are_not_instrumented() -> None:
    code = instrument(JOB).code
    assert "debugger" not in code
    assert "function plain(v) { void 0; return v + 1; }" in code
    assert "params.items.map(r => r * r)" in code


def test_loop_and_catch_bindings(job_run: dict[str, Any]) -> None:
    assert [p["vars"]["i"] for p in pauses(job_run, 12)[1:]] == [0, 1]
    assert [p["vars"]["item"] for p in pauses(job_run, 14)] == [1, 2]
    assert [p["vars"]["k"] for p in pauses(job_run, 32)] == ["a", "a", "b", "b"]
    assert pauses(job_run, 23)[0]["vars"]["err"] == "Error: boom"
    assert "i" not in pauses(job_run, 13)[0]["vars"]


def test_function_scopes(job_run: dict[str, Any]) -> None:
    inside = pauses(job_run, 4)[0]["vars"]
    assert inside["x"] == 1 and inside["y"] == "<tdz>" and inside["factor"] == 2
    assert inside["addLater"] == "<function>"
    assert pauses(job_run, 8)[0]["vars"]["v"] == 113
    # Names of functions not yet entered (or already left) are not in scope.
    for p in job_run["trace"]:
        if p["line"] not in (4, 5):
            assert "x" not in p["vars"] and "y" not in p["vars"]
    assert "r" not in pauses(job_run, 16)[0]["vars"]


def test_tdz_shadowing_and_globals(job_run: dict[str, Any]) -> None:
    first = job_run["trace"][0]["vars"]
    assert first["shadow"] == "<tdz>" and first["double"] == "<tdz>"
    # The job globals it names are grouped apart from its own names.
    assert first["<globals>"]["params"] == PARAMS and "console" in first["<globals>"]
    assert "params" not in first and "console" not in first
    assert "request" not in first["<globals>"] and "db" not in first["<globals>"]
    stop = pauses(job_run, 36)[0]
    assert stop["kind"] == "breakpoint"
    assert stop["vars"]["shadow"] == "inner" and stop["vars"]["later"] == "<tdz>"
    after = pauses(job_run, 40)[0]["vars"]
    assert after["shadow"] == "outer" and "later" not in after


METHODS = """\
class Box {
  async get(v) {
    return v + 1;
  }
}
const inc = async (v) => v + 1;
const a = await new Box().get(1);
const b = (breakpoint("mid") ?? 0) + await inc(a);
return [a, b];
"""


def test_async_methods_arrows_and_nested_breakpoints() -> None:
    outcome = debug_run(METHODS, {})
    assert outcome["value"] == [2, 3]
    assert [(p["kind"], p["line"], p["column"]) for p in outcome["trace"]] == [
        ("pause", 6, 1), ("pause", 7, 1), ("pause", 3, 5), ("pause", 8, 1),
        ("breakpoint", 8, 12), ("pause", 6, 26), ("pause", 9, 1)]
    assert outcome["trace"][4]["args"] == ["mid"]
    assert instrument(METHODS).pausable == (3, 6, 7, 8, 9)


def test_pauses_share_their_scope_getters() -> None:
    source = "".join(f"let v{i} = {i};\nif (v{i}) {{ v{i} += 1; }}\n" for i in range(200))
    code = instrument(source).code
    assert code.count("__dbg.pause(") == 600
    assert len(code) < 10 * len(source)  # not a list of every name at every pause


def test_a_local_breakpoint_is_left_alone() -> None:
    code = instrument("const breakpoint = () => 1;\nreturn breakpoint();\n").code
    assert "__dbg.breakpoint" not in code


TRICKY = """\
const text = `first { line
second ${params.factor} // not a comment
third`;
const re = /[{(]\\/\\/x}/g;
const url = "http://example.com/{x}";  // a comment with { a brace
if (text.length) { const m = "a{b".match(re);
  if (m === null) throw new Error("at seven: " + url.length + text.length); }
"""


def stack_line(outcome: dict[str, Any]) -> int:
    match = re.search(r"job\.js:(\d+):", outcome["stack"])
    assert match, outcome["stack"]
    return int(match.group(1))


def test_errors_keep_their_lines_through_strings_templates_and_regexes() -> None:
    plain, debugged = run(TRICKY, {"factor": 2}), debug_run(TRICKY, {"factor": 2})
    assert not plain["ok"] and not debugged["ok"]
    assert debugged["error"] == plain["error"] == "Error: at seven: 2244"
    assert stack_line(debugged) == stack_line(plain) == 7
    assert debugged["trace"][-1]["line"] == 7


def test_tricky_text_is_kept() -> None:
    source = TRICKY.replace("throw new Error(", "console.log(")
    source += "return [text, re.source, url];\n"
    plain, debugged = run(source, {"factor": 2}), debug_run(source, {"factor": 2})
    assert debugged["ok"] and debugged["value"] == plain["value"]
    assert debugged["value"][0] == "first { line\nsecond 2 // not a comment\nthird"


@pytest.mark.parametrize(("source", "line", "column"), [
    ("const a = 1;\nlet b = (2;\n", 2, 11),
    ("let x = 1;\nif (x) {\n  x++;\n", 4, None),  # unclosed: reported at the end
    ("const a = 1; const a = 2;\n", 1, 20),
])
def test_syntax_errors_name_the_source_line(source: str, line: int,
                                            column: int | None) -> None:
    result = instrument(source)
    assert not result.ok and result.code == ""
    assert (result.line, result.column) == (line, column)
    assert result.error and "(" not in result.error[-6:]


def test_a_body_that_closes_its_function_is_refused() -> None:
    result = instrument("return 1;\n}); (async () => {\n")
    assert not result.ok
    assert result.error is not None and "closes its function" in result.error
    assert result.line == 2


def test_without_acorn_the_debugger_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(InternalError, match="run make setup"):
        _new_racer(tmp_path / "acorn.js")


FRAMES = """\
const helper = async function (x) {
  return x + 1;
};
async function fails(n) {
  if (n > 0) return await fails(n - 1);
  throw new TypeError("deep");
}
const named = { async method() { return await helper(1); } };
await named.method();
try { await fails(0); } catch (e) { console.log("kept " + e.message); }
await fails(1);
"""


def test_async_functions_keep_frames_and_an_escaping_exception_is_reported() -> None:
    outcome = debug_run(FRAMES, {})
    assert not outcome["ok"] and outcome["error"] == "TypeError: deep"
    frames = outcome["frames"]
    # Named from where they are written; each frame left, whatever way it ended.
    assert frames[:5] == [["enter", "(job)", 1], ["enter", "method", 8],
                          ["enter", "helper", 1], ["leave", "helper"], ["leave", "method"]]
    assert [f for f in frames if f[0] == "enter"].count(["enter", "fails", 4]) == 3
    assert frames.count(["leave", "fails"]) == 3
    # Caught by the job: no report. Escaping it: caught on the way out, innermost
    # first, then reported once by the job's frame.
    escaping = [f for f in frames if f[0] in ("caught", "uncaught")]
    assert escaping == [["caught", "fails", "TypeError: deep"]] + [
        ["caught", "fails", "TypeError: deep"]] * 2 + [["uncaught", "(job)", "TypeError: deep"]]
    assert outcome["logs"] == ["kept deep"]
    assert {p["frame"] for p in outcome["trace"]} == {"(job)", "method", "helper", "fails"}
