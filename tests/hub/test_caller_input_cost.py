"""What the hub does with a caller's input costs time linear in it: every parser and
bounding step, fed the same structure at 10 KB, 100 KB and 1 MB, takes at most about
ten times as long for ten times the input (super-linear growth fails), and the steps
that stay on the event loop for a small body take less than 100 ms at 1 MB.

(The whole hub under the largest bodies, three at once: test_hostile_bodies_hold_no_loop.py.)"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from hub.history.record import bound_params
from hub.services.json_bodies import collect_pairs, parse_json, parse_large_body
from shared.text import json_text_deeper_than

SIZES = (10_000, 100_000, 1_000_000)


def _best(fn: Callable[[Any], Any], arg: Any) -> float:
    # The thread's own CPU time: what other processes on a busy machine do is left out.
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        fn(arg)
        best = min(best, time.thread_time() - started)
    return best


def _assert_linear(fn: Callable[[Any], Any], make: Callable[[int], Any]) -> list[float]:
    """Ten times the input may cost at most ~25 times the time (a busy machine's noise;
    a floor of 0.5 ms for the smallest); a quadratic step costs a hundred."""
    times = [_best(fn, make(size)) for size in SIZES]
    assert times[1] < max(times[0], 5e-4) * 25, times
    assert times[2] < max(times[1], 5e-3) * 25, times
    return times


def _form_pairs(size: int) -> list[tuple[str, str]]:
    return [("a", "")] * (size // 3)


def _wide(size: int) -> bytes:
    return b'{"who":[' + b"{}," * (size // 3) + b"{}]}"


def _chained(size: int) -> bytes:
    chain = b"[" * 60 + b"1" + b"]" * 60 + b","
    return b"[" + chain * (size // len(chain)) + b"1]"


def _strings(size: int) -> bytes:
    return b"[" + b'"a[\\"{",' * (size // 8) + b'"z"]'


def _deep(size: int) -> bytes:
    return b"[" * (size // 2) + b"]" * (size // 2)


def test_a_repeated_form_name_is_collected_in_linear_time() -> None:
    _assert_linear(collect_pairs, _form_pairs)


@pytest.mark.parametrize("make", [_wide, _chained, _strings, _deep],
                         ids=["wide", "chained", "strings", "deep"])
def test_the_json_depth_is_read_in_linear_time(make: Callable[[int], bytes]) -> None:
    times = _assert_linear(lambda body: json_text_deeper_than(body, 64), make)
    assert times[2] < 0.1, times  # short C calls: it never holds the loop for long


@pytest.mark.parametrize("make", [_wide, _chained, _strings], ids=["wide", "chained", "strings"])
def test_a_large_body_is_parsed_in_linear_time(make: Callable[[int], bytes]) -> None:
    _assert_linear(lambda body: parse_large_body(body, {}), make)


def test_a_large_form_is_parsed_in_linear_time() -> None:
    _assert_linear(lambda body: parse_large_body(body, {}, form=True),
                   lambda size: b"a=&" * (size // 3))


def test_a_small_body_is_parsed_on_the_loop_in_linear_time() -> None:
    _assert_linear(parse_json, lambda size: _wide(min(size, 60_000)))


def test_what_history_keeps_costs_the_same_whatever_the_size() -> None:
    times = [_best(bound_params, {"who": [{}] * (size // 3)}) for size in SIZES]
    # 10 KB is walked whole; from 100 KB on, the walk stops at its 64 KB budget.
    assert times[2] < max(times[1], 1e-3) * 3, times
