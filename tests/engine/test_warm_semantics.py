"""What jobs see, kept under the warm engine (issue 18): one isolate per worker and a
fresh compartment per run must not change what a job's code observes. Every behaviour
runs RUNS times in a row on ONE worker (the same job text, different params each
time), because a warm isolate goes wrong on the second or tenth run, not the first.
Each test runs both ways: the warm default and ``Isolation: fresh`` (the old engine).
The strict-mode changes and what ``Isolation: fresh`` still allows are in
test_warm_strict.py."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hub.engine.engine import RunResult
from tests.engine.conftest import EngineHarness, body_json, pids, workers

RUNS = 10
Check = Callable[[int, RunResult], None]


def one_worker() -> Any:
    """An engine with exactly one worker, so consecutive runs share one isolate."""
    return workers(1)


@dataclass
class Jobs:
    """Runs job bodies on one worker, warm (the default) or ``Isolation: fresh``."""

    harness: EngineHarness
    isolation: str = "warm"

    def run(self, source: str, **kw: Any) -> RunResult:
        kw.setdefault("isolation", self.isolation)
        return self.harness.run(source, **kw)

    def many(self, source: str, check: Check, runs: int = RUNS) -> None:
        """Run ``source`` ``runs`` times with ``params.n`` = 0, 1, …; check each result."""
        before = pids(self.harness)
        for n in range(runs):
            check(n, self.run(source, params={"n": n}))
        if self.isolation == "warm":  # the same warm worker served every run
            assert pids(self.harness) == before


@pytest.fixture(scope="module")
def solo() -> Iterator[EngineHarness]:
    with one_worker() as harness:
        yield harness


@pytest.fixture(params=["warm", "fresh"])
def jobs(request: pytest.FixtureRequest, solo: EngineHarness) -> Jobs:
    return Jobs(solo, request.param)


def failed(result: RunResult, message: str, line: int, column: int | None = None) -> None:
    assert result.error is not None, result.body[:200]
    assert (result.error.code, result.error.message) == ("JOB-001", message)
    assert result.error.line == line
    if column is not None:
        assert result.error.column == column


def returns(want: Callable[[int], Any]) -> Check:
    """A check that the run with ``params.n`` = n answered ``want(n)``."""
    def check(n: int, result: RunResult) -> None:
        assert body_json(result) == want(n)
    return check


def col(source: str, line: int, text: str) -> int:
    """The 1-based column where ``text`` first starts on ``line`` of ``source``."""
    return source.split("\n")[line - 1].index(text) + 1


# ---- undeclared names ------------------------------------------------------------
UNDECLARED = """const n = params.n
let caught = null
try { notDeclared } catch (e) { caught = [e instanceof ReferenceError, e.message] }
if (n % 2) return [n, caught, typeof notDeclared]
return n + notDeclared"""


def test_an_undeclared_read_is_a_reference_error_naming_the_name(jobs: Jobs) -> None:
    def check(n: int, result: RunResult) -> None:
        if n % 2:
            assert body_json(result) == [n, [True, "notDeclared is not defined"], "undefined"]
        else:
            failed(result, "ReferenceError: notDeclared is not defined (line 5)", 5)
    jobs.many(UNDECLARED, check)


def test_a_name_an_earlier_run_declared_is_still_undeclared(jobs: Jobs) -> None:
    leave = "var leftBehind = params.n; globalThis.leftOnGlobal = params.n; return leftBehind"
    read = "const r = []; for (const f of [() => leftBehind, () => leftOnGlobal])" \
           " { try { r.push(f()) } catch (e) { r.push(String(e)) } } return r"
    for n in range(RUNS):
        assert body_json(jobs.run(leave, params={"n": n})) == n
        assert body_json(jobs.run(read)) == ["ReferenceError: leftBehind is not defined",
                                             "ReferenceError: leftOnGlobal is not defined"]


GLOBAL_PROPERTY = """globalThis.shared = params.n
globalThis.helper = (x) => x + 1
const seen = [shared, helper(shared), typeof shared]
shared = shared + 10
return [...seen, globalThis.shared]"""


def test_a_property_put_on_global_this_is_a_global_name(jobs: Jobs) -> None:
    """Fresh: a global property is read and assigned by name, as in plain JavaScript.
    Warm: a job's bare names are its own declarations, its globals and the built-ins
    (fixed when the job starts, so no lookup goes through a scope proxy): a property it
    puts on globalThis is read as globalThis.x (a decision, in the README)."""
    if jobs.isolation == "fresh":
        jobs.many(GLOBAL_PROPERTY, returns(lambda n: [n, n + 1, "number", n + 10]))
        return
    def undeclared(n: int, result: RunResult) -> None:
        assert result.error is not None and result.error.line == 3, result.body[:200]
        assert result.error.message.startswith("ReferenceError: shared is not defined (jobs run "
                                               "in strict mode: declare it")
    jobs.many(GLOBAL_PROPERTY, undeclared)
    jobs.many("globalThis.shared = params.n; return [globalThis.shared, typeof shared]",
              returns(lambda n: [n, "undefined"]))


# Names SES or the engine's own machinery could leave on a compartment's global.
MACHINERY = ["lockdown", "harden", "Compartment", "assert", "HandledPromise", "ModuleSource",
             "StaticModuleRecord", "__host", "process", "global"]


@pytest.mark.parametrize("name", MACHINERY)
def test_the_engines_own_names_are_undeclared(jobs: Jobs, name: str) -> None:
    source = f"""const got = [typeof {name}, "{name}" in globalThis, globalThis.{name} === void 0]
try {{ {name}; got.push("read") }} catch (e) {{ got.push(e instanceof ReferenceError, e.message) }}
return [params.n, got]"""
    jobs.many(source, returns(lambda n: [n, ["undefined", False, True, True,
                                             f"{name} is not defined"]]))


def test_the_host_object_is_out_of_a_warm_jobs_reach(jobs: Jobs) -> None:
    """A warm job's parameter of that name shadows it (it reads as undefined); a fresh
    job's global is the host object, frozen, as before the warm engine."""
    source = ("return [params.n, typeof __webjob_host, '__webjob_host' in globalThis,"
              " __webjob_host === undefined || Object.isFrozen(__webjob_host)]")
    fresh = jobs.isolation == "fresh"
    jobs.many(source, returns(lambda n: [n, "object" if fresh else "undefined", fresh, True]))


# ---- failures name the job's own line ----------------------------------------------
def test_a_throw_names_the_jobs_line_and_column(jobs: Jobs) -> None:
    later = 'const n = params.n\n\nif (n >= 0) throw new Error("boom " + n)\nreturn 1'
    first = 'throw new Error("first " + params.n)'
    jobs.many(later, lambda n, r: failed(r, f"Error: boom {n} (line 3)", 3, col(later, 3, "new")))
    jobs.many(first, lambda n, r: failed(r, f"Error: first {n} (line 1)", 1, 7))


def test_an_uncaught_rejection_names_the_jobs_line(jobs: Jobs) -> None:
    source = """const n = params.n
new Promise((_, reject) => setTimeout(() => reject(new Error("late " + n)), 1))
await new Promise((resolve) => setTimeout(resolve, 3000))
return n"""

    def check(n: int, result: RunResult) -> None:
        failed(result, f"Error: late {n} (line 2)", 2, col(source, 2, "new Error"))
        assert result.runtime_ms < 1500  # at once, not after the 3 s wait
    jobs.many(source, check)


def test_a_throw_in_a_timer_names_the_jobs_line(jobs: Jobs) -> None:
    source = """const n = params.n
setTimeout(() => {
  throw new Error("in timer " + n)
}, 1)
await new Promise((resolve) => setTimeout(resolve, 3000))
return n"""

    def check(n: int, result: RunResult) -> None:
        failed(result, f"Error: in timer {n} (line 3)", 3, col(source, 3, "new"))
        assert result.runtime_ms < 1500
    jobs.many(source, check)


def test_a_syntax_error_names_the_jobs_line_and_column(jobs: Jobs) -> None:
    later = "const a = params.n\n\n  let b = ;\nreturn a"
    message = "SyntaxError: Unexpected token ';'"
    jobs.many(later, lambda _n, r: failed(r, f"{message} (line 3)", 3, 11))
    before = pids(jobs.harness)
    for n in range(RUNS):  # on line 1 the column is the job's own, not the wrapper's
        failed(jobs.run(" " * n + "let b = ;"), f"{message} (line 1)", 1, n + 9)
    assert jobs.isolation == "fresh" or pids(jobs.harness) == before


FRAME = re.compile(r"at (?:(\S+) \()?job\.js:(\d+):(\d+)\)?$", re.MULTILINE)
NESTED = """const n = params.n

function inner() { throw new Error("deep " + n) }

function outer() { return inner() }

try { outer() } catch (e) { return e.stack }"""


def test_a_caught_stack_has_the_jobs_frames(jobs: Jobs) -> None:
    want = [("inner", 3, col(NESTED, 3, "new")), ("outer", 5, col(NESTED, 5, "inner()")),
            (7, col(NESTED, 7, "outer()"))]

    def check(n: int, result: RunResult) -> None:
        stack = body_json(result)
        assert stack.startswith(f"Error: deep {n}\n"), stack
        frames = [(name, int(line), int(column)) for name, line, column in FRAME.findall(stack)]
        assert frames[:2] == want[:2], stack
        assert frames[2][1:] == want[2], stack  # the top level: its name is the engine's
    jobs.many(NESTED, check)


def test_a_stack_after_an_await_has_the_jobs_line(jobs: Jobs) -> None:
    source = """const n = params.n
async function later() {
  await null
  throw new Error("async " + n)
}
try { await later() } catch (e) { return e.stack }"""

    def check(n: int, result: RunResult) -> None:
        stack = body_json(result)
        assert stack.startswith(f"Error: async {n}\n"), stack
        assert FRAME.findall(stack)[0] == ("later", "4", str(col(source, 4, "new"))), stack
    jobs.many(source, check)


# ---- the clock, randomness and locales ------------------------------------------------
CLOCK = """const a = Date.now()
while (Date.now() === a) {}
return [a, new Date().getTime() - a, typeof Date(), Math.abs(Date.parse(Date()) - a),
        new Date(params.n * 86400000).toISOString()]"""


def test_date_is_the_real_clock(jobs: Jobs) -> None:
    before = pids(jobs.harness)
    for n in range(RUNS):
        start = time.time() * 1000
        result = jobs.run(CLOCK, params={"n": n})
        end = time.time() * 1000
        now, advanced, kind, parsed_off, iso = body_json(result)
        assert start - 5 <= now <= end + 5  # the wall clock, not a frozen or shifted one
        assert 1 <= advanced < 1000 and kind == "string" and parsed_off < 2000
        day = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=n)
        assert iso == day.strftime("%Y-%m-%dT00:00:00.000Z")
    assert jobs.isolation == "fresh" or pids(jobs.harness) == before


def test_math_random_varies_between_calls_and_runs(jobs: Jobs) -> None:
    seen: list[float] = []

    def check(n: int, result: RunResult) -> None:
        got = body_json(result)
        assert got[0] == n and all(0 <= x < 1 for x in got[1])
        seen.extend(got[1])
    jobs.many("return [params.n, [Math.random(), Math.random(), Math.random()]]", check)
    assert len(set(seen)) == len(seen) == 3 * RUNS


LOCALES = """const n = params.n, v = 1234.5 + n * 1000
return [v.toLocaleString(), new Date(n * 86400000).toLocaleDateString("en-GB", { timeZone: "UTC" }),
  new Intl.NumberFormat("de-DE").format(v), v.toLocaleString("de-DE"),
  new Intl.DateTimeFormat("en-US", { timeZone: "UTC", month: "long" }).format(Date.UTC(2020, n, 1)),
  ["b", "a", "ä"].sort(new Intl.Collator("de").compare), "a".localeCompare("b")]"""
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def test_locale_formatting_and_intl(jobs: Jobs) -> None:
    def check(n: int, result: RunResult) -> None:
        english = f"{1234.5 + n * 1000:,}"
        german = english.replace(",", " ").replace(".", ",").replace(" ", ".")
        day = f"{n + 1:02d}/01/1970"
        assert body_json(result) == [english, day, german, german, MONTHS[n], ["a", "ä", "b"], -1]
    jobs.many(LOCALES, check)


# ---- source text SES would refuse ----------------------------------------------------
COMMENT_LIKE = r"""const n = params.n
// a comment with <!-- and --> and import('x')
/* a block with <!-- b --> and import ("y") */
const re = /<!--|-->|import\(/g
const s = "<!-- a -->" + `x --> y ${n}` + 'import(z)' + String.raw`<!--${n}-->` + `import (w)`
return [s, re.source, s.replace(re, "_"), "a<!--b".length]"""


def test_comment_like_text_runs_and_keeps_its_exact_text(jobs: Jobs) -> None:
    def check(n: int, result: RunResult) -> None:
        text = f"<!-- a -->x --> y {n}import(z)<!--{n}-->import (w)"
        pattern = r"<!--|-->|import\("
        assert body_json(result) == [text, pattern, re.sub(pattern, "_", text), 6]
    jobs.many(COMMENT_LIKE, check)


# ---- own properties named like built-ins ------------------------------------------------
OVERRIDES = """const n = params.n
const o = {}; o.toString = () => "o" + n; o.hasOwnProperty = n; o.constructor = n + 1
const a = [n]; a.toString = () => "a" + n; a.hasOwnProperty = n
class C {}
const c = new C(); c.toString = () => "c" + n; c.hasOwnProperty = n; c.constructor = n + 3
class NamedError extends Error { constructor(m) { super(m); this.name = "Named" + n } }
const e = new Error(); e.message = "m" + n; e.name = "E" + n
return [String(o), o.hasOwnProperty, o.constructor, Object.keys(o),
        String(a), a.hasOwnProperty, Array.isArray(a), Object.keys(a),
        String(c), c.hasOwnProperty, c.constructor, Object.keys(c),
        String(new NamedError("x")), String(e), String({}), [1, 2].toString()]"""


def test_own_properties_named_like_built_ins(jobs: Jobs) -> None:
    keys = ["toString", "hasOwnProperty", "constructor"]

    def check(n: int, result: RunResult) -> None:
        assert body_json(result) == [
            f"o{n}", n, n + 1, keys, f"a{n}", n, True, ["0", *keys[:2]], f"c{n}", n, n + 3, keys,
            f"Named{n}: x", f"E{n}: m{n}", "[object Object]", "1,2"]
    jobs.many(OVERRIDES, check)


# ---- events -------------------------------------------------------------------------
TIMEOUT = """const started = Date.now()
const signal = AbortSignal.timeout(20)
const before = signal.aborted
await new Promise((resolve) => signal.addEventListener("abort", resolve))
return [params.n, before, signal.aborted, signal.reason.name, Date.now() - started >= 19]"""


def test_abort_signal_timeout_aborts(jobs: Jobs) -> None:
    jobs.many(TIMEOUT, returns(lambda n: [n, False, True, "TimeoutError", True]))


LISTENERS = """const n = params.n
const target = new EventTarget()
target.addEventListener("ping", () => { throw new Error("listener " + n) })
target.addEventListener("ping", () => console.log("after " + n))
const dispatched = target.dispatchEvent(new Event("ping"))
const signal = AbortSignal.timeout(5)
signal.addEventListener("abort", () => { throw new Error("abort listener " + n) })
await new Promise((resolve) => signal.addEventListener("abort", resolve))
return dispatched"""


def test_a_throwing_listener_is_reported_in_its_own_runs_console(jobs: Jobs) -> None:
    """As today: the error goes to the run's console.error (with its stack) and the
    other listeners still run, also for an event the engine fires from a timer."""
    def check(n: int, result: RunResult) -> None:
        assert body_json(result) is True
        logs = [(ln.level, ln.message) for ln in result.logs]
        assert [level for level, _ in logs] == ["error", "log", "error"], logs
        assert logs[0][1].startswith(f"Error: listener {n}\n") and "job.js:3:" in logs[0][1]
        assert logs[1][1] == f"after {n}"
        assert logs[2][1].startswith(f"Error: abort listener {n}\n")
        assert "job.js:7:" in logs[2][1]
    jobs.many(LISTENERS, check)


LATE_LISTENER = """const n = params.n
const signal = AbortSignal.timeout(30)
signal.addEventListener("abort", () => { throw new Error("late listener " + n) })
if (n % 2 === 0) return n
// keeps the run open past the signal, and past the signal an earlier run left behind
await new Promise((resolve) => setTimeout(resolve, 60))
return n"""


def test_a_listener_report_never_reaches_another_run(jobs: Jobs) -> None:
    """Even runs end before their signal fires; the odd run after each must log only
    its own report, not the one its predecessor's signal would have made."""
    def check(n: int, result: RunResult) -> None:
        assert body_json(result) == n
        messages = [ln.message.split("\n")[0] for ln in result.logs]
        assert messages == ([f"Error: late listener {n}"] if n % 2 else []), messages
    jobs.many(LATE_LISTENER, check)
