"""Writing run records off the request path, without ever losing one.

A run hands its record to :meth:`Recorder.record`, which only puts it on a
bounded queue. One writer thread takes records in batches and writes them to
the store. When it wrote less than ``gather_s`` ago, it waits that long for more
records first (a group commit: a busy hub spreads a transaction's fixed cost over
several runs, and an idle hub's run is written at once).
When the store cannot be reached, the batch is appended to a spool file (JSON
lines, beside the hub's other files) and the writer retries every few seconds;
once the store answers, the spool is replayed in order and emptied.
While anything is spooled, new records go behind it, so a run's finished record
can never be overtaken by its older ``running`` one. A full queue spills to the
spool too: the answer never waits for the store.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from hub.history.base import HistoryStore
from hub.history.record import RunRecord, record_from_json, record_to_json

__all__ = ["Recorder"]

log = logging.getLogger("webhub.history")
BATCH = 200
RETRY_S = 2.0
# Under load a run reaches history up to this much later, and the writer's CPU per
# small run drops by about a third (one commit and one rollup update for several runs).
GATHER_S = 0.025


class Recorder:
    def __init__(self, store: HistoryStore, spool: Path, *, queue_max: int = 10_000,
                 retry_s: float = RETRY_S, gather_s: float = GATHER_S) -> None:
        self.store = store
        self.spool = spool
        self.retry_s = retry_s
        self.gather_s = gather_s
        self._last_write = float("-inf")  # monotonic time of the writer's last batch
        self._queue: queue.Queue[RunRecord | None] = queue.Queue(queue_max)
        self._spool_lock = threading.Lock()
        self._idle = threading.Condition()  # notified whenever records are settled
        self.store_down = False
        self._thread = threading.Thread(target=self._write_loop, name="history-writer",
                                        daemon=True)
        self._thread.start()

    # -- the request side ----------------------------------------------------------

    def record(self, record: RunRecord) -> None:
        """Queue a record; never blocks on the store."""
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            try:
                self._append_spool([record])
            except OSError as exc:  # a full disk loses this record, never the answer
                log.error("run %s could not be recorded: history queue full and spool "
                          "not writable (%s)", record.job_id, exc.strerror or exc)

    def queued(self) -> int:
        """Records waiting for the writer to take them."""
        return self._queue.qsize()

    def spooled(self) -> int:
        """Records waiting in the spool file."""
        with self._spool_lock:
            try:
                with self.spool.open("rb") as fh:
                    return sum(1 for _ in fh)
            except FileNotFoundError:
                return 0

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is in the store (True), or spooled or
        still waiting after ``timeout`` (False). For tests and shutdown."""
        with self._idle:
            # Counts every record from its put to its settling, so a record the writer
            # has taken but not yet written is waited for too.
            settled = self._idle.wait_for(lambda: self._queue.unfinished_tasks == 0, timeout)
        return settled and not self.store_down and self.spooled() == 0

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (to the store, or else the spool) and stop; once."""
        if not self._thread.is_alive():
            return
        self._queue.put(None)
        self._thread.join(timeout)

    # -- the writer thread ---------------------------------------------------------

    def _write_loop(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=self.retry_s if self.store_down else None)
            except queue.Empty:
                self._settle([], taken=0)  # nothing new: just retry the spool
                continue
            if first is not None and self._busy():
                time.sleep(self.gather_s)  # let the next runs join this write
            batch, stop = self._take_batch(first)
            self._settle(batch, taken=len(batch) + stop)
            self._last_write = time.monotonic()
            if stop:
                return

    def _busy(self) -> bool:
        """Wrote a moment ago, to a store that answers, and no full batch is waiting."""
        return (not self.store_down and self._queue.qsize() < BATCH - 1
                and time.monotonic() - self._last_write < self.gather_s)

    def _take_batch(self, first: RunRecord | None) -> tuple[list[RunRecord], bool]:
        batch: list[RunRecord] = []
        item = first
        while True:
            if item is None:
                return batch, True
            batch.append(item)
            if len(batch) >= BATCH:
                return batch, False
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return batch, False

    def _settle(self, batch: list[RunRecord], taken: int) -> None:
        try:
            if self._replay_spool():
                self._put(_latest_per_run(batch))
            elif batch:
                self._append_spool(batch)
        finally:
            with self._idle:
                for _ in range(taken):
                    self._queue.task_done()
                self._idle.notify_all()

    def _put(self, batch: Sequence[RunRecord]) -> None:
        if not batch:
            return
        try:
            self.store.put(batch)
        except Exception as exc:  # whatever the store raises, the records must survive
            self._store_failed(exc)
            self._append_spool(batch)

    def _store_failed(self, exc: Exception) -> None:
        if not self.store_down:
            log.warning("run history store unavailable (%s); spooling runs to %s",
                        getattr(exc, "message", None) or type(exc).__name__, self.spool.name)
        self.store_down = True

    def _replay_spool(self) -> bool:
        """Write the spool to the store; True when it is empty afterwards."""
        with self._spool_lock:
            try:
                lines = self.spool.read_bytes().splitlines()
            except FileNotFoundError:
                self.store_down = False
                return True
            records = [r for r in (_parse(line) for line in lines) if r is not None]
            try:
                for start in range(0, len(records), BATCH):
                    self.store.put(records[start:start + BATCH])
            except Exception as exc:
                self._store_failed(exc)
                return False
            self.spool.unlink()
            if self.store_down:
                log.info("run history store back; %d spooled runs written", len(records))
            self.store_down = False
            return True

    def _append_spool(self, records: Sequence[RunRecord]) -> None:
        data = b"".join(json.dumps(record_to_json(r), separators=(",", ":")).encode() + b"\n"
                        for r in records)
        with self._spool_lock:
            fd = os.open(self.spool, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)


def _parse(line: bytes) -> RunRecord | None:
    with contextlib.suppress(ValueError, TypeError, KeyError):
        return record_from_json(json.loads(line))
    log.info("a damaged line in the history spool was skipped")
    return None


def _latest_per_run(batch: list[RunRecord]) -> list[RunRecord]:
    """One record per run, the latest: a run that ended before its ``running`` record
    was written needs only one write."""
    latest: dict[str, RunRecord] = {}
    for record in batch:
        latest.pop(record.job_id, None)
        latest[record.job_id] = record
    return list(latest.values())
