"""The recorder's group commit: a busy writer waits for more records and writes them
together, an idle one writes at once, and ``flush`` waits for every record, even one
the writer holds."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hub.history.base import HistoryQuery
from hub.history.local import open_local_history
from hub.history.record import RunRecord
from hub.history.recorder import Recorder
from hub.history.sqlstore import SqlHistoryStore
from tests.history.conftest import run
from tests.hub.test_faults import wait_until

MakeRecorder = Callable[[float], Recorder]


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


@pytest.fixture()
def make_recorder(counted: Counted, tmp_path: Path) -> Iterator[MakeRecorder]:
    """Recorders on the counted store, each closed at the end of the test."""
    made: list[Recorder] = []

    def make(gather_s: float) -> Recorder:
        made.append(Recorder(counted.store, tmp_path / "spool.jsonl", gather_s=gather_s))
        return made[-1]

    yield make
    for recorder in made:
        recorder.close()


def busy(recorder: Recorder) -> Recorder:
    """``recorder`` after writing one record, so that the next ones are gathered."""
    recorder.record(run("first"))
    assert recorder.flush()
    return recorder


def test_an_idle_writer_writes_a_record_at_once(counted: Counted,
                                                make_recorder: MakeRecorder) -> None:
    recorder = make_recorder(60)
    recorder.record(run("alone"))
    recorder.flush(timeout=5)  # a gathering writer would still be asleep
    assert stored_ids(counted) == {"alone"}


def test_a_busy_writer_writes_what_arrives_together_at_once(
        counted: Counted, make_recorder: MakeRecorder) -> None:
    recorder = busy(make_recorder(2))
    for i in range(5):
        recorder.record(run(f"r{i}"))
    assert recorder.flush()
    assert counted.writes == [1, 5]
    assert stored_ids(counted) == {"first"} | {f"r{i}" for i in range(5)}


def test_flush_waits_for_a_record_the_writer_is_holding(
        counted: Counted, make_recorder: MakeRecorder) -> None:
    recorder = busy(make_recorder(0.3))
    recorder.record(run("held"))
    # The writer takes the record at once and then waits: the queue is empty,
    # but the record is not written yet.
    wait_until(lambda: recorder.queued() == 0)
    assert counted.writes == [1]
    assert recorder.flush()
    assert stored_ids(counted) == {"first", "held"}


def test_close_writes_what_is_gathered(counted: Counted, make_recorder: MakeRecorder,
                                       tmp_path: Path) -> None:
    recorder = busy(make_recorder(0.3))
    recorder.record(run("last"))
    recorder.close()
    assert stored_ids(counted) == {"first", "last"}
    assert not (tmp_path / "spool.jsonl").exists()
