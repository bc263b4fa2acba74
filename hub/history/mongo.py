"""Run history in MongoDB (``WEBJOB_HISTORY_STORE=mongo``): ``IQXWebHub.webjob_runs``.

One document per run, ``_id`` its ``job_id``, holding the flat fields of
:func:`hub.history.columns.flatten` (the big parts as JSON text, so any JSON —
keys with dots, integers beyond 64 bits — is kept as it came) plus
``started_at``, the start as a date for the TTL index that applies retention on
the server (``prune`` deletes the same runs at once, for a server whose TTL
monitor has not run yet).

What differs from the SQL stores: there are no rollup tables. Metrics and job
stats are grouped on the server (``$match`` on indexed fields, then ``$group``
by hour, runtime bucket and outcome), so Python only sees a few hundred small
groups; the percentiles come from the same buckets (:mod:`hub.history.columns`).
Search is an escaped ``$regex`` over the case-folded ``search_text``, read
newest first; ties in ``started`` go by ``_id``.

Only operations that mongomock reproduces faithfully are used (find with
filters, sort, skip and limit; ``replace_one`` upserts; ``delete_many``; simple
``aggregate`` pipelines), because that is what the contract suite runs on.

:mod:`pymongo` is imported by :func:`open_mongo_history` only, so a hub with
another store never loads it. A server that cannot be reached makes
each call :class:`~shared.errors.StoreUnavailable` within a few seconds.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

from hub.history.base import MAX_PAGE, HistoryQuery, JobStats, Metrics
from hub.history.columns import (
    RECORD_COLUMNS,
    UNCOUNTED,
    UNCOUNTED_SOURCES,
    Tally,
    flatten,
    hourly_figures,
    percentile,
    unflatten,
)
from hub.history.record import RunRecord
from shared.errors import BadRequest, InternalError, StoreUnavailable
from shared.text import clean_text

__all__ = ["DATABASE", "MongoHistoryStore", "open_mongo_history"]

DATABASE = "IQXWebHub"
COLLECTION = "webjob_runs"
TIMEOUT_MS = 3000
TTL_INDEX = "webjob_runs_ttl"
INTERRUPTED = ("SYS-500", "the hub stopped before the run ended")
_INDEXES = (
    ("webjob_runs_started", [("started", -1), ("_id", -1)]),
    ("webjob_runs_job", [("job_name", 1), ("started", -1)]),
    ("webjob_runs_outcome", [("outcome", 1), ("started", -1)]),
    ("webjob_runs_source", [("source", 1), ("started", -1)]),
    ("webjob_runs_caller", [("caller_name", 1), ("started", -1)]),
    ("webjob_runs_schedule", [("schedule_id", 1), ("started", -1)]),
    ("webjob_runs_node", [("node", 1), ("outcome", 1)]),
)
_FILTERS = (("job", "job_name"), ("status", "outcome"), ("source", "source"),
            ("caller", "caller_name"), ("schedule_id", "schedule_id"))
_NEWEST = [("started", -1), ("_id", -1)]
_PROJECTION = dict.fromkeys(RECORD_COLUMNS, 1)
_FINISHED = {"$nin": list(UNCOUNTED)}
# Debug runs are kept but never counted, nor a job's last run (see columns.counted).
_COUNTED_SOURCE = {"source": {"$nin": list(UNCOUNTED_SOURCES)}}


class MongoHistoryStore:
    """The ``mongo`` history store on one collection (pymongo's, or mongomock's).

    ``unreachable``/``failures``: the driver's exception classes that mean the server
    cannot be reached / anything else went wrong (pymongo's, from the open function).
    """

    store_name = "mongo"
    shared = True  # one collection for every node

    def __init__(self, collection: Any, *, retention_days: int = 90, client: Any = None,
                 unreachable: tuple[type[BaseException], ...] = (),
                 failures: tuple[type[BaseException], ...] = ()) -> None:
        self.collection = collection
        self.retention_days = retention_days
        self._client = client
        self._unreachable = unreachable
        self._failures = failures
        self._ready = False

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Driver failures as the hub's; the indexes made first, on first use (so a
        hub starts while the server is down, and its runs wait in the spool)."""
        try:
            if not self._ready:
                self._make_indexes()
                self._ready = True
            yield
        except self._unreachable as exc:
            raise StoreUnavailable(f"The run history database (MongoDB) cannot be reached: "
                                   f"{_first_line(exc)}") from None
        except self._failures as exc:
            raise InternalError(f"The run history database (MongoDB) failed: "
                                f"{_first_line(exc)}") from None

    def prepare(self) -> None:
        """Make the indexes now (every call makes them first anyway)."""
        with self._guard():
            pass

    def _make_indexes(self) -> None:
        # Each create_index is a no-op once its index exists; two nodes may race here.
        for name, keys in _INDEXES:
            self.collection.create_index(keys, name=name)
        ttl = self.retention_days * 86400
        current = self.collection.index_information().get(TTL_INDEX)
        if current is not None and current.get("expireAfterSeconds") != ttl:
            self.collection.drop_index(TTL_INDEX)  # retention changed since it was made
        self.collection.create_index("started_at", name=TTL_INDEX, expireAfterSeconds=ttl)

    # -- writing ----------------------------------------------------------------

    def put(self, records: Sequence[RunRecord]) -> None:
        if not records:
            return
        with self._guard():
            ids = list(dict.fromkeys(r.job_id for r in records))
            outcome = {d["_id"]: d["outcome"] for d in self.collection.find(
                {"_id": {"$in": ids}}, {"outcome": 1})}
            for record in records:
                if record.outcome == "running" and outcome.get(record.job_id, "running") \
                        != "running":
                    continue  # a replay of the start, after the end was stored
                doc = flatten(record) | {
                    "_id": record.job_id,
                    "started_at": dt.datetime.fromtimestamp(record.started, dt.UTC)}
                self.collection.replace_one({"_id": record.job_id}, doc, upsert=True)
                outcome[record.job_id] = record.outcome

    def mark_interrupted(self, node: str, now: float) -> int:
        with self._guard():
            running = [_record(d) for d in self.collection.find(
                {"node": node, "outcome": "running"}, _PROJECTION)]
        code, message = INTERRUPTED
        self.put([r.finished(outcome="interrupted", code=code, message=message, ended=now)
                  for r in running])
        return len(running)

    def prune(self, now: float) -> int:
        cutoff = now - self.retention_days * 86400
        with self._guard():
            return int(self.collection.delete_many({"started": {"$lt": cutoff}}).deleted_count)

    # -- reading ----------------------------------------------------------------

    def get(self, job_id: str) -> RunRecord | None:
        with self._guard():
            doc = self.collection.find_one({"_id": job_id}, _PROJECTION)
        return None if doc is None else _record(doc)

    def search(self, query: HistoryQuery) -> list[RunRecord]:
        match: dict[str, Any] = {}
        for name, key in _FILTERS:
            value = getattr(query, name)
            if value is not None:
                match[key] = clean_text(value) if isinstance(value, str) else value
        started: dict[str, float] = {}
        if query.since is not None:
            started["$gte"] = query.since
        if query.until is not None:
            started["$lt"] = query.until
        if started:
            match["started"] = started
        if query.search:
            match["search_text"] = {"$regex": re.escape(clean_text(query.search).casefold())}
        limit = max(0, min(query.limit, MAX_PAGE))
        if limit == 0:
            return []
        with self._guard():
            docs = list(self.collection.find(match, _PROJECTION).sort(_NEWEST)
                        .skip(max(0, query.offset)).limit(limit))
        return [_record(d) for d in docs]

    def job_stats(self, names: Sequence[str]) -> dict[str, JobStats]:
        wanted = list(dict.fromkeys(names))
        if not wanted:
            return {}
        with self._guard():
            last = {d["_id"]: d for d in self.collection.aggregate([
                {"$match": {"job_name": {"$in": wanted}, **_COUNTED_SOURCE}},
                {"$sort": {"job_name": 1, "started": -1, "_id": -1}},
                {"$group": {"_id": "$job_name", "started": {"$first": "$started"},
                            "outcome": {"$first": "$outcome"},
                            "runtime_ms": {"$first": "$runtime_ms"},
                            "caller_name": {"$first": "$caller_name"},
                            "caller_kind": {"$first": "$caller_kind"}}}])}
            tallies = self._tallies({"job_name": {"$in": wanted}}, "$job_name")
            running = {d["job_name"] for d in self.collection.find(
                {"outcome": "running", "job_name": {"$in": wanted}}, {"job_name": 1})}
        out: dict[str, JobStats] = {}
        for name, doc in last.items():
            tally = tallies.get(name, Tally())
            runtime = doc.get("runtime_ms")
            out[name] = JobStats(
                runs=tally.runs, failures=tally.failures, last_started=float(doc["started"]),
                last_outcome=doc["outcome"],
                last_runtime_ms=None if runtime is None else int(runtime),
                last_caller=doc.get("caller_name") or doc.get("caller_kind"),
                p50_runtime_ms=percentile(tally.buckets, 0.5), running=name in running)
        return out

    def _tallies(self, match: dict[str, Any], key: str) -> dict[Any, Tally]:
        """Finished runs matching ``match`` counted per ``key`` (a field path)."""
        out: dict[Any, Tally] = {}
        for group in self.collection.aggregate([
                {"$match": match | {"outcome": _FINISHED} | _COUNTED_SOURCE},
                {"$group": {"_id": {"key": key, "bucket": "$rt_bucket", "outcome": "$outcome"},
                            "runs": {"$sum": 1}, "rt_max": {"$max": "$runtime_ms"}}}]):
            ident = group["_id"]
            bucket = ident.get("bucket")
            top = group.get("rt_max")
            out.setdefault(ident["key"], Tally()).add(
                ident["outcome"], None if bucket is None else int(bucket), 1,
                count=int(group["runs"]), rt_top=None if top is None else int(top))
        return out

    def metrics(self, now: float) -> Metrics:
        with self._guard():
            hours = self._tallies({}, "$started_hour")
        total = Tally()
        for tally in hours.values():
            total.merge(tally)
        figures = hourly_figures({int(h): t for h, t in hours.items()}, now)
        return Metrics(
            total=total.runs, successes=total.runs - total.failures, failures=total.failures,
            runtime_p50_ms=percentile(total.buckets, 0.5, total.rt_max),
            runtime_p95_ms=percentile(total.buckets, 0.95, total.rt_max),
            runtime_max_ms=total.rt_max if total.rt_count else None,
            failures_today=figures.failures_today, runs_per_hour=figures.runs,
            failures_per_hour=figures.failures, p95_per_hour_ms=figures.p95_ms)

    def reachable(self) -> None:
        with self._guard():
            self.collection.find_one({}, {"_id": 1})

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _record(doc: dict[str, Any]) -> RunRecord:
    return unflatten({c: doc.get(c) for c in RECORD_COLUMNS})


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:300]


def open_mongo_history(url: str, *, retention_days: int = 90,
                       timeout_ms: int = TIMEOUT_MS) -> MongoHistoryStore:
    """The store on ``url`` (``mongodb://...``). Nothing is sent yet: each call, the
    first making the indexes, is StoreUnavailable within about ``timeout_ms`` while
    the server cannot be reached. A malformed URL is a BadRequest at once."""
    pymongo: Any = importlib.import_module("pymongo")
    errors: Any = importlib.import_module("pymongo.errors")
    try:
        client = pymongo.MongoClient(url, serverSelectionTimeoutMS=timeout_ms,
                                     connectTimeoutMS=timeout_ms, socketTimeoutMS=30_000)
    except (errors.ConfigurationError, errors.InvalidURI, ValueError) as exc:
        raise BadRequest(f"WEBJOB_MONGO_URL is not usable: {_first_line(exc)}") from None
    return MongoHistoryStore(client[DATABASE][COLLECTION], retention_days=retention_days,
                             client=client, unreachable=(errors.ConnectionFailure,),
                             failures=(errors.PyMongoError,))
