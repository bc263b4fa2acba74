"""The recorder's group commit: records that arrive together are written together,
and ``flush`` still waits for every one of them, even one the writer holds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hub.history.base import HistoryQuery
from hub.history.local import open_local_history
from hub.history.record import RunRecord
from hub.history.recorder import Recorder
from hub.history.sqlstore import SqlHistoryStore
from tests.history.conftest import run


@dataclass
class Counted:
    """The real local store, and the size of every write the recorder made to it."""

    store: SqlHistoryStore
    writes: list[int] = field(default_factory=list)


@pytest.fixture()
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    store = open_local_history(tmp_path, max_runs=100, retention_days=90)
    found = Counted(store)
    put = store.put

    def counted_put(records: Sequence[RunRecord]) -> None:
        found.writes.append(len(records))
        put(records)

    monkeypatch.setattr(store, "put", counted_put)
    try:
        yield found
    finally:
        store.close()


def stored_ids(counted: Counted) -> set[str]:
    return {r.job_id for r in counted.store.search(HistoryQuery(limit=100))}


def test_records_arriving_within_the_window_are_one_write(counted: Counted,
                                                          tmp_path: Path) -> None:
    recorder = Recorder(counted.store, tmp_path / "spool.jsonl", gather_s=0.2)
    try:
        for i in range(5):
            recorder.record(run(f"r{i}"))
        assert recorder.flush()
        assert counted.writes == [5]
        assert stored_ids(counted) == {f"r{i}" for i in range(5)}
    finally:
        recorder.close()


def test_flush_waits_for_a_record_the_writer_is_holding(counted: Counted,
                                                        tmp_path: Path) -> None:
    recorder = Recorder(counted.store, tmp_path / "spool.jsonl", gather_s=0.3)
    try:
        recorder.record(run("held"))
        # The writer takes the record at once and then waits: the queue is empty,
        # but the record is not written yet.
        assert recorder.flush()
        assert stored_ids(counted) == {"held"}
    finally:
        recorder.close()


def test_close_writes_what_is_gathered(counted: Counted, tmp_path: Path) -> None:
    recorder = Recorder(counted.store, tmp_path / "spool.jsonl", gather_s=0.3)
    recorder.record(run("last"))
    recorder.close()
    assert stored_ids(counted) == {"last"}
    assert not (tmp_path / "spool.jsonl").exists()
