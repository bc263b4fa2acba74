"""What is done once a worker has a run: the one ``on_start`` the runner gives its
``RunRequest``, made before the request (which never changes), and filled in by the
runner as the run's watchers come: its history record and its queue-wait metric go
before its caller's own hook."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["StartHooks"]


class StartHooks:
    """Called once by the engine when a worker has the run: each hook, in order."""

    def __init__(self, then: Callable[[], None] | None) -> None:
        self._hooks: list[Callable[[], None]] = [] if then is None else [then]

    def first(self, hook: Callable[[], None]) -> None:
        """``hook`` before those added so far."""
        self._hooks.insert(0, hook)

    def __call__(self) -> None:
        hooks, self._hooks = self._hooks, []  # once; and what they hold is let go
        for hook in hooks:
            hook()

    def close(self) -> None:
        """The run is over: hooks never called go. They hold the run's record and
        watchers, which hold the request, which holds this: kept, the cycle would keep
        the run's whole answer until the collector's rare full pass."""
        self._hooks = []
