"""The recorder's group commit: records that arrive together are written together,
and ``flush`` still waits for every one of them, even one the writer holds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from hub.history.base import HistoryQuery
from hub.history.local import open_local_history
from hub.history.record import RunRecord
from hub.history.recorder import Recorder
from hub.history.sqlstore import SqlHistoryStore
from tests.history.conftest import run


class CountedStore:
    """The real local store, counting the writes the recorder makes."""

    def __init__(self, store: SqlHistoryStore) -> None:
        self.store = store
        self.writes: list[int] = []

    def put(self, records: Sequence[RunRecord]) -> None:
        self.writes.append(len(records))
        self.store.put(records)

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[CountedStore]:
    real = open_local_history(tmp_path, max_runs=100, retention_days=90)
    try:
        yield CountedStore(real)
    finally:
        real.close()


def stored_ids(store: CountedStore) -> set[str]:
    return {r.job_id for r in store.store.search(HistoryQuery(limit=100))}


def test_records_arriving_within_the_window_are_one_write(store: CountedStore,
                                                          tmp_path: Path) -> None:
    recorder = Recorder(store, tmp_path / "spool.jsonl", gather_s=0.2)  # type: ignore[arg-type]
    try:
        for i in range(5):
            recorder.record(run(f"r{i}"))
        assert recorder.flush()
        assert store.writes == [5]
        assert stored_ids(store) == {f"r{i}" for i in range(5)}
    finally:
        recorder.close()


def test_flush_waits_for_a_record_the_writer_is_holding(store: CountedStore,
                                                        tmp_path: Path) -> None:
    recorder = Recorder(store, tmp_path / "spool.jsonl", gather_s=0.3)  # type: ignore[arg-type]
    try:
        recorder.record(run("held"))
        # The writer takes the record at once and then waits: the queue is empty,
        # but the record is not written yet.
        assert recorder.flush()
        assert stored_ids(store) == {"held"}
    finally:
        recorder.close()


def test_close_writes_what_is_gathered(store: CountedStore, tmp_path: Path) -> None:
    recorder = Recorder(store, tmp_path / "spool.jsonl", gather_s=0.3)  # type: ignore[arg-type]
    recorder.record(run("last"))
    recorder.close()
    assert stored_ids(store) == {"last"}
    assert not (tmp_path / "spool.jsonl").exists()
