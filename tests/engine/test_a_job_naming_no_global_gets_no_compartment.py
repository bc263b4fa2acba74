"""A warm run gets an SES compartment of its own only if its text can name what a
compartment has of its own (eval, Function, globalThis): a compartment costs a run
about 0.1 ms of the isolate's CPU, and a job that cannot name them cannot reach one
(strict code has no other way to a global; a name is spelled with its letters or
with \\u escapes). What such a job gets for every other name is what any compartment
gives: the same hardened objects."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.engine import warm
from tests.engine.test_warm_engine import SPEC

CASES = [
    # (job text, made a compartment, its answer)
    ("return [typeof Array, typeof JSON.parse, [1, 2].map((x) => x * 2)]", False,
     ["function", "function", [2, 4]]),
    ("return typeof globalThis", True, "object"),
    ("return eval('1 + 1')", True, 2),
    ("return (0, eval)('typeof params')", True, "object"),
    ("return new Function('return 3')()", True, 3),
    ("return \\u0065val('2 * 3')", True, 6),
    ("return glob\\u0061lThis === undefined", True, False),
    ("return 'evaluate this'.length", True, 13),  # a false alarm costs only the compartment
]


def made_and_answered(source: str) -> tuple[bool, Any]:
    async def go() -> tuple[bool, Any]:
        isolate = warm.build(slots=2)
        try:
            before = isolate.racer.eval("__webjob_host.compartmentsMade()")
            outcome = await warm.run(isolate, source, json.loads(json.dumps(SPEC)), 64)
            assert outcome.meta.get("ok"), outcome.meta
            after = isolate.racer.eval("__webjob_host.compartmentsMade()")
            return after > before, json.loads(outcome.body)
        finally:
            isolate.close()
    return asyncio.run(go())


@pytest.mark.parametrize(("source", "made", "answer"), CASES)
def test_a_compartment_only_for_a_job_that_can_name_one(source: str, made: bool,
                                                        answer: Any) -> None:
    assert made_and_answered(source) == (made, answer)


class _Isolate:
    own_per_compartment = ("Function", "globalThis", "eval")


@settings(max_examples=300)
@given(st.text(), st.sampled_from(["eval", "Function", "globalThis", "\\u"]), st.text())
def test_text_that_can_spell_one_of_the_names_gets_one(before: str, name: str,
                                                        after: str) -> None:
    assert not warm._names_no_compartment(_Isolate(), before + name + after)  # type: ignore[arg-type]


def test_a_long_text_gets_one_without_a_look() -> None:
    """The look is linear in the text; past PLAIN_LOOK_CHARS it would cost more than
    the compartment it saves (found by a red-team pass)."""
    short = "return 1 // " + "x" * (warm.PLAIN_LOOK_CHARS - 20)
    assert warm._names_no_compartment(_Isolate(), short)  # type: ignore[arg-type]
    assert not warm._names_no_compartment(_Isolate(), short + "x" * 40)  # type: ignore[arg-type]
