"""A public request's rate-limit hit, counted as its run enters the cluster's registry.

Where the public rate limit counts in a PostgreSQL hub database and nodes share it,
a run would otherwise cost two statements before its code starts: the hit, then its
row in the cluster's registry (:mod:`hub.cluster.registry`). Instead, when the runner
has said that the request's run follows and can carry the hit (:func:`expect_run`, as
it authorises the run), the limit's ``admit`` leaves an :class:`Admission` in the
request's context rather than counting at once; the runner takes it
(:func:`take_admission`) and the registry counts it in the statement that writes the
run's row, the row written only when the hit was counted. A request that never
reaches its run (a body refused, a client gone) is counted on its own after
:data:`COUNT_ALONE_AFTER_S`, so every admitted request counts exactly once, as before.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Sequence

from hub.store.limits_store import Step

__all__ = ["COUNT_ALONE_AFTER_S", "Admission", "defer_admission", "expect_run", "run_follows",
           "take_admission"]

# Long enough for a request's body to be read and its run to begin; a slower one is
# counted alone, then its row written alone.
COUNT_ALONE_AFTER_S = 0.5
# (steps) -> whether the steps went with the hit; raises TooManyRequests when refused.
Decide = Callable[[Sequence[Step]], Awaitable[bool]]

_PENDING: contextvars.ContextVar[Admission | None] = contextvars.ContextVar(
    "webhub_admission", default=None)
_RUN_FOLLOWS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "webhub_run_follows", default=False)


def expect_run() -> None:
    """The current request's run follows, and may count its public hit with its row."""
    _RUN_FOLLOWS.set(True)


def run_follows() -> bool:
    """Whether :func:`expect_run` was said for the current request (once: the next
    asks find it unsaid)."""
    said = _RUN_FOLLOWS.get()
    if said:
        _RUN_FOLLOWS.set(False)
    return said


class Admission:
    """One request's hit, counted once: by its run, with the run's row (:meth:`count`),
    or alone once ``COUNT_ALONE_AFTER_S`` has passed."""

    def __init__(self, decide: Decide) -> None:
        self._decide = decide
        self._counting: asyncio.Future[bool] | None = None
        self._timer = asyncio.get_running_loop().call_later(COUNT_ALONE_AFTER_S,
                                                            self.count_alone)

    @property
    def pending(self) -> bool:
        """Not counted yet: :meth:`count` may still carry steps."""
        return self._counting is None

    def count_alone(self) -> None:
        """Count the hit now, with nothing carried, unless it is already counted."""
        if self._counting is None:
            self._start(())
            # Nobody may wait for it (the request has gone): a refusal is retrieved here.
            assert self._counting is not None
            self._counting.add_done_callback(_retrieved)

    async def count(self, steps: Sequence[Step] = ()) -> bool:
        """The hit counted (at most once), carrying ``steps`` when it is still pending;
        whether they went with it. Raises ``TooManyRequests`` when it was refused."""
        if self._counting is None:
            self._start(steps)
        assert self._counting is not None
        # A run given up meanwhile leaves its hit counting: it was admitted or refused.
        return await asyncio.shield(self._counting)

    def _start(self, steps: Sequence[Step]) -> None:
        self._timer.cancel()
        self._counting = asyncio.ensure_future(self._decide(steps))


def _retrieved(done: asyncio.Future[bool]) -> None:
    if not done.cancelled():
        done.exception()


def defer_admission(admission: Admission) -> None:
    """``admission`` is the current request's, for its run to take; one left there
    before it is counted alone now."""
    earlier = _PENDING.get()
    if earlier is not None:
        earlier.count_alone()
    _PENDING.set(admission)


def take_admission() -> Admission | None:
    """The current request's admission, if its hit waits for its run (taken: a second
    run in the same context finds none)."""
    admission = _PENDING.get()
    if admission is not None:
        _PENDING.set(None)
    return admission
