"""Issue 17, the debugger on the hub: step over / into / out by the async call chain,
the chain itself before each pause, why each pause happened (a line breakpoint is a
breakpoint, not a step), the job globals under a node of their own, and a pause where
an exception leaving the job was thrown — against a real hub process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hub.conftest import AUTH, HubProcess, running_hub
from tests.hub.test_debugger import DebugRun

CALLS = """const base = Number(params.base)
async function inner(x) {
  const y = x + 1
  return y
}
async function outer(x) {
  const z = await inner(x)
  return z * 2
}
const r = await outer(base)
return { r }"""
THROWS = """let seen = 'before'
async function check(value) {
  const limit = 3
  if (value > limit) throw new RangeError('too big: ' + value)
  return value
}
seen = 'calling'
return await check(Number(params.n))"""


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with running_hub(tmp_path_factory.mktemp("steps"), jobs={
            "calls": CALLS, "throws": THROWS}) as process:
        yield process


def pause_after(run: DebugRun, command: str, **extra: Any) -> tuple[dict[str, Any],
                                                                    dict[str, Any]]:
    """Send ``command``; the stack and the pause that follow."""
    run.command(command, **extra)
    return next_stop(run)


def next_stop(run: DebugRun) -> tuple[dict[str, Any], dict[str, Any]]:
    stack = run.next("stack")
    return stack, run.next("pause")


def test_step_into_over_and_out_follow_the_async_call_chain(hub: HubProcess) -> None:
    run = DebugRun(hub, "calls", {"params": {"base": 1}})
    stack, first = next_stop(run)
    assert (first["line"], first["reason"]) == (1, "start")
    assert stack["frames"] == [{"name": "(job)", "line": 1, "column": 1}]
    assert pause_after(run, "over")[1]["line"] == 10  # the declarations are skipped
    stack, into = pause_after(run, "into")
    assert into["line"] == 7 and into["reason"] == "step"
    assert [(f["name"], f["line"]) for f in stack["frames"]] == [("outer", 7), ("(job)", 10)]
    stack, deeper = pause_after(run, "step")  # step is step into
    assert deeper["line"] == 3 and stack["depth"] == 3
    assert [f["name"] for f in stack["frames"]] == ["inner", "outer", "(job)"]
    assert pause_after(run, "over")[1]["line"] == 4
    stack, out = pause_after(run, "out")  # back in outer, after inner returned
    assert out["line"] == 8 and [f["name"] for f in stack["frames"]] == ["outer", "(job)"]
    assert out["vars"]["z"]["value"] == 2
    stack, back = pause_after(run, "out")
    assert back["line"] == 11 and stack["depth"] == 1
    run.command("continue")
    assert run.next("meta")["status"] == 200


def test_a_line_breakpoint_pause_says_breakpoint_and_globals_are_grouped(
        hub: HubProcess) -> None:
    run = DebugRun(hub, "calls", {"params": {"base": 5}, "stepFromStart": False,
                                  "breakpoints": [4]})
    _, hit = next_stop(run)
    assert (hit["line"], hit["reason"]) == (4, "breakpoint")
    assert hit["vars"]["y"]["value"] == 6
    group = hit["vars"]["<globals>"]
    assert group["type"] == "group" and group["entries"]["params"]["type"] == "object"
    assert "params" not in hit["vars"]
    _, stepped = pause_after(run, "step")
    assert stepped["reason"] == "step"
    run.command("continue")
    assert run.next("meta")["status"] == 200


def test_an_exception_leaving_the_job_pauses_where_it_was_thrown(hub: HubProcess) -> None:
    run = DebugRun(hub, "throws", {"params": {"n": 9}, "stepFromStart": False,
                                   "pauseOnException": True})
    stack, caught = next_stop(run)
    assert (caught["line"], caught["reason"]) == (4, "exception")
    assert [f["name"] for f in stack["frames"]] == ["check", "(job)"]
    shown = caught["vars"]
    assert next(iter(shown)) == "<exception>"
    assert shown["<exception>"]["className"] == "RangeError"
    assert shown["<exception>"]["value"] == "too big: 9"
    assert shown["value"]["value"] == 9 and shown["limit"]["value"] == 3
    assert shown["seen"]["value"] == "calling"
    run.command("continue")
    failure = run.next("failure")
    assert failure["error"].startswith("RangeError: too big: 9")


def test_without_the_option_an_exception_ends_the_run_at_once(hub: HubProcess) -> None:
    run = DebugRun(hub, "throws", {"params": {"n": 9}, "stepFromStart": False})
    failure = run.next("pause", "failure")
    assert failure.get("success") is False and "too big" in failure["error"]


def test_stopping_at_a_pause_does_not_pause_again_for_the_stop(hub: HubProcess) -> None:
    run = DebugRun(hub, "throws", {"params": {"n": 1}, "pauseOnException": True})
    assert next_stop(run)[1]["line"] == 1
    run.command("stop")
    assert run.next("pause", "failure")["error"] == "Stopped by the debugger at line 1"


def test_bad_exception_option_is_refused(hub: HubProcess) -> None:
    with httpx.Client(base_url=hub.url, timeout=30) as client:
        answer = client.post("/api/webjobs/debug/calls", json={"pauseOnException": "yes"},
                             headers=AUTH)
    assert "HUB-001" in answer.text and "pauseOnException" in answer.text
