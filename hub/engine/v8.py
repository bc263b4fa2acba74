"""The one place that knows mini-racer (``py_mini_racer`` 0.14.1, pinned).

It wraps a ``MiniRacer`` (one V8 isolate and context) in the few operations the
engine needs, and installs a one-way JS→Python notification function. That
function uses mini-racer's notification mechanism (``_register_js_notification``),
which is far cheaper than ``wrap_py_function`` (no promise, no Python task per
call); it is private API, hence the exact pin.
"""

from __future__ import annotations

import contextlib
import ctypes
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import py_mini_racer
from py_mini_racer import MiniRacer
from py_mini_racer._context import Context as _Context
from py_mini_racer._exc import (
    JSConversionException,
    JSEvalException,
    JSOOMException,
    JSParseException,
)
from py_mini_racer._mini_racer import _make_context
from py_mini_racer._objects import _ERRORS, ObjectFactoryImpl, _MiniRacerTypes

from shared.text import clean_text

__all__ = ["EvalError", "OutOfMemory", "ParseError", "Racer", "first_line"]

# V8's own isolate functions, which libmini_racer.so exports: the isolate a callback
# from V8 runs on, and stopping the JavaScript it runs from another thread (mini-racer's
# task cancel cannot stop a loop that runs in microtasks after its task ended).
_LIB = ctypes.CDLL(str(Path(py_mini_racer.__file__).parent / "libmini_racer.so"))
_TRY_GET_CURRENT = _LIB._ZN2v87Isolate13TryGetCurrentEv
_TRY_GET_CURRENT.restype = ctypes.c_void_p
_TERMINATE = _LIB._ZN2v87Isolate18TerminateExecutionEv
_TERMINATE.argtypes = [ctypes.c_void_p]
_CANCEL_TERMINATE = _LIB._ZN2v87Isolate24CancelTerminateExecutionEv
_CANCEL_TERMINATE.argtypes = [ctypes.c_void_p]
_IS_TERMINATING = _LIB._ZN2v87Isolate22IsExecutionTerminatingEv
_IS_TERMINATING.argtypes = [ctypes.c_void_p]
_IS_TERMINATING.restype = ctypes.c_bool
_from_v8 = _Context.handle_callback_from_v8


def _noting_callback_from_v8(self: Any, callback_id: int, raw: Any) -> None:
    # On the isolate's own thread, inside V8: the one place its pointer can be read.
    if getattr(self, "_webjob_isolate", None) is None:
        object.__setattr__(self, "_webjob_isolate", (_TRY_GET_CURRENT(), threading.get_native_id()))
    _from_v8(self, callback_id, raw)


_Context.handle_callback_from_v8 = _noting_callback_from_v8  # type: ignore[method-assign,assignment]


def _thread_cpu_clock(tid: int) -> int:
    # Linux's clock id for one thread's CPU time (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
    return ((~tid) << 3) | 6

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
        except JSConversionException:
            # An eval that TerminateExecution stopped comes back with no value: said as
            # an error, so that whoever awaits it hears of it (mini-racer would leave
            # the eval's future unsettled for ever).
            raise JSEvalException("The evaluation was stopped") from None
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
        # Every sync eval's answer crosses from V8's thread through this queue: the C
        # SimpleQueue hands it over without queue.Queue's Python-level Condition (its
        # notify and re-acquire were the worker's largest Python cost a tiny run).
        if not hasattr(self._mr._ctx, "_non_cancelable_mr_task_results_queue"):
            raise RuntimeError("mini-racer changed: no queue for sync eval results")
        object.__setattr__(self._mr._ctx, "_non_cancelable_mr_task_results_queue",
                           queue.SimpleQueue())
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

    def learn_isolate(self) -> None:
        """Read the isolate's pointer and thread, which ``terminate`` and ``cpu_ns`` need:
        every eval's result comes back through a callback from V8, on its thread."""
        ctx = self._mr._ctx
        if getattr(ctx, "_webjob_isolate", None) is None:
            self._mr.eval("0")
        if getattr(ctx, "_webjob_isolate", None) is None:
            raise RuntimeError("V8 never called back: the isolate is unknown")

    def _isolate(self) -> tuple[int, int]:
        known: tuple[int, int] | None = getattr(self._mr._ctx, "_webjob_isolate", None)
        if known is None:
            raise RuntimeError("learn_isolate() first")
        return known

    def terminate(self) -> None:
        """Stop the JavaScript the isolate runs now, from any thread (V8's
        TerminateExecution): it unwinds without running catch or finally blocks."""
        _TERMINATE(self._isolate()[0])

    def cancel_terminate(self) -> None:
        """Take back a ``terminate`` that found no JavaScript running (else it would stop
        the next code the isolate runs)."""
        _CANCEL_TERMINATE(self._isolate()[0])

    def cpu_ns(self) -> int:
        """CPU time of the isolate's thread (where all its JavaScript runs), from any thread."""
        return time.clock_gettime_ns(_thread_cpu_clock(self._isolate()[1]))

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
