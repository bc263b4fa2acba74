"""The cluster on PostgreSQL (issue 19's speed targets), each on a fresh database of
the shared server at 127.0.0.1:5432 (dropped afterwards):

1. **Statements per anonymous run**: real hubs with ``WEBHUB_DB=postgresql://…``,
   ``WEBJOB_STORE=db``, ``WEBJOB_HISTORY_STORE=sql`` and the public rate limit on,
   the node measured connected through :class:`bench.pg_counter.CountingProxy`. After
   a warm-up (the job cache warm), ``RUNS`` anonymous ``public_ping`` requests one
   after another, then an idle window as long: the statements per run are the
   difference over ``RUNS`` (heartbeats and other background work cancel out), split
   into the hub's own and the rest (transaction control, session and pool checks).
   Four setups: alone or with a second node alive (the run registry writes rows only
   while other nodes are), and with or without ``WEBHUB_REDIS_URL`` (without Redis the
   public rate limit counts in the database). Target: at most 2 in all.
2. **History search at 300,000 runs**: the tables made by the migrations
   (``hub.store.migrations.upgrade``: the ``pg_trgm`` index too), the runs of
   :mod:`bench.history_fill` copied in with ``COPY``, then ``ANALYZE`` (as autovacuum
   would soon); ``SqlHistoryStore.search`` for a rare term, median of ``SEARCHES``
   after a warm-up. Target: under 5 ms.
3. **A schedule claim round**: ``ScheduleStore.claim_many`` of ``CLAIM_BATCH`` due
   occurrences by one node (won), then the same by a second node's pool (lost), median
   of ``CLAIM_ROUNDS``. Target: under 2 ms each.

Run by ``run_bench.py`` (``--only cluster``, or with the rest unless ``--skip
cluster``), or alone:  .venv/bin/python bench/cluster_cases.py [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import secrets
import statistics
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import psycopg  # noqa: E402

from bench import history_fill, report, servers  # noqa: E402
from bench.cluster_report import (  # noqa: E402
    CLAIM_BATCH,
    CLAIM_ROUNDS,
    HISTORY_RUNS,
    RUNS,
    SEARCHES,
    markdown,
)
from bench.pg_counter import CountingProxy, Tally  # noqa: E402
from hub.history.base import HistoryQuery  # noqa: E402
from hub.history.columns import COLUMNS  # noqa: E402
from hub.history.sqlschema import RUNS as RUNS_TABLE  # noqa: E402
from hub.history.sqlstore import SqlHistoryStore  # noqa: E402
from hub.schedule.store import ScheduleStore  # noqa: E402
from hub.schedule.timing import occurrence_key  # noqa: E402
from hub.store.hubdb import open_hub_database  # noqa: E402
from hub.store.migrations import upgrade  # noqa: E402

PG_URL = "postgresql://postgres@127.0.0.1:%d/%s"
PG_PORT = 5432
REDIS_URL = "redis://127.0.0.1:6379/9"  # the bench's own Redis database (tests use 0, 11)
WARM_RUNS = 30
HISTORY_JOBS = 500
PING = "/api/webjobs/public_ping?who=bench"
JSON = {"Accept": "application/json"}
JOIN_TIMEOUT_S = 20.0
SETTLE_TIMEOUT_S = 30.0
IDLE_S = 3.0
SERVER_WAIT_S = 120.0


@dataclass(frozen=True)
class Setup:
    label: str
    nodes: int
    redis: bool


SETUPS = (Setup("alone", 1, False), Setup("alone, Redis", 1, True),
          Setup("second node alive", 2, False), Setup("second node alive, Redis", 2, True))


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A new empty database on the shared server (its URL), dropped with its sessions."""
    name = f"wjbench_{os.urandom(5).hex()}"
    _admin(f"CREATE DATABASE {name}")
    try:
        yield PG_URL % (PG_PORT, name)
    finally:
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _admin(sql: str) -> None:
    """One statement on the server's ``postgres`` database, waiting for the server a
    while if it is down (the test suite running beside the bench stops it at times)."""
    deadline = time.monotonic() + SERVER_WAIT_S
    while True:
        try:
            with psycopg.connect(PG_URL % (PG_PORT, "postgres"), autocommit=True,
                                 connect_timeout=10) as conn:
                conn.execute(sql.encode())
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)  # polling a server that is starting again, with a deadline


def _attempt(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One measurement's figures, or why it failed (the others are still made)."""
    try:
        return call()
    except Exception as err:  # reported with the figures, not raised
        return {"error": f"{type(err).__name__}: {err}"}


# -- 1. statements per anonymous run ---------------------------------------------------


def _node_spec(name: str, url: str, tmp: Path, env: dict[str, str]) -> servers.ServerSpec:
    jobs = tmp / "jobs"
    jobs.mkdir(exist_ok=True)
    (jobs / "public_ping.job.js").write_text('return { pong: String(params.who || "world") }\n')
    home = tmp / name
    home.mkdir()
    spec = servers.hub_spec(REPO_ROOT, servers.free_port(), jobs, home, env["token"])
    spec.name = name
    spec.env.update({"WEBHUB_DB": url, "WEBJOB_STORE": "db", "WEBJOB_HISTORY_STORE": "sql",
                     "WEBHUB_SECRET": env["secret"], "WEBHUB_NODE": name,
                     # On, but never reached: the run is counted as an operator's would be.
                     "WEBJOB_PUBLIC_RATE": "1000000"})
    spec.env.pop("WEBHUB_REDIS_URL", None)
    if env.get("redis"):
        spec.env["WEBHUB_REDIS_URL"] = env["redis"]
    return spec


class Node:
    """The node measured: its server, and how many runs it has been sent."""

    def __init__(self, spec: servers.ServerSpec, url: str) -> None:
        self.spec, self.url, self.pings = spec, url, 0

    def ping(self) -> None:
        self.pings += 1
        answer = servers.http_get(self.spec.base_url + PING, JSON, timeout_s=30)
        if answer.status != 200 or b'"pong"' not in answer.body:
            raise RuntimeError(f"{self.spec.name}: public_ping answered {answer.status}: "
                               f"{answer.body[:200]!r}")

    def settle(self) -> None:
        """Wait (read straight from the server, past the proxy) until every run sent is
        in the history as finished and none is left in the run registry."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        with psycopg.connect(self.url, autocommit=True) as conn:
            while time.monotonic() < deadline:
                row = conn.execute(SETTLED).fetchone()
                if row is not None and row[0] >= self.pings and row[1] == 0 and row[2] == 0:
                    return
                time.sleep(0.05)  # a bench polling another process's writer, with a deadline
        raise RuntimeError(f"the node's history did not reach {self.pings} finished runs")


SETTLED = ("SELECT (SELECT count(*) FROM webjob_runs), "
           "(SELECT count(*) FROM webjob_runs WHERE outcome = 'running'), "
           "(SELECT count(*) FROM webhub_running)")


def _import_jobs(spec: servers.ServerSpec) -> None:
    request = urllib.request.Request(
        spec.base_url + "/api/webjobs/store/import-files", data=b"{}", method="POST",
        headers={**spec.headers, "Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=60) as answer:
        if answer.status != 200:
            raise RuntimeError(f"import-files answered {answer.status}")


def _until_registry(proxy: CountingProxy, node: Node) -> None:
    """Runs until one writes a registry row: the node has seen the other one."""
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    while time.monotonic() < deadline:
        before = proxy.snapshot()
        node.ping()
        node.settle()
        added = proxy.snapshot().minus(before)
        if any("webhub_running" in text for text, n in added.texts.items() if n > 0):
            return
    raise RuntimeError("the node measured never wrote a registry row with a second node alive")


def _per_run(busy: Tally, busy_s: float, idle: Tally, idle_s: float) -> dict[str, Any]:
    """Statements per run: the busy window's less the background (the idle window's,
    scaled to the busy window's length)."""
    scale = busy_s / idle_s

    def net(mine: Counter[str], theirs: Counter[str]) -> dict[str, float]:
        return {k: round((mine[k] - theirs[k] * scale) / RUNS, 2) for k in set(mine) | set(theirs)}

    kinds, texts = net(busy.kinds, idle.kinds), net(busy.texts, idle.texts)
    top = sorted(((n, t) for t, n in texts.items() if n >= 0.02), reverse=True)[:10]
    hub = kinds.get("hub", 0.0)
    return {"total": round(sum(kinds.values()), 2), "hub": round(hub, 2),
            "rest": round(sum(kinds.values()) - hub, 2), "kinds": dict(sorted(kinds.items())),
            "background_per_s": round(sum(idle.kinds.values()) / idle_s, 2),
            "busy_s": round(busy_s, 2),
            "statements": [{"per_run": n, "sql": t[:160]} for n, t in top]}


def _measure_node(proxy: CountingProxy, node: Node) -> dict[str, Any]:
    for _ in range(WARM_RUNS):
        node.ping()
    node.settle()
    before, started = proxy.snapshot(), time.monotonic()
    time.sleep(IDLE_S)
    idle, idle_s = proxy.snapshot().minus(before), time.monotonic() - started
    before, started = proxy.snapshot(), time.monotonic()
    for _ in range(RUNS):
        node.ping()
    node.settle()
    busy, busy_s = proxy.snapshot().minus(before), time.monotonic() - started
    return _per_run(busy, busy_s, idle, idle_s)


def count_setup(setup: Setup, log_dir: Path) -> dict[str, Any]:
    env = {"token": secrets.token_urlsafe(24), "secret": secrets.token_urlsafe(32),
           "redis": REDIS_URL if setup.redis else ""}
    started: list[servers.RunningServer] = []
    with tempfile.TemporaryDirectory(prefix="webhub-bench-cluster-") as tmp, \
            fresh_database() as url:
        proxy = CountingProxy("127.0.0.1", PG_PORT)
        try:
            proxied = url.replace(f":{PG_PORT}/", f":{proxy.port}/")
            node = Node(_node_spec("bench-a", proxied, Path(tmp), env), url)
            started.append(servers.start(node.spec, log_dir))
            _import_jobs(node.spec)
            if setup.nodes > 1:
                started.append(servers.start(_node_spec("bench-b", url, Path(tmp), env),
                                             log_dir))
                _until_registry(proxy, node)
            figures = _measure_node(proxy, node)
        finally:
            for server in reversed(started):
                servers.stop(server)
            proxy.close()
    return {"setup": setup.label, **figures}


# -- 2. history search at 300k runs ------------------------------------------------------


def _copy_runs(url: str) -> None:
    with psycopg.connect(url) as conn, conn.cursor() as cursor:
        with cursor.copy(f"COPY {RUNS_TABLE} ({', '.join(COLUMNS)}) FROM STDIN".encode()) as copy:
            for row in history_fill._rows(HISTORY_RUNS, HISTORY_JOBS, {}):
                copy.write_row(row)
        conn.commit()
        conn.execute(f"ANALYZE {RUNS_TABLE}".encode())


def _median_ms(call: Callable[[], object], times: int) -> tuple[float, Any]:
    found = call()  # warm-up: caches, the first plan
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 3), found


def time_search() -> dict[str, Any]:
    with fresh_database() as url:
        db = open_hub_database(url)
        try:
            upgrade(db)
            started = time.perf_counter()
            _copy_runs(url)
            fill_s = round(time.perf_counter() - started, 1)
            store = SqlHistoryStore(db)
            terms = {}
            for term in (history_fill.RARE, history_fill.MEDIUM, "no-such-thing"):
                query = HistoryQuery(search=term)
                ms, found = _median_ms(functools.partial(store.search, query), SEARCHES)
                terms[term] = {"median_ms": ms, "found": len(found)}
            server_ms = _server_ms(store, HistoryQuery(search=history_fill.RARE))
        finally:
            db.close()
    return {"runs": HISTORY_RUNS, "fill_s": fill_s, "terms": terms, "server_ms": server_ms}


def _server_ms(store: SqlHistoryStore, query: HistoryQuery) -> float:
    """The server's own time for the search's statement (EXPLAIN ANALYZE, planned as
    the store plans it), median of 5: what is left is round trips and decoding."""
    sql, params = store.search_statement(query)
    samples = []
    for _ in range(5):
        with store.db.transaction() as tx:
            tx.read("SELECT set_config('plan_cache_mode', 'force_custom_plan', true)")
            plan = tx.read(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", store._bind(params))
        samples.append(float(plan[0][0][0]["Execution Time"]))
    return round(statistics.median(samples), 3)


# -- 3. a schedule claim round -----------------------------------------------------------


def time_claims() -> dict[str, Any]:
    with fresh_database() as url:
        first, second = open_hub_database(url), open_hub_database(url)
        try:
            upgrade(first)
            won_by, lost_by = ScheduleStore(first), ScheduleStore(second)
            base = time.time() - 3600
            rounds = iter(range(CLAIM_ROUNDS + 1))

            def batch() -> list[tuple[int, str]]:
                t = base + next(rounds) * 60
                return [(sid, occurrence_key(t)) for sid in range(1, CLAIM_BATCH + 1)]

            won_ms, lost_ms = [], []
            for index in range(CLAIM_ROUNDS + 1):  # the first one warms both pools
                items = batch()
                t0 = time.perf_counter()
                won = won_by.claim_many(items, "bench-a")
                t1 = time.perf_counter()
                lost = lost_by.claim_many(items, "bench-b")
                t2 = time.perf_counter()
                if len(won) != CLAIM_BATCH or lost:
                    raise RuntimeError(f"claims: won {len(won)}, the second node got {len(lost)}")
                if index:
                    won_ms.append((t1 - t0) * 1000)
                    lost_ms.append((t2 - t1) * 1000)
        finally:
            first.close()
            second.close()
        commit_ms = _commit_floor_ms(url)
    return {"batch": CLAIM_BATCH, "rounds": CLAIM_ROUNDS,
            "won_ms": round(statistics.median(won_ms), 3),
            "lost_ms": round(statistics.median(lost_ms), 3), "commit_ms": commit_ms}


def _commit_floor_ms(url: str) -> float:
    """A bare one-row INSERT committed on its own, median of CLAIM_ROUNDS: the flush to
    disk any won claim waits for (a lost one writes nothing), on a disk shared with the
    test suite."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(b"CREATE TABLE bench_commit_floor (n INTEGER)")
        samples = []
        for n in range(CLAIM_ROUNDS + 1):
            started = time.perf_counter()
            conn.execute(b"INSERT INTO bench_commit_floor VALUES (%s)", [n])
            samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples[1:]), 3)


# -- the whole part ----------------------------------------------------------------------


def measure(log_dir: Path) -> dict[str, Any]:
    results: dict[str, Any] = {"statements": []}
    for setup in SETUPS:
        print(f"  [cluster] statements per run: {setup.label}", flush=True)
        counted = _attempt(functools.partial(count_setup, setup, log_dir))
        results["statements"].append({"setup": setup.label, **counted})
    print(f"  [cluster] history search at {HISTORY_RUNS:,} runs", flush=True)
    results["search"] = _attempt(time_search)
    print("  [cluster] schedule claim rounds", flush=True)
    results["claims"] = _attempt(time_claims)
    failed = [part.get("error") for part in (*results["statements"], results["search"],
                                             results["claims"]) if "error" in part]
    if failed:  # the figures made are still shown; the part counts as failed
        results["error"] = "; ".join(str(e) for e in failed)
    return results


def run(out_dir: Path) -> int:
    print("\n[cluster] PostgreSQL: statements per run, history search, claim rounds",
          flush=True)
    return report.run_section(out_dir, "cluster", "Cluster on PostgreSQL",
                              lambda: measure(out_dir / "logs"), markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    return run(parser.parse_args(argv).out)


if __name__ == "__main__":
    sys.exit(main())
