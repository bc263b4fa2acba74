"""The one place that knows mini-racer (``py_mini_racer`` 0.14.1, pinned).

It wraps a ``MiniRacer`` (one V8 isolate and context) in the few operations the
engine needs, and installs a one-way JS→Python notification function. That
function uses mini-racer's notification mechanism (``_register_js_notification``),
which is far cheaper than ``wrap_py_function`` (no promise, no Python task per
call); it is private API, hence the exact pin.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from py_mini_racer import MiniRacer
from py_mini_racer._exc import (
    JSEvalException,
    JSOOMException,
    JSParseException,
)
from py_mini_racer._mini_racer import _make_context

__all__ = ["EvalError", "OutOfMemory", "ParseError", "Racer", "first_line"]

ParseError = JSParseException
OutOfMemory = JSOOMException
EvalError = JSEvalException


def first_line(message: str) -> str:
    """The readable part of a V8 error text (drops source excerpts and frames)."""
    lines = [ln for ln in message.splitlines() if ln.strip()]
    for line in reversed(lines):
        if ":" in line and not line.lstrip().startswith("at ") and "^" not in line:
            return line.split(": ", 1)[-1] if line.startswith("<anonymous>") else line
    return lines[0] if lines else "JavaScript error"


class Racer:
    """One V8 isolate + context, used from the asyncio loop that created it."""

    def __init__(self) -> None:
        # MiniRacer() also installs its own setTimeout, which the prelude replaces:
        # build the instance without it (one V8 round trip less per run).
        self._mr = MiniRacer.__new__(MiniRacer)
        self._mr._own_context_maker = _make_context()
        self._mr._ctx = self._mr._own_context_maker.__enter__()
        self._notifier: contextlib.ExitStack | None = None
        self._global: Any = None

    def install_notifier(self, global_name: str, handler: Callable[[str], None],
                         with_args: bool = True) -> None:
        """A global JS function that calls ``handler`` on this loop. Reading its
        argument needs the isolate (so waits until JS yields); ``with_args=False``
        skips that, for a pure wake-up that works while JS is still running."""
        ctx = self._mr._ctx
        assert ctx is not None

        def on_note(value_handle: Any) -> None:
            if not with_args:
                handler("")
                return
            args: Any = ctx._value_handle_to_python(value_handle)
            handler(str(args[0]))

        if self._notifier is None:
            self._notifier = contextlib.ExitStack()
        func = self._notifier.enter_context(ctx._register_js_notification(on_note))
        if self._global is None:
            self._global = self._mr.eval("globalThis")
        self._global[global_name] = func

    def eval(self, code: str) -> Any:
        return self._mr.eval(code)

    async def eval_async(self, code: str) -> Any:
        # The cancelable form keeps the asyncio loop running while JS runs, so
        # notifications (live console lines, bridge calls) are handled meanwhile.
        return await self._mr.eval_cancelable(code)

    def set_memory_limit(self, limit_bytes: int) -> None:
        self._mr.set_hard_memory_limit(limit_bytes)

    def memory_limit_reached(self) -> bool:
        return bool(self._mr.was_hard_memory_limit_reached())

    def close(self) -> None:
        self._global = None
        if self._notifier is not None:
            self._notifier.close()
            self._notifier = None
        self._mr.close()
