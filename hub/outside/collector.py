"""Python's cyclic garbage collector, paused around work that makes many objects at
once and no cycles (the tokens of a long statement): a collection runs every 700 new
objects and, as they pile up, over all of them, so the work would grow with the
square of its size. The pause is counted, so threads may hold it at once; the
collector runs again when the last lets go (if it ran before)."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["collector_paused"]

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()
