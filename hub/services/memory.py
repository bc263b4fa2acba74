"""Giving freed heap memory back to the system.

Python frees a large answer once it is sent, but glibc keeps the freed pages of its
heap for the next allocation. ``malloc_trim`` asks it to return what it no longer
uses; it walks the heap, so it runs in a thread, and once for a burst of asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
from collections.abc import Callable

from hub.engine.background import background

__all__ = ["HeapTrim", "malloc_trim"]

# Long enough for the request's frames (and the body they hold) to be gone.
TRIM_AFTER_S = 0.05


def malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``; None under another C library."""
    with contextlib.suppress(OSError, AttributeError):
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim  # glibc only
        return trim
    return None


class HeapTrim:
    """``trim`` (``malloc_trim``, or None where there is none) called soon after an ask,
    off the event loop; asks while one is pending add nothing."""

    def __init__(self, trim: Callable[[int], int] | None,
                 after_s: float = TRIM_AFTER_S) -> None:
        self.trim = trim
        self.after_s = after_s
        self.pending = False

    @property
    def available(self) -> bool:
        return self.trim is not None

    def ask(self) -> None:
        """A trim in ``after_s`` (on the running loop), unless one is pending."""
        if self.pending or self.trim is None:
            return
        self.pending = True
        asyncio.get_running_loop().call_later(self.after_s, self._start)

    def _start(self) -> None:
        background(asyncio.to_thread(self._run))

    def _run(self) -> None:
        self.pending = False
        if self.trim is not None:
            self.trim(0)
