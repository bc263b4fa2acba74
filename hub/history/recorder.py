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
spool too: the answer never waits for the store. A spool left by an earlier start
is replayed as soon as the writer starts.

"The store is down" and "the store refuses this record" are told apart so that
one bad record never holds up the others: :class:`StoreUnavailable` means down;
any other failure of a batch makes the writer try its records one at a time, and
a record that fails alone while others of the batch are written is put aside in
``history-rejected.jsonl`` beside the spool (one log line naming the run and the
reason). When every record fails alone nothing tells the two apart, so they are
spooled and retried like an outage; the next run written beside them settles it.
A spool line that is not JSON, or not a record, is put aside the same way.
Spool and rejected lines are UTF-8 JSON with lone surrogates as U+FFFD, so
neither file can fail to be written, or read back, for what a run held.
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
from typing import Any

from hub.history.base import HistoryStore
from hub.history.record import RunRecord, record_from_json, record_to_json
from shared.errors import StoreUnavailable
from shared.text import clean_text

__all__ = ["REJECTED_FILE", "Recorder"]

log = logging.getLogger("webhub.history")
BATCH = 200
RETRY_S = 2.0
# Under load a run reaches history up to this much later, and the writer's CPU per
# small run drops by about a third (one commit and one rollup update for several runs).
GATHER_S = 0.025
# Beside the spool: what the store refused, one JSON object a line, for an operator.
REJECTED_FILE = "history-rejected.jsonl"


class Recorder:
    def __init__(self, store: HistoryStore, spool: Path, *, queue_max: int = 10_000,
                 retry_s: float = RETRY_S, gather_s: float = GATHER_S) -> None:
        self.store = store
        self.spool = spool
        self.rejected = spool.with_name(REJECTED_FILE)
        self.retry_s = retry_s
        self.gather_s = gather_s
        self._last_write = float("-inf")  # monotonic time of the writer's last batch
        self._queue: queue.Queue[RunRecord | None] = queue.Queue(queue_max)
        self._spool_lock = threading.Lock()
        self._idle = threading.Condition()  # notified whenever records are settled
        self.store_down = False
        # A spool left by an earlier start is replayed before anything else.
        self._recovering = spool.exists()
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
            settled = self._idle.wait_for(
                lambda: self._queue.unfinished_tasks == 0 and not self._recovering, timeout)
        return settled and not self.store_down and self.spooled() == 0

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (to the store, or else the spool) and stop; once."""
        if not self._thread.is_alive():
            return
        self._queue.put(None)
        self._thread.join(timeout)

    # -- the writer thread ---------------------------------------------------------

    def _write_loop(self) -> None:
        if self._recovering:
            try:
                self._settle([], taken=0)
            finally:
                with self._idle:
                    self._recovering = False
                    self._idle.notify_all()
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
                self._append_spool(self._write(_latest_per_run(batch)))
            elif batch:
                self._append_spool(batch)
        except OSError as exc:  # a full disk loses these records, never the writer
            log.error("%d runs could not be recorded: run history store unavailable and "
                      "spool not writable (%s)", len(batch), exc.strerror or exc)
        finally:
            with self._idle:
                for _ in range(taken):
                    self._queue.task_done()
                self._idle.notify_all()

    def _write(self, records: Sequence[RunRecord]) -> list[RunRecord]:
        """Write ``records``, putting aside any the store refuses; what comes back, in
        order, could not be written because the store is down."""
        if not records:
            return []
        try:
            self.store.put(records)
            return []
        except StoreUnavailable as exc:
            self._store_failed(exc)
            return list(records)
        except Exception as exc:  # a refused record, or a store failing in its own way
            return self._write_one_by_one(records, exc)

    def _write_one_by_one(self, records: Sequence[RunRecord],
                          batch_failure: Exception) -> list[RunRecord]:
        refused: list[tuple[RunRecord, Exception]] = []
        written = 0
        for index, record in enumerate(records):
            try:
                self.store.put([record])
                written += 1
            except StoreUnavailable as exc:
                self._store_failed(exc)
                return [r for r, _ in refused] + list(records[index:])
            except Exception as exc:
                refused.append((record, exc))
        if refused and not written:  # nothing tells a failing store from bad records
            self._store_failed(batch_failure)
            return list(records)
        for record, failure in refused:
            self._put_aside({"reason": _reason(failure), "record": record_to_json(record)},
                            record.job_id)
        return []

    def _store_failed(self, exc: Exception) -> None:
        if not self.store_down:
            log.warning("run history store unavailable (%s); spooling runs to %s",
                        _reason(exc), self.spool.name)
        self.store_down = True

    def _replay_spool(self) -> bool:
        """Write the spool to the store; True when it is empty afterwards."""
        with self._spool_lock:
            try:
                lines = self.spool.read_bytes().splitlines()
            except FileNotFoundError:
                self.store_down = False
                return True
            records = self._spooled_records(lines)
            left: list[RunRecord] = []
            for start in range(0, len(records), BATCH):
                left = self._write(records[start:start + BATCH])
                if left:
                    left += records[start + BATCH:]
                    break
            if left:
                if len(left) != len(lines):  # written or put aside: not replayed again
                    self._rewrite_spool(left)
                return False
            self.spool.unlink()
            log.info("%s%d spooled runs written", "run history store back; "
                     if self.store_down else "", len(records))
            self.store_down = False
            return True

    def _spooled_records(self, lines: list[bytes]) -> list[RunRecord]:
        """The spool's records; a line that is not one is put aside."""
        records: list[RunRecord] = []
        for line in lines:
            if not line.strip():
                continue
            try:
                records.append(record_from_json(json.loads(line)))
            except (ValueError, TypeError, RecursionError) as exc:
                text = line.decode("utf-8", errors="replace")
                self._put_aside({"reason": f"not a run record ({_reason(exc)})", "line": text},
                                _job_id_of(line))
        return records

    def _append_spool(self, records: Sequence[RunRecord]) -> None:
        if not records:
            return
        data = b"".join(_json_line(record_to_json(r)) for r in records)
        with self._spool_lock:
            _append(self.spool, data)

    def _rewrite_spool(self, records: Sequence[RunRecord]) -> None:
        """The spool holding just ``records`` (under the spool lock); replaced whole, so a
        crash leaves the old spool or the new one."""
        partial = self.spool.with_name(self.spool.name + ".partial")
        partial.unlink(missing_ok=True)
        _append(partial, b"".join(_json_line(record_to_json(r)) for r in records))
        os.replace(partial, self.spool)

    def _put_aside(self, entry: dict[str, Any], job_id: str | None) -> None:
        """A record (or spool line) the store cannot take, kept for an operator."""
        entry = {"rejectedAt": time.time(), **entry}
        try:
            _append(self.rejected, _json_line(entry))
        except OSError as exc:
            log.error("run %s refused by the run history store and not kept (%s): %s",
                      job_id or "(unknown)", exc.strerror or exc, entry["reason"])
            return
        log.warning("run %s put aside in %s, not in run history: %s", job_id or "(unknown)",
                    self.rejected.name, entry["reason"])


def _json_line(value: Any) -> bytes:
    """One JSON line in UTF-8; lone surrogates as U+FFFD, so it can always be written."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:
        return clean_text(text).encode() + b"\n"


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _reason(exc: BaseException) -> str:
    """What went wrong, on one line (the hub's errors carry a message of their own)."""
    text = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    return clean_text((str(text).splitlines() or [type(exc).__name__])[0][:300])


def _job_id_of(line: bytes) -> str | None:
    """The run id a damaged spool line names, if it names one."""
    with contextlib.suppress(ValueError, RecursionError):
        data = json.loads(line)
        if isinstance(data, dict) and isinstance(data.get("job_id"), str):
            return clean_text(data["job_id"])
    return None


def _latest_per_run(batch: list[RunRecord]) -> list[RunRecord]:
    """One record per run, the latest: a run that ended before its ``running`` record
    was written needs only one write."""
    latest: dict[str, RunRecord] = {}
    for record in batch:
        latest.pop(record.job_id, None)
        latest[record.job_id] = record
    return list(latest.values())
