"""The layer rule's part an import contract cannot see: no module in hub/api (but the
composition root, app.py, and the Hub it wires, deps.py) calls ``asyncio.to_thread``.
What blocks runs in a thread inside a service, which is async at its boundary."""

from __future__ import annotations

import ast
from pathlib import Path

import hub.api

API = Path(hub.api.__file__).parent
WIRING = frozenset({"app.py", "deps.py"})


def to_thread_calls(source: str) -> list[int]:
    """The lines of ``source`` that call ``to_thread`` however it was imported:
    ``asyncio.to_thread(...)``, ``aio.to_thread(...)``, or the name itself."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        name = (called.attr if isinstance(called, ast.Attribute)
                else called.id if isinstance(called, ast.Name) else None)
        if name == "to_thread":
            found.append(node.lineno)
    return found


def imports_to_thread(source: str) -> bool:
    """``from asyncio import to_thread`` (its later use may be under another name)."""
    return any(isinstance(node, ast.ImportFrom) and node.module == "asyncio"
               and any(alias.name == "to_thread" for alias in node.names)
               for node in ast.walk(ast.parse(source)))


def test_the_finder_sees_every_form_of_the_call() -> None:
    assert to_thread_calls("import asyncio\nasync def f():\n"
                           "    await asyncio.to_thread(print)\n") == [3]
    assert to_thread_calls("from asyncio import to_thread\nto_thread(print)\n") == [2]
    assert to_thread_calls("import asyncio as aio\nx = 1\naio.to_thread(print)\n") == [3]
    assert imports_to_thread("from asyncio import sleep, to_thread as t\n")
    assert to_thread_calls("import asyncio\nasyncio.sleep(0)\nthreads.to_threads()\n") == []
    assert not imports_to_thread("from asyncio import sleep\n")


def test_no_route_module_calls_to_thread() -> None:
    modules = sorted(p for p in API.rglob("*.py") if p.name not in WIRING
                     and "node_modules" not in p.parts)
    assert len(modules) > 10  # the folder was found
    offenders = {}
    for path in modules:
        source = path.read_text(encoding="utf-8")
        lines = to_thread_calls(source)
        if lines or imports_to_thread(source):
            offenders[str(path.relative_to(API))] = lines
    assert offenders == {}, ("hub/api modules calling asyncio.to_thread (put the blocking "
                             f"work in a service, async at its boundary): {offenders}")
