"""The hub moves what start-up made out of the collector's way (``gc.freeze``) for as
long as it serves: first collecting start-up's garbage, so no unreachable leftover is
kept for the process's life; and giving the frozen objects back to the collector when
it stops, since a process (a test run) may make and stop many hubs."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hub.api.app as app_module
from hub.api.app import create_app
from hub.settings import load_settings
from tests.hub.conftest import TEST_SECRET


class Leftover:
    """An object in a reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collector_off() -> Iterator[None]:
    """No automatic pass: what is collected is what the hub collects."""
    was_on = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_on:
            gc.enable()


async def _nothing(hub: Any) -> None:
    return None


def test_start_up_garbage_is_collected_before_the_freeze_and_unfrozen_at_stop(
        tmp_path: Path, collector_off: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # The parts (workers, schedules, ...) are not started: what is checked is the
    # lifespan's own handling of the collector around them.
    monkeypatch.setattr(app_module, "_start_parts", _nothing)
    monkeypatch.setattr(app_module, "_close_parts", _nothing)
    app = create_app(load_settings({"WEBHUB_HOME": str(tmp_path / "home"),
                                    "WEBJOB_JOBS_DIR": str(tmp_path / "jobs"),
                                    "WEBHUB_SECRET": TEST_SECRET}))
    assert gc.get_freeze_count() == 0
    leftover = Leftover()
    gone = weakref.ref(leftover)
    del leftover

    async def serve_and_stop() -> tuple[int, bool]:
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count(), gone() is None

    frozen, collected = asyncio.run(serve_and_stop())
    assert frozen > 0
    assert collected
    assert gc.get_freeze_count() == 0
