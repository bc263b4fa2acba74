"""ClusterRuns' books around a public admission, without a database: a run whose hit is
still landing gets no row from a rejoin's rewrite (a refused hit would leave it for
good), and a hit that cannot even be sent leaves no run behind and keeps the ended rows
to delete."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from hub.cluster.registry import LiveRun
from hub.cluster.runs import ClusterRuns
from hub.store.limits_store import Step
from shared.errors import TooManyRequests
from tests.cluster.test_public_admission import settled
from tests.cluster.test_public_limit import in_loop, live


class Steps:
    """The registry's side of an admission: steps that say which run they are for."""

    carries = True

    def entry_steps(self, run: LiveRun, ended: Sequence[str] = ()) -> list[Step]:
        return [("INSERT", [run.job_id])]


class HeldHit:
    """A carried hit whose statement is over only when the test says, with its answer."""

    def __init__(self) -> None:
        self.writing: asyncio.Future[tuple[bool, float]] | None = None

    def start(self, steps: Sequence[Step]) -> asyncio.Future[tuple[bool, float]]:
        self.writing = asyncio.get_running_loop().create_future()
        return self.writing

    async def settle(self, writing: asyncio.Future[tuple[bool, float]]) -> bool:
        counted, wait = await asyncio.shield(writing)
        if not counted:
            raise TooManyRequests(f"wait {wait}")
        return True


class Unsendable(HeldHit):
    def start(self, steps: Sequence[Step]) -> asyncio.Future[tuple[bool, float]]:
        raise RuntimeError("the limits' threads are shut down")


def runs_beside_another_node() -> ClusterRuns:
    nodes = SimpleNamespace(node="node-a", interval_s=30.0, reachable=True,
                            every_beat=lambda hook: None, on_rejoin=lambda hook: None)
    runs = ClusterRuns(Steps(), nodes, stop=lambda job_id: False,  # type: ignore[arg-type]
                       interrupt=lambda node, records: 0, history_shared=True)
    runs.shared = True
    return runs


@in_loop
async def test_a_rewrite_skips_a_run_whose_hit_is_still_landing() -> None:
    runs = runs_beside_another_node()
    hit = HeldHit()
    admitting = asyncio.ensure_future(runs.admit(live("landing"), hit))
    await asyncio.sleep(0)  # the hit is sent, not yet over
    assert hit.writing is not None and "landing" in runs._landing
    runs._rejoined()
    assert runs._missing_rows() == []  # its own statement writes the row, if counted
    hit.writing.set_result((False, 30.0))
    with pytest.raises(TooManyRequests):
        await admitting
    assert settled(runs, "landing")  # refused: no row was written, none to delete


@in_loop
async def test_a_hit_not_sent_leaves_no_run_and_keeps_the_ended_rows() -> None:
    runs = runs_beside_another_node()
    runs._ended = ["old"]
    with pytest.raises(RuntimeError):
        await runs.admit(live("unsent"), Unsendable())
    assert settled(runs, "unsent") and runs._ended == ["old"]
