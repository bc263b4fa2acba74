"""A sync eval's answer crosses from V8's thread to the caller through a C
``queue.SimpleQueue``, not mini-racer's ``queue.Queue``, whose Python-level Condition
(notify, then re-acquire) was the worker's largest Python cost in a tiny run. Were
mini-racer to rename the queue, the swap would do nothing: the Racer refuses to start."""

from __future__ import annotations

import queue

from hub.engine import v8


def test_sync_evals_answer_through_a_simple_queue() -> None:
    racer = v8.Racer()
    try:
        answers = racer._mr._ctx._non_cancelable_mr_task_results_queue
        assert type(answers) is queue.SimpleQueue
        assert [racer.eval(f"{n} * 2") for n in range(50)] == [n * 2 for n in range(50)]
        assert answers.empty()
    finally:
        racer.close()
