"""The spool never blocks: a record the store refuses is put aside and the others are
written, a damaged spool line is put aside too, a spool found at start is replayed at
once, and every spooled line is UTF-8 whatever text a run held."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.history.base import HistoryQuery
from hub.history.local import open_local_history
from hub.history.mongo import open_mongo_history
from hub.history.record import RunRecord, record_to_json
from hub.history.recorder import REJECTED_FILE, Recorder
from hub.history.sqlstore import SqlHistoryStore
from tests.history.conftest import run
from tests.history.test_local import closed_port
from tests.hub.test_faults import wait_until

# SQLite's integers stop at 2**63: a record no store of SQLite can take, whatever its text.
REFUSED = {"job_version": 2**64}


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SqlHistoryStore]:
    made = open_local_history(tmp_path / "home", max_runs=1000, retention_days=90)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture()
def spool(tmp_path: Path) -> Path:
    return tmp_path / "home" / "history-spool.jsonl"


def stored(store: SqlHistoryStore) -> dict[str, RunRecord]:
    return {r.job_id: r for r in store.search(HistoryQuery(limit=500))}


def rejected(spool: Path) -> list[dict[str, Any]]:
    path = spool.with_name(REJECTED_FILE)
    if not path.exists():
        return []
    lines = path.read_bytes().decode("utf-8").splitlines()  # strictly UTF-8
    return [json.loads(line) for line in lines]


def spool_line(record: RunRecord) -> bytes:
    """A spool line as an older hub wrote it (ASCII JSON, so ``\\ud800`` escapes)."""
    return json.dumps(record_to_json(record)).encode() + b"\n"


def rejected_ids(spool: Path) -> list[str | None]:
    return [e.get("record", {}).get("job_id") for e in rejected(spool)]


@pytest.mark.expected_warning
def test_a_record_the_store_refuses_is_put_aside_and_the_rest_written(
        store: SqlHistoryStore, spool: Path, caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder(store, spool, gather_s=2)
    try:
        recorder.record(run("first"))
        assert recorder.flush()
        # The writer wrote a moment ago, so it gathers these three into one batch.
        for record in (run("before"), run("refused", **REFUSED), run("after")):
            recorder.record(record)
        assert recorder.flush()
    finally:
        recorder.close()
    assert set(stored(store)) == {"first", "before", "after"}
    assert rejected_ids(spool) == ["refused"]
    assert rejected(spool)[0]["record"]["job_version"] == 2**64
    assert not spool.exists()
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "run refused put aside in history-rejected.jsonl" in lines[0]
    assert "OverflowError" in lines[0]


@pytest.mark.expected_warning
def test_a_record_refused_alone_waits_in_the_spool_until_another_is_written(
        store: SqlHistoryStore, spool: Path) -> None:
    """Alone, a refusal looks the same as a store failing every write (a full disk):
    it is spooled, not put aside, until a record written beside it tells them apart."""
    recorder = Recorder(store, spool, retry_s=0.05)
    try:
        recorder.record(run("refused", **REFUSED))
        assert not recorder.flush()
        assert recorder.store_down and recorder.spooled() == 1 and rejected(spool) == []
        recorder.record(run("next"))
        wait_until(lambda: not recorder.store_down and recorder.spooled() == 0)
        assert recorder.flush()
    finally:
        recorder.close()
    assert set(stored(store)) == {"next"}
    assert rejected_ids(spool) == ["refused"]


@pytest.mark.expected_warning
def test_a_spool_found_at_start_is_replayed_at_once_damaged_lines_put_aside(
        store: SqlHistoryStore, spool: Path) -> None:
    spool.write_bytes(b"".join([
        spool_line(run("one")),
        b"not json at all\n",
        b"[1, 2]\n",                                    # JSON, but not a record
        b'{"job_id": "half"}\n',                        # fields missing
        json.dumps(record_to_json(run("typed")) | {"started": "soon"}).encode() + b"\n",
        b"[" * 100_000 + b"\n",                          # too deep for any decoder
        b"\xff\xfe not utf-8\n",
        spool_line(run("lone", params={"who": "\ud800"}, message="\udfff")),
        spool_line(run("refused", **REFUSED)),
        spool_line(run("two")),
    ]))
    recorder = Recorder(store, spool)  # no record arrives: the spool is replayed anyway
    try:
        assert recorder.flush()
    finally:
        recorder.close()
    runs = stored(store)
    assert set(runs) == {"one", "lone", "two"}
    assert runs["lone"].params == {"who": "\ufffd"} and runs["lone"].message == "\ufffd"
    aside = rejected(spool)
    assert len(aside) == 7 and all(e["reason"] and e["rejectedAt"] > 0 for e in aside)
    assert [e["record"]["job_id"] for e in aside if "record" in e] == ["refused"]
    assert {"half", "typed"} <= {json.loads(e["line"]).get("job_id") for e in aside
                                 if e.get("line", "").startswith("{")}
    assert not spool.exists()


@pytest.mark.expected_warning
def test_a_store_that_cannot_be_reached_keeps_every_record_in_order(
        spool: Path, store: SqlHistoryStore) -> None:
    down = open_mongo_history(f"mongodb://127.0.0.1:{closed_port()}/", timeout_ms=200)
    recorder = Recorder(down, spool, retry_s=60)
    try:
        recorder.record(run("a", params={"who": "\ud800"}))
        assert not recorder.flush()
        recorder.record(run("b"))
        assert not recorder.flush()
    finally:
        recorder.close()
        down.close()
    data = spool.read_bytes()
    text = data.decode("utf-8")  # strictly: a lone surrogate is U+FFFD, not an escape
    assert "\ufffd" in text and "\\ud800" not in text
    assert [json.loads(line)["job_id"] for line in text.splitlines()] == ["a", "b"]
    assert rejected(spool) == []
    again = Recorder(store, spool)  # the next start, its store reachable
    try:
        assert again.flush()
    finally:
        again.close()
    assert set(stored(store)) == {"a", "b"} and not spool.exists()
