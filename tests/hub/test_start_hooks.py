"""hub.services.run_start.StartHooks: each hook once, in order, and nothing kept once
called or closed (kept, the hooks would tie a finished run's answer into a cycle)."""

from __future__ import annotations

import gc
import weakref

from hub.services.run_start import StartHooks


class Held:
    """Something a hook holds (a run's record, say)."""


def test_hooks_run_once_in_order_and_are_let_go() -> None:
    seen: list[str] = []
    hooks = StartHooks(lambda: seen.append("caller"))
    hooks.first(lambda: seen.append("watch"))
    hooks.first(lambda: seen.append("record"))
    hooks()
    hooks()
    assert seen == ["record", "watch", "caller"]


def test_what_a_hook_holds_is_freed_without_the_collector() -> None:
    holder = [Held()]
    alive = weakref.ref(holder[0])
    hooks = StartHooks(None)
    hooks.first(holder.clear)  # the hook holds the list, the list the Held
    del holder
    gc.disable()
    try:
        hooks.close()
        assert alive() is None
    finally:
        gc.enable()
