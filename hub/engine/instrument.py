"""The step debugger's instrumentation: a job body rewritten to pause before each
statement of its async code (see ``js/debug_instrument.js`` for the exact shape).

Only a debug run is instrumented. The job is parsed by acorn inside V8, in one
context per process that is loaded on first use and shared under a lock (parsing
is quick, loading acorn is not). The same context holds the strict-mode check
(``js/strict_check.js``, see ``hub.engine.strictness``): ``acorn_call`` is the way
in for both. A call blocks for the parse; a caller on the event loop should run it
in a thread.
"""

from __future__ import annotations

import atexit
import json
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hub.engine import v8
from hub.engine.modules import MODULES_ROOT
from shared.errors import InternalError

__all__ = ["ACORN_BUILD", "Instrumented", "acorn_call", "instrument"]

ACORN_BUILD = MODULES_ROOT / "acorn" / "dist" / "acorn.js"
# Evaluated after acorn: the shared walks over its tree, then the two scripts, each
# defining the global function acorn_call names.
_SCRIPTS = tuple(resources.files("hub.engine") / "js" / name
                 for name in ("ast_names.js", "debug_instrument.js", "strict_check.js"))


@dataclass(frozen=True)
class Instrumented:
    """A job body ready for a debug run, or why it could not be parsed.

    ``code`` keeps every line of the source on its own line number; ``pausable``
    lists the lines a pause or breakpoint can stop on. ``error`` is a syntax
    error's message, at the source's own ``line`` and 1-based ``column`` (``None``
    when the source ends too early, e.g. an unclosed bracket)."""

    ok: bool
    code: str = ""
    pausable: tuple[int, ...] = ()
    error: str | None = None
    line: int | None = None
    column: int | None = None


_lock = threading.Lock()
_racer: v8.Racer | None = None


def _new_racer(acorn: Path) -> v8.Racer:
    try:
        acorn_source = acorn.read_text(encoding="utf-8")
    except OSError:
        raise InternalError("The hub's parser (the debugger, the strict-mode check) needs "
                            "acorn: run make setup") from None
    racer = v8.Racer()
    try:
        racer.eval(acorn_source)
        for script in _SCRIPTS:
            racer.eval(script.read_text(encoding="utf-8"))
    except v8.EvalError as exc:
        racer.close()
        raise InternalError(f"The hub's parser did not load: {v8.first_line(str(exc))}") \
            from None
    return racer


def _close() -> None:
    global _racer
    with _lock:
        if _racer is not None:
            _racer.close()
            _racer = None


# An isolate left open at interpreter exit can keep the process from ending.
atexit.register(_close)


def acorn_call(function: str, source: str, failure: str) -> dict[str, Any]:
    """The JSON answer of the global JS ``function`` (one of ``_SCRIPTS``') called on
    ``source``; InternalError, starting with ``failure``, when it throws."""
    global _racer
    with _lock:
        if _racer is None:
            _racer = _new_racer(ACORN_BUILD)
        try:
            raw = _racer.eval(f"{function}({json.dumps(source)})")
        except v8.EvalError as exc:
            raise InternalError(f"{failure}: {v8.first_line(str(exc))}") from None
    result: dict[str, Any] = json.loads(str(raw))
    return result


def instrument(source: str) -> Instrumented:
    """``source`` (a job body) with its pauses, or its syntax error."""
    result = acorn_call("__webjob_instrument", source,
                        "The debugger could not instrument the job")
    if not result["ok"]:
        error = result["error"]
        return Instrumented(ok=False, error=str(error["message"]), line=error["line"],
                            column=error["column"])
    return Instrumented(ok=True, code=result["code"],
                        pausable=tuple(int(n) for n in result["pausable"]))
