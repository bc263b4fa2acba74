"""The layer rule's part an import contract cannot see: no module in hub/api (but the
composition root, app.py, and the Hub it wires, deps.py) hands work to a thread, by
``asyncio.to_thread``, a loop's ``run_in_executor`` or starlette's ``run_in_threadpool``.
What blocks runs in a thread inside a service, which is async at its boundary."""

from __future__ import annotations

import ast
from pathlib import Path

import hub.api

API = Path(hub.api.__file__).parent
WIRING = frozenset({"app.py", "deps.py"})
# The callables that move work to a thread, whatever module or object they come from.
THREAD_HANDOFFS = frozenset({"to_thread", "run_in_executor", "run_in_threadpool"})


def thread_handoff_calls(source: str) -> list[int]:
    """The lines of ``source`` that call one of THREAD_HANDOFFS however it was reached:
    ``asyncio.to_thread(...)``, ``aio.to_thread(...)``, ``loop.run_in_executor(...)``,
    or the name itself."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        name = (called.attr if isinstance(called, ast.Attribute)
                else called.id if isinstance(called, ast.Name) else None)
        if name in THREAD_HANDOFFS:
            found.append(node.lineno)
    return found


def imports_a_thread_handoff(source: str) -> bool:
    """``from asyncio import to_thread``, ``from starlette.concurrency import
    run_in_threadpool``, ... (its later use may be under another name)."""
    return any(isinstance(node, ast.ImportFrom)
               and any(alias.name in THREAD_HANDOFFS for alias in node.names)
               for node in ast.walk(ast.parse(source)))


def test_the_finder_sees_every_form_of_the_call() -> None:
    assert thread_handoff_calls("import asyncio\nasync def f():\n"
                                "    await asyncio.to_thread(print)\n") == [3]
    assert thread_handoff_calls("from asyncio import to_thread\nto_thread(print)\n") == [2]
    assert thread_handoff_calls("import asyncio as aio\nx = 1\naio.to_thread(print)\n") == [3]
    assert thread_handoff_calls("loop = get_loop()\nloop.run_in_executor(None, print)\n") == [2]
    assert thread_handoff_calls("import asyncio\n"
                                "asyncio.get_running_loop().run_in_executor(None, f)\n") == [2]
    assert thread_handoff_calls("from starlette import concurrency\n"
                                "concurrency.run_in_threadpool(print)\n") == [2]
    assert thread_handoff_calls("run_in_threadpool(print)\n") == [1]
    assert imports_a_thread_handoff("from asyncio import sleep, to_thread as t\n")
    assert imports_a_thread_handoff("from starlette.concurrency import run_in_threadpool\n")
    assert imports_a_thread_handoff("from fastapi.concurrency import run_in_threadpool as r\n")
    assert thread_handoff_calls("import asyncio\nasyncio.sleep(0)\nthreads.to_threads()\n"
                                "loop.run_in_executors()\n") == []
    assert not imports_a_thread_handoff("from asyncio import sleep\n")
    assert not imports_a_thread_handoff("from starlette.concurrency import iterate_in_threadpool\n")


def test_no_route_module_hands_work_to_a_thread() -> None:
    modules = sorted(p for p in API.rglob("*.py") if p.name not in WIRING
                     and "node_modules" not in p.parts)
    assert len(modules) > 10  # the folder was found
    offenders = {}
    for path in modules:
        source = path.read_text(encoding="utf-8")
        lines = thread_handoff_calls(source)
        if lines or imports_a_thread_handoff(source):
            offenders[str(path.relative_to(API))] = lines
    assert offenders == {}, ("hub/api modules handing work to a thread (to_thread, "
                             "run_in_executor, run_in_threadpool: put the blocking work in a "
                             f"service, async at its boundary): {offenders}")
