"""What the warm engine changes on purpose (issue 18): jobs run in strict mode against
frozen built-ins, so each change below fails with JOB-001 at the job's own line and a
message that says what to change; the same job with ``Isolation: fresh`` runs as it
did before (sloppy mode, built-ins of its own), and what such a run changed is gone
for the next run, fresh or warm. Every case runs RUNS times on one worker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from hub.engine.engine import RunResult
from tests.engine.conftest import EngineHarness, body_json
from tests.engine.test_warm_semantics import RUNS, Jobs, one_worker, returns


@dataclass(frozen=True)
class Change:
    source: str           # params.n varies from run to run
    line: int             # the line the failure must name
    column: int | None    # syntax errors name their column too
    fix: tuple[str, ...]  # what the message must mention (case ignored)
    sloppy: Callable[[int], Any]  # what the job returns under ``Isolation: fresh``


FRESH = "Isolation: fresh"
CHANGES = {
    "assignment-to-an-undeclared-name": Change(
        "const n = params.n\ncounter = n + 1\nreturn counter", 2, None,
        ("counter", "declare", FRESH), lambda n: n + 1),
    "with": Change(
        "const n = params.n\nwith ({ a: n }) { return a }", 2, 1,
        ("with", "strict mode", FRESH), lambda n: n),
    "legacy-octal-literal": Change(
        "const n = params.n\nreturn n + 010", 2, 12, ("octal", "0o", FRESH), lambda n: n + 8),
    "new-method-on-a-built-in-prototype": Change(
        "const n = params.n\nArray.prototype.shout = function () { return n }\nreturn [].shout()",
        2, None, ("shout", "frozen", FRESH), lambda n: n),
    "replaced-method-of-a-built-in-prototype": Change(
        'const n = params.n\nString.prototype.trim = function () { return "t" + n }\n'
        'return " a ".trim()', 2, None, ("trim", "frozen", FRESH), lambda n: f"t{n}"),
    "new-member-of-a-built-in-object": Change(
        "const n = params.n\nMath.double = (x) => 2 * x\nreturn Math.double(n)", 2, None,
        ("double", "frozen", FRESH), lambda n: 2 * n),
}
# What every change above would leave behind if it leaked out of its run.
PRISTINE = 'return [typeof counter, typeof a, typeof [].shout, " a ".trim(), typeof Math.double]'
CLEAN = ["undefined", "undefined", "undefined", "a", "undefined"]


@pytest.fixture(scope="module")
def solo() -> Iterator[EngineHarness]:
    with one_worker() as harness:
        yield harness


def says_what_to_change(change: Change, result: RunResult) -> None:
    assert result.error is not None, result.body[:200]
    message = result.error.message
    assert result.error.code == "JOB-001" and result.error.line == change.line, message
    if change.column is not None:
        assert result.error.column == change.column, message
    missing = [fix for fix in change.fix if fix.lower() not in message.lower()]
    assert not missing, f"{message!r} does not mention {missing}"


@pytest.mark.parametrize("name", CHANGES)
def test_a_strict_mode_change_fails_with_what_to_change(solo: EngineHarness, name: str) -> None:
    change = CHANGES[name]
    Jobs(solo).many(change.source, lambda _n, result: says_what_to_change(change, result))
    assert body_json(solo.run(PRISTINE)) == CLEAN  # a failed run changed nothing either


@pytest.mark.parametrize("name", CHANGES)
def test_isolation_fresh_runs_the_same_job_as_today(solo: EngineHarness, name: str) -> None:
    change = CHANGES[name]
    fresh, warm = Jobs(solo, "fresh"), Jobs(solo)
    for n in range(RUNS):
        assert body_json(fresh.run(change.source, params={"n": n})) == change.sloppy(n)
        for after in (fresh, warm):  # on the same worker, the next run of either kind
            assert body_json(after.run(PRISTINE)) == CLEAN, after.isolation


def test_isolation_fresh_is_sloppy_mode(solo: EngineHarness) -> None:
    """Sloppy-mode rules a job may rely on without knowing it, beyond the cases above."""
    source = """const n = params.n
function plain() { return typeof this }
const frozen = Object.freeze({ k: n })
frozen.k = -1
return [plain(), this === globalThis, frozen.k, (function () { return arguments.callee.name })()]"""
    Jobs(solo, "fresh").many(source, returns(lambda n: ["object", True, n, ""]))
