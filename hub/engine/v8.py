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
from py_mini_racer._objects import _ERRORS, ObjectFactoryImpl, _MiniRacerTypes

from shared.text import clean_text

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


def _lenient_text(data: bytes) -> str:
    # V8 writes a lone surrogate as its three-byte (CESU-8) form, which strict UTF-8
    # refuses: read those back as the surrogate, then carry it as U+FFFD.
    try:
        return clean_text(data.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


class _LenientObjects(ObjectFactoryImpl):
    """mini-racer's value conversion, except that a JS string holding a lone
    surrogate (``'\\ud800'``, half of an emoji) arrives with U+FFFD in its place.
    mini-racer decodes strictly: a string result then raised (``eval``), or the
    callback died on the loop, so an ``eval_cancelable`` or a notification never
    completed. The strict path is tried first; only a failure pays for more."""

    def value_handle_to_python(self, ctx: Any, val_handle: Any) -> Any:
        try:
            return super().value_handle_to_python(ctx, val_handle)
        except UnicodeDecodeError:
            contents = val_handle.raw.contents
            typ, text = contents.type, _lenient_text(contents.value.bytes_val[0:contents.len])
            if typ == _MiniRacerTypes.str_utf8:
                return text
            error = _ERRORS.get(typ)
            if error is None:
                raise
            klass, generic = error
            raise klass(text or generic) from None

    def python_to_value_handle(self, ctx: Any, obj: Any) -> Any:
        try:
            return super().python_to_value_handle(ctx, obj)
        except UnicodeEncodeError:
            if not isinstance(obj, str):
                raise
            return super().python_to_value_handle(ctx, clean_text(obj))


class Racer:
    """One V8 isolate + context, used from the asyncio loop that created it."""

    def __init__(self) -> None:
        # MiniRacer() also installs its own setTimeout, which the prelude replaces:
        # build the instance without it (one V8 round trip less per run).
        self._mr = MiniRacer.__new__(MiniRacer)
        self._mr._own_context_maker = _make_context()
        self._mr._ctx = self._mr._own_context_maker.__enter__()
        # The context is a frozen dataclass: its converter is swapped the hard way.
        object.__setattr__(self._mr._ctx, "_object_factory", _LenientObjects())
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

    def heap_stats(self) -> dict[str, Any]:
        return dict(self._mr.heap_stats())

    def collect(self) -> None:
        """A full garbage collection (V8's low-memory notification): slow, so only while idle."""
        self._mr.low_memory_notification()

    def memory_limit_reached(self) -> bool:
        return bool(self._mr.was_hard_memory_limit_reached())

    def close(self) -> None:
        self._global = None
        if self._notifier is not None:
            self._notifier.close()
            self._notifier = None
        self._mr.close()
