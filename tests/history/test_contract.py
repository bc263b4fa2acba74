"""One contract for every history store (``hub.history.base.HistoryStore``).

Each test runs on: the local store (a SQLite file), the ``sql`` store on SQLite,
PostgreSQL and MariaDB, and the ``mongo`` store. No MongoDB server can run on the
development machine, so the mongo store runs on :mod:`mongomock`; the store keeps
to operations mongomock reproduces faithfully (find with filters, sort, skip and
limit; ``replace_one`` upserts; ``delete_many``; simple ``aggregate`` pipelines),
so what passes here is what a server does.
"""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from hub.history import sqlstore
from hub.history.base import HistoryQuery, HistoryStore
from hub.history.columns import BOUNDS, SEARCH_RESULT_CHARS, bucket_of
from hub.history.record import MAX_LOG_LINES, Caller, RunRecord
from tests.history.conftest import NOW, RETENTION_DAYS, run

HOUR = 3600.0


def ids(records: list[RunRecord]) -> list[str]:
    return [r.job_id for r in records]


def found(store: HistoryStore, **query: object) -> list[str]:
    return ids(store.search(HistoryQuery(limit=500, **query)))  # type: ignore[arg-type]


def full_record() -> RunRecord:
    logs = tuple({"level": ("log", "warn", "error")[i % 3],
                  "message": f"line {i}: żółć 漢字 🙂 " + "x" * 80, "ms": i}
                 for i in range(MAX_LOG_LINES))
    return RunRecord(
        job_id="full-1", job_name="every_field", source="schedule",
        caller=Caller("schedule", "sch-9", "Nightly Łódź", "system"),
        started=NOW - 1234.567891, node="node-ü", ref="ref-ß", outcome="failed",
        job_version=7, method="POST",
        params={"name": "Zoë", "nested": {"list": [1, 2.5, None, True, "ä"]},
                "big": 2**70, "key.with.dots": "$x", "password": "***"},
        code="JOB-003", message="Runtime limit of 30000 ms reached — Übergröße",
        limit="runtime", http_status=500, result="résultat " + "ü" * 30000,
        result_truncated=True, result_size=200_000, result_type="text",
        result_format="text/plain; charset=utf-8", logs=logs, logs_truncated=True,
        calls=({"kind": "http", "url": "https://example.com/ä", "status": 200, "ms": 12},
               {"kind": "db", "sql": "SELECT 1", "rows": 1, "ms": 2}),
        ended=NOW - 1200.25, runtime_ms=34_317, cpu_ms=33_001, schedule_id="sch-9",
        schedule_name="Nightly Łódź")


def test_every_field_round_trips(store: HistoryStore) -> None:
    record = full_record()
    bare = RunRecord(job_id="bare-1", job_name="bare", source="adhoc",
                     caller=Caller("anonymous"), started=NOW, node="n", ref="r")
    store.put([record, bare])
    assert store.get("full-1") == record
    assert store.get("bare-1") == bare
    assert store.get("nope") is None
    assert store.search(HistoryQuery(job="every_field")) == [record]


def surrogate_record(text: str) -> RunRecord:
    """A run with ``text`` in every text field a request or a job can reach."""
    return RunRecord(
        job_id="lone-1", job_name=f"job{text}", source="http",
        caller=Caller("user", f"id{text}", f"ann{text}", f"staff{text}"), started=NOW - 60,
        node=f"node{text}", ref=f"ref{text}", outcome="failed", method=f"POST{text}",
        params={"who": text, f"key{text}": [text, {"deep": f"a{text}b"}]},
        code=f"JOB-001{text}", message=f"failed {text}", limit=f"cpu{text}",
        result=f'{{"echo":"{text}"}}', result_type=f"json{text}",
        result_format=f"application/json{text}",
        logs=({"level": f"log{text}", "message": f"said {text}", "ms": 1},),
        calls=({"kind": "http", "url": f"https://example.com/{text}", "ms": 2},),
        ended=NOW - 59, runtime_ms=10, cpu_ms=5, schedule_id=f"sch{text}",
        schedule_name=f"nightly{text}")


@pytest.mark.parametrize(("text", "kept"), [
    ("\ud800", "\ufffd"),                 # a lone high surrogate
    ("x\udfff\ud800y", "x\ufffd\ufffdy"),  # a low one, then a high one: two lone ones
    ("\ud83d\ude00", "\U0001f600"),       # a pair as two code units: the character
])
def test_a_lone_surrogate_is_stored_as_a_replacement_character(
        store: HistoryStore, text: str, kept: str) -> None:
    """Valid JSON and JavaScript, but no UTF-8 encoder takes it: every text of the
    record reaches the store, carried as UTF-8 can carry it, and searches find it."""
    store.put([surrogate_record(text), run("plain")])
    assert store.get("lone-1") == surrogate_record(kept)
    assert store.get("plain") == run("plain")
    assert found(store, search=f"said {text}") == ["lone-1"]
    assert found(store, search=f"said {kept}") == ["lone-1"]
    assert found(store, job=f"job{text}") == ["lone-1"]


def test_a_finished_run_replaces_its_running_record_and_counts_once(
        store: HistoryStore) -> None:
    started = run("r1", outcome="running", ended=None, runtime_ms=None, result=None)
    store.put([started])
    stats = store.job_stats(["report"])["report"]
    assert (stats.runs, stats.running, stats.last_outcome) == (0, True, "running")
    assert store.metrics(NOW).total == 0
    store.put([run("r1", outcome="failed", code="JOB-001", message="boom")])
    stats = store.job_stats(["report"])["report"]
    assert (stats.runs, stats.failures, stats.running) == (1, 1, False)
    metrics = store.metrics(NOW)
    assert (metrics.total, metrics.failures, metrics.successes) == (1, 1, 0)
    assert store.get("r1") == run("r1", outcome="failed", code="JOB-001", message="boom")
    assert ids(store.search(HistoryQuery())) == ["r1"]


def test_a_replayed_batch_changes_nothing(store: HistoryStore) -> None:
    batch = [run("a", outcome="running", runtime_ms=None, ended=None),
             run("b", started=NOW - 50, runtime_ms=40),
             run("a", started=NOW - 600, runtime_ms=70, outcome="failed")]
    store.put(batch)
    before = (store.metrics(NOW), store.job_stats(["report"]), store.search(HistoryQuery()))
    store.put(batch)
    store.put(batch[:1])  # the start again, after the end: the end stays
    assert (store.metrics(NOW), store.job_stats(["report"]),
            store.search(HistoryQuery())) == before
    assert before[0].total == 2
    assert store.get("a") == batch[2]


def test_every_filter(store: HistoryStore) -> None:
    store.put([
        run("1", job_name="alpha", source="http", started=NOW - 10),
        run("2", job_name="beta", source="schedule", outcome="failed", started=NOW - 20,
            schedule_id="s1", caller=Caller("schedule", "s1", "nightly")),
        run("3", job_name="alpha", source="editor", outcome="running", started=NOW - 30,
            caller=Caller("owner", "o", "Bob")),
        run("4", job_name="alpha", source="debug", outcome="interrupted", started=NOW - 40,
            caller=Caller("key", "k1")),
    ])
    assert found(store, job="alpha") == ["1", "3", "4"]
    assert found(store, job="Alpha") == []
    assert found(store, status="failed") == ["2"]
    assert found(store, status="running") == ["3"]
    assert found(store, source="editor") == ["3"]
    assert found(store, caller="Bob") == ["3"]
    assert found(store, caller="bob") == []
    assert found(store, since=NOW - 30) == ["1", "2", "3"]
    assert found(store, until=NOW - 20) == ["3", "4"]
    assert found(store, since=NOW - 30, until=NOW - 10) == ["2", "3"]
    assert found(store, schedule_id="s1") == ["2"]
    assert found(store, job="alpha", status="interrupted", source="debug") == ["4"]
    assert found(store) == ["1", "2", "3", "4"]


def test_search_finds_each_part_case_insensitively(store: HistoryStore) -> None:
    store.put([
        run("name", job_name="Payroll_Export"),
        run("params", params={"customer": "Größenwahn GmbH"}),
        run("result", result="Invoice QX-7781 sent"),
        run("console", logs=({"level": "log", "message": "Fetched 42 Widgets", "ms": 1},)),
        run("message", outcome="failed", code="JOB-001", message="Deadline Exceeded"),
        run("caller", caller=Caller("user", "u7", "Zoë Quartermaine")),
        run("none"),
    ])
    assert found(store, search="payroll_exp") == ["name"]
    assert found(store, search="GRÖSSENWAHN") == ["params"]
    assert found(store, search="qx-7781") == ["result"]
    assert found(store, search="42 widgets") == ["console"]
    assert found(store, search="deadline exceeded") == ["message"]
    assert found(store, search="ZOË QUART") == ["caller"]
    assert found(store, search="qx") == ["result"]          # shorter than a trigram
    assert found(store, search="nothing like it") == []
    assert found(store, search="widgets", job="other") == []


def test_search_reaches_the_start_of_a_big_result(store: HistoryStore) -> None:
    filler = "x" * (SEARCH_RESULT_CHARS - 20)
    store.put([run("big", result=filler + " early-marker " + "y" * 2000 + " late-marker")])
    assert found(store, search="early-marker") == ["big"]
    assert found(store, search="late-marker") == []  # past SEARCH_RESULT_CHARS


def test_search_takes_like_metacharacters_literally(store: HistoryStore) -> None:
    store.put([
        run("pct", result="50% off", started=NOW - 1),
        run("under", result="a_b", started=NOW - 2),
        run("plain", result="50 percent off; ab; axb", started=NOW - 3),
        run("bang", result="wow!% and [x] and \"q\" and \\n", started=NOW - 4),
    ])
    assert found(store, search="%") == ["pct", "bang"]
    assert found(store, search="50%") == ["pct"]
    assert found(store, search="_") == ["under"]
    assert found(store, search="a_b") == ["under"]
    assert found(store, search="!%") == ["bang"]
    assert found(store, search="[x]") == ["bang"]
    assert found(store, search='"q" and \\n') == ["bang"]
    assert found(store, search=".*") == []


def test_pages_are_newest_first_and_do_not_overlap(store: HistoryStore) -> None:
    records = [run(f"p{i:02d}", started=NOW - (i // 2) * 60) for i in range(25)]
    random.Random(4).shuffle(records)
    store.put(records)
    pages = [ids(store.search(HistoryQuery(limit=10, offset=o))) for o in (0, 10, 20, 30)]
    assert [len(p) for p in pages] == [10, 10, 5, 0]
    everything = [i for page in pages for i in page]
    assert sorted(everything) == sorted(r.job_id for r in records)
    started = [store.get(i).started for i in everything]  # type: ignore[union-attr]
    assert started == sorted(started, reverse=True)
    assert ids(store.search(HistoryQuery(limit=3, offset=0, job="report"))) == everything[:3]


def test_job_stats(store: HistoryStore) -> None:
    runtimes = [10, 20, 40, 80, 160, 320, 640]
    store.put([run(f"a{i}", job_name="alpha", started=NOW - 1000 + i, runtime_ms=ms,
                   outcome="failed" if i in (1, 4) else "success")
               for i, ms in enumerate(runtimes)])
    store.put([run("a-last", job_name="alpha", started=NOW, outcome="interrupted",
                   runtime_ms=None, caller=Caller("key", "k9")),
               run("b1", job_name="beta", started=NOW - 5, outcome="running", runtime_ms=None,
                   ended=None),
               run("c1", job_name="gamma", started=NOW - 7, runtime_ms=5)])
    stats = store.job_stats(["alpha", "beta", "absent", "alpha"])
    assert set(stats) == {"alpha", "beta"}
    alpha = stats["alpha"]
    assert (alpha.runs, alpha.failures, alpha.running) == (8, 3, False)
    assert (alpha.last_started, alpha.last_outcome, alpha.last_runtime_ms) == (
        NOW, "interrupted", None)
    assert alpha.last_caller == "key"
    assert alpha.success_rate == round(5 / 8, 4)
    assert_in_bucket(alpha.p50_runtime_ms, nearest_rank(runtimes, 0.5))
    beta = stats["beta"]
    assert (beta.runs, beta.failures, beta.running, beta.p50_runtime_ms) == (0, 0, True, None)
    assert beta.last_caller == "ann"
    assert store.job_stats([]) == {}


def nearest_rank(values: list[int], fraction: float) -> int:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def assert_in_bucket(estimate: int | None, true: int) -> None:
    """Percentiles are estimated from histogram buckets: the estimate must lie in the
    bucket of the true value."""
    index = bucket_of(true)
    assert index is not None and estimate is not None
    low = 0 if index == 0 else BOUNDS[index - 1]
    high = BOUNDS[index] if index < len(BOUNDS) else math.inf
    assert low <= estimate <= high, (estimate, true, low, high)


def test_metrics(store: HistoryStore) -> None:
    rng = random.Random(7)
    records = []
    for i in range(120):
        hours_ago = i % 30                      # some runs older than the last 24 hours
        failed = i % 9 == 0
        records.append(run(f"m{i}", job_name=f"job{i % 4}", started=NOW - hours_ago * HOUR - 5,
                           outcome="failed" if failed else "success",
                           runtime_ms=rng.randint(1, 5000)))
    records.append(run("slow", started=NOW - 2 * HOUR, runtime_ms=900_000))
    records.append(run("going", outcome="running", started=NOW - 1, runtime_ms=None))
    store.put(records)
    metrics = store.metrics(NOW)
    done = [r for r in records if r.outcome != "running"]
    assert metrics.total == len(done) == 121
    assert metrics.failures == sum(r.outcome == "failed" for r in done)
    assert metrics.successes == metrics.total - metrics.failures
    expected_hours, expected_failures = [0] * 24, [0] * 24
    hour_runtimes: list[list[int]] = [[] for _ in range(24)]
    for r in done:
        ago = int(NOW // HOUR) - int(r.started // HOUR)
        if ago < 24:
            expected_hours[23 - ago] += 1
            expected_failures[23 - ago] += r.outcome == "failed"
            hour_runtimes[23 - ago].append(r.runtime_ms or 0)
    assert metrics.runs_per_hour == expected_hours
    assert metrics.failures_per_hour == expected_failures
    for got, runtimes_then in zip(metrics.p95_per_hour_ms, hour_runtimes, strict=True):
        if runtimes_then:
            assert_in_bucket(got, nearest_rank(runtimes_then, 0.95))
        else:
            assert got is None
    day_start = NOW - NOW % 86400
    assert metrics.failures_today == sum(r.outcome == "failed" and r.started >= day_start
                                         for r in done)
    assert 0 < metrics.failures_today < metrics.failures
    runtimes = [r.runtime_ms for r in done if r.runtime_ms is not None]
    assert metrics.runtime_max_ms == 900_000
    assert_in_bucket(metrics.runtime_p50_ms, nearest_rank(runtimes, 0.5))
    assert_in_bucket(metrics.runtime_p95_ms, nearest_rank(runtimes, 0.95))


def test_metrics_of_an_empty_store(store: HistoryStore) -> None:
    metrics = store.metrics(NOW)
    assert (metrics.total, metrics.failures, metrics.failures_today) == (0, 0, 0)
    assert (metrics.runtime_p50_ms, metrics.runtime_p95_ms, metrics.runtime_max_ms) == (
        None, None, None)
    assert metrics.runs_per_hour == metrics.failures_per_hour == [0] * 24
    assert metrics.p95_per_hour_ms == [None] * 24


def test_mark_interrupted_touches_only_its_node(store: HistoryStore) -> None:
    mine = run("mine", node="node-a", outcome="running", ended=None, runtime_ms=None)
    store.put([mine, run("theirs", node="node-b", outcome="running", ended=None,
                         runtime_ms=None),
               run("done", node="node-a")])
    assert store.mark_interrupted("node-a", NOW) == 1
    assert store.get("mine") == dataclasses.replace(
        mine, outcome="interrupted", code="SYS-500",
        message="the hub stopped before the run ended", ended=NOW)
    assert store.get("theirs").outcome == "running"  # type: ignore[union-attr]
    assert store.get("done") == run("done", node="node-a")
    assert store.mark_interrupted("node-a", NOW) == 0
    assert (store.metrics(NOW).total, store.metrics(NOW).failures) == (2, 1)
    assert found(store, search="hub stopped") == ["mine"]
    assert store.job_stats(["report"])["report"].running is True  # node-b's run


def test_prune_applies_retention(store: HistoryStore) -> None:
    limit = NOW - RETENTION_DAYS * 86400
    store.put([run("old1", started=limit - 10, outcome="failed", runtime_ms=99_000),
               run("old2", job_name="gone", started=limit - 86400),
               run("edge", started=limit + 1, runtime_ms=50),
               run("new", started=NOW - 5, runtime_ms=60)])
    assert store.prune(NOW) == 2
    assert store.get("old1") is None and store.get("old2") is None
    assert found(store) == ["new", "edge"]
    metrics = store.metrics(NOW)
    assert (metrics.total, metrics.failures) == (2, 0)
    assert metrics.runtime_p95_ms is not None and metrics.runtime_p95_ms <= 70
    assert set(store.job_stats(["report", "gone"])) == {"report"}
    assert store.job_stats(["report"])["report"].runs == 2
    assert store.prune(NOW) == 0


def test_stats_always_match_the_runs_kept(store: HistoryStore) -> None:
    """Random puts, replays, finishes, interruptions and prunes; the figures must
    then be what the remaining runs say (the SQL stores keep them in rollups)."""
    rng = random.Random(11)
    for step in range(12):
        batch = []
        for _ in range(8):
            job_id = f"x{rng.randrange(60)}"
            outcome = rng.choice(["running", "success", "failed"])
            batch.append(run(job_id, job_name=f"j{int(job_id[1:]) % 3}",
                             started=NOW - int(job_id[1:]) * 2 * 86400 - 7,
                             node=rng.choice(["node-a", "node-b"]), outcome=outcome,
                             runtime_ms=None if outcome == "running" else rng.randint(1, 900)))
        store.put(batch)
        if step % 4 == 3:
            store.mark_interrupted("node-b", NOW)
        if step == 8:
            store.prune(NOW)
    kept = store.search(HistoryQuery(limit=500))
    finished = [r for r in kept if r.outcome != "running"]
    metrics = store.metrics(NOW)
    assert metrics.total == len(finished)
    assert metrics.failures == sum(r.outcome in ("failed", "interrupted") for r in finished)
    stats = store.job_stats(["j0", "j1", "j2"])
    for name, figures in stats.items():
        mine = [r for r in finished if r.job_name == name]
        assert (figures.runs, figures.failures) == (
            len(mine), sum(r.outcome != "success" for r in mine)), name


@pytest.mark.parametrize("size", [0, 1])
def test_put_of_nothing_or_one(store: HistoryStore, size: int) -> None:
    store.put([run("one")][:size])
    assert len(store.search(HistoryQuery())) == size


def test_a_big_prune_goes_in_batches(store: HistoryStore,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQL stores delete a few runs per transaction (here 3), finding each batch's
    edge from the ``started`` values they read back (odd fractions must survive)."""
    monkeypatch.setattr(sqlstore, "PRUNE_BATCH", 3)
    limit = NOW - RETENTION_DAYS * 86400
    old = [run(f"o{i}", started=limit - i * 0.123456789 - 0.000001, runtime_ms=i + 1,
               outcome="failed" if i % 2 else "success") for i in range(10)]
    old.append(run("o-tie", started=old[4].started))
    store.put([*old, run("kept", started=limit + 0.000001)])
    assert store.prune(NOW) == 11
    assert found(store) == ["kept"]
    assert (store.metrics(NOW).total, store.metrics(NOW).failures) == (1, 0)


def test_a_missed_occurrence_is_listed_but_is_not_a_run(store: HistoryStore) -> None:
    """The scheduler records occurrences it skipped as ``missed``: they are found in
    history, but never counted as runs, failures or runtimes."""
    store.put([run("ran", job_name="nightly", runtime_ms=2000),
               run("skipped", job_name="nightly", outcome="missed", runtime_ms=None,
                   ended=None, message="the previous run was still going")])
    assert found(store, status="missed") == ["skipped"]
    assert found(store, search="still going") == ["skipped"]
    metrics = store.metrics(NOW)
    assert (metrics.total, metrics.failures, metrics.successes) == (1, 0, 1)
    stats = store.job_stats(["nightly"])["nightly"]
    assert (stats.runs, stats.failures) == (1, 0)
    store.prune(NOW + (RETENTION_DAYS + 1) * 86400)
    assert store.metrics(NOW).total == 0 and found(store) == []


def test_debug_runs_are_kept_but_never_counted(store: HistoryStore) -> None:
    """A debug session paused on a breakpoint is not a production runtime, and a stopped
    one not a failure: debug runs are found in history but left out of job stats (runs,
    failures, p50, last run) and metrics (totals, percentiles, hours)."""
    store.put([run("p1", job_name="report", started=NOW - 60, runtime_ms=100),
               run("p2", job_name="report", started=NOW - 50, runtime_ms=120),
               run("d-running", job_name="report", source="debug", outcome="running",
                   started=NOW - 30, runtime_ms=None, ended=None)])
    # The session ends later (a 30 s pause, then stopped); another one failed.
    store.put([run("d-running", job_name="report", source="debug", outcome="failed",
                   code="JOB-001", started=NOW - 30, runtime_ms=30_000),
               run("d-fail", job_name="report", source="debug", outcome="interrupted",
                   started=NOW - 10, runtime_ms=29_000),
               run("d-only", job_name="debugged", source="debug", runtime_ms=40_000)])
    assert sorted(found(store, source="debug")) == ["d-fail", "d-only", "d-running"]
    metrics = store.metrics(NOW)
    assert (metrics.total, metrics.failures, metrics.successes) == (2, 0, 2)
    assert metrics.runtime_max_ms == 120 and sum(metrics.runs_per_hour) == 2
    assert metrics.runtime_p95_ms is not None and metrics.runtime_p95_ms <= 120
    stats = store.job_stats(["report", "debugged"])
    report = stats["report"]
    assert (report.runs, report.failures, report.success_rate) == (2, 0, 1.0)
    assert (report.last_started, report.last_outcome, report.last_runtime_ms) == (
        NOW - 50, "success", 120)
    assert report.p50_runtime_ms is not None and report.p50_runtime_ms <= 120
    assert "debugged" not in stats  # only debug runs: no figures, no last-run badge


def test_pruning_debug_runs_leaves_the_figures_right(store: HistoryStore) -> None:
    limit = NOW - RETENTION_DAYS * 86400
    store.put([run("old-debug", source="debug", started=limit - 5, outcome="failed"),
               run("old", started=limit - 4, outcome="failed"),
               run("new-debug", source="debug", started=NOW - 5, outcome="failed"),
               run("new", started=NOW - 4)])
    assert store.prune(NOW) == 2
    metrics = store.metrics(NOW)
    assert (metrics.total, metrics.failures) == (1, 0)
    stats = store.job_stats(["report"])["report"]
    assert (stats.runs, stats.failures, stats.last_started) == (1, 0, NOW - 4)


def test_a_store_that_answers_is_reachable(store: HistoryStore) -> None:
    store.reachable()  # raises when it cannot be reached
