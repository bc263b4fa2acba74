"""The schedule store contract on every hub database, and the input checks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hub.schedule.cron import CronError
from hub.schedule.model import Schedule, ScheduleInput, check_schedule_input
from hub.schedule.store import CLAIM_TABLE, OpenRun, ScheduleStore
from shared.errors import BadJobName, BadRequest, NotFound
from tests.servers import HUB_BACKENDS, database_nodes

NOW = 1_795_000_200.0          # 2026-11-18, a multiple of 5 minutes
MakeStore = Callable[[], ScheduleStore]


@pytest.fixture(params=HUB_BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Each call is another node on the same database."""
    with database_nodes(request.param, tmp_path) as node:
        yield lambda: ScheduleStore(node(), clock=lambda: NOW)


@pytest.fixture
def store(make_store: MakeStore) -> ScheduleStore:
    return make_store()


def sample(**changes: Any) -> ScheduleInput:
    body: dict[str, Any] = {"name": "Nightly café", "cron": "0  2 * * *", "jobName": "report",
                            "params": {"to": "ü", "n": 1}, "enabled": True}
    return check_schedule_input({**body, **changes}, "Europe/London")


def test_create_get_list(store: ScheduleStore) -> None:
    made = store.create(sample(), by="ann")
    assert made.id > 0
    assert (made.name, made.cron, made.job_name) == ("Nightly café", "0 2 * * *", "report")
    assert made.params == '{"to":"ü","n":1}'
    assert made.enabled and made.timezone == "Europe/London"
    assert (made.catch_up, made.overlap, made.max_retries) == ("skip", "skip", 0)
    assert (made.last_run, made.last_status, made.retry_at, made.retry_attempt) == (
        None, None, None, 0)
    assert made.next_run is not None and made.next_run > NOW
    assert made.updated == NOW and made.updated_by == "ann"
    off = store.create(sample(name="off", enabled=False))
    assert store.get(made.id) == made
    assert [s.id for s in store.list_schedules()] == [made.id, off.id]
    assert [s.id for s in store.list_schedules(enabled_only=True)] == [made.id]
    assert store.get(9999) is None


def test_update_and_delete(store: ScheduleStore) -> None:
    made = store.create(sample())
    inp = check_schedule_input({"maxRetries": 3, "overlap": "allow"}, "UTC", existing=made)
    changed = store.update(made.id, inp)
    assert (changed.max_retries, changed.overlap, changed.cron) == (3, "allow", "0 2 * * *")
    assert changed.next_run == made.next_run   # same timing: NextRun kept
    store.record_fire(made.id, NOW - 60, "failed")
    store.set_retry(made.id, NOW + 30, 1)
    got = store.get(made.id)
    assert got is not None
    assert (got.last_run, got.next_run, got.last_status) == (NOW - 60, made.next_run,
                                                            "failed")
    assert (got.retry_at, got.retry_attempt) == (NOW + 30, 1)
    off = store.update(made.id, check_schedule_input({"enabled": False}, "UTC", existing=got))
    assert not off.enabled and (off.retry_at, off.retry_attempt) == (None, 0)
    with pytest.raises(NotFound):
        store.update(9999, inp)
    assert store.claim(made.id, "2026-11-29T10:00:00Z", "a")
    assert store.delete(made.id)
    assert not store.delete(made.id)
    assert store.get(made.id) is None
    assert store.db.read(f"SELECT COUNT(*) FROM {CLAIM_TABLE}")[0][0] == 0


def test_the_watermark_moves_by_compare_and_set(store: ScheduleStore) -> None:
    made = store.create(sample(cron="* * * * *"))
    other = store.create(sample(cron="* * * * *"))
    first = made.next_run
    assert first == NOW + 60
    # Moved only from where it is: a claim of a later occurrence leaves a gap behind.
    assert store.advance([(made.id, first + 60, first + 120)]) == 0
    assert store.advance([(made.id, first, first + 60), (other.id, first, first + 60)]) == 2
    assert store.move_watermark(made.id, first + 60, first + 600)
    assert not store.move_watermark(made.id, first + 60, first + 700)   # lost the race
    assert store.behind(first + 599) == [(other.id, first + 60)]
    got = store.get(made.id)
    assert got is not None and got.next_run == first + 600
    retimed = store.update(made.id, check_schedule_input({"cron": "*/5 * * * *"}, "UTC",
                                                         existing=got))
    assert retimed.next_run == NOW + 300   # the first occurrence from now, afresh
    store.db.write("UPDATE IQXNetWebJobSchedule SET NextRun = NULL WHERE ID = ?", (made.id,))
    assert store.advance([(made.id, NOW + 300, NOW + 600)]) == 1   # unset: taken as here


def test_runs_going_on_are_taken_over_once(make_store: MakeStore) -> None:
    a, b = make_store(), make_store()
    sid = a.create(sample()).id
    run = OpenRun(sid, "2026-11-29T10:00:00Z", "node-a", NOW, 0, "scheduled", "job_1")
    a.begin_runs([run, replace(run, occurrence="2026-11-29T10:01:00Z", job_id="job_2")])
    assert [r.job_id for r in b.open_runs({"node-a", "node-c"})] == ["job_1", "job_2"]
    assert b.open_runs({"node-b"}) == []
    assert b.take_over(run)
    assert not a.take_over(run)
    assert not a.end_run(sid, run.occurrence, "node-a")       # taken over meanwhile
    assert a.end_run(sid, "2026-11-29T10:01:00Z", "node-a")
    assert b.open_runs({"node-a"}) == []


def test_a_lease_is_held_until_it_expires(make_store: MakeStore) -> None:
    a, b = make_store(), make_store()
    sid = a.create(sample()).id
    assert a.take_lease(sid, "node-a", NOW + 30)
    assert not b.take_lease(sid, "node-b", NOW + 30)
    assert a.take_lease(sid, "node-a", NOW + 40)               # its own, again
    assert a.renew_lease(sid, "node-a", NOW + 60)
    b.clock = lambda: NOW + 61
    assert b.take_lease(sid, "node-b", NOW + 91)               # expired: taken
    assert not a.renew_lease(sid, "node-a", NOW + 90)
    a.release_lease(sid, "node-a")                             # not its own: stays
    assert b.lease_holder(sid) == "node-b"
    b.release_lease(sid, "node-b")
    assert b.lease_holder(sid) is None and a.take_lease(sid, "node-a", NOW + 30)
    # Several at once: the free and expired ones, not another node's live one.
    others = [a.create(sample(name=f"l{i}")).id for i in range(3)]
    assert b.take_lease(others[0], "node-b", NOW + 1000)
    assert b.take_lease(others[1], "node-b", NOW + 62)
    assert a.take_leases([*others, sid], "node-a", NOW + 30) == {others[2], sid}
    # b's clock is at NOW + 61: its own two, and a's, expired at NOW + 30.
    assert b.take_leases(others, "node-b", NOW + 99) == set(others)
    assert not a.renew_lease(others[2], "node-a", NOW + 90)
    assert a.take_leases([], "node-a", NOW) == set()
    # Skips are counted per window, across nodes.
    assert a.count_skip(sid, NOW + 10, 3600) == (NOW + 10, 1)
    assert b.count_skip(sid, NOW + 20, 3600) == (NOW + 10, 2)
    assert a.count_skip(sid, NOW + 3610, 3600) == (NOW + 3610, 1)   # a new window
    assert a.count_skip(9999, NOW, 3600) is None                     # no lease row


def test_claims_are_unique_per_occurrence(make_store: MakeStore) -> None:
    a, b = make_store(), make_store()
    sid = a.create(sample()).id
    assert a.claim(sid, "2026-11-29T10:00:00Z", "node-a")
    assert not b.claim(sid, "2026-11-29T10:00:00Z", "node-b")
    assert not a.claim(sid, "2026-11-29T10:00:00Z", "node-a")
    assert b.claim(sid, "2026-11-29T10:00:00Z#retry1", "node-b")
    assert b.claim(sid + 1, "2026-11-29T10:00:00Z", "node-b")
    assert a.claimed_by(sid, "2026-11-29T10:00:00Z") == "node-a"


def test_racing_nodes_claim_once(make_store: MakeStore) -> None:
    nodes = [make_store() for _ in range(4)]
    sid = nodes[0].create(sample()).id
    for node in nodes:
        node.ensure_schema()
    for occurrence in range(5):
        key = f"2026-11-29T10:00:0{occurrence}Z"
        start = threading.Barrier(len(nodes))
        wins: list[bool] = []

        def race(store: ScheduleStore, name: str, key: str = key,
                 start: threading.Barrier = start, wins: list[bool] = wins) -> None:
            start.wait()
            wins.append(store.claim(sid, key, name))

        threads = [threading.Thread(target=race, args=(n, f"n{i}"))
                   for i, n in enumerate(nodes)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(wins) == [False, False, False, True]


def test_claim_many_in_one_go_or_one_by_one(make_store: MakeStore) -> None:
    a, b = make_store(), make_store()
    ids = [a.create(sample(name=f"s{i}")).id for i in range(3)]
    key = "2026-11-29T10:00:00Z"
    assert a.claim_many([(ids[0], key)], "a") == {(ids[0], key)}
    # One already taken: the others are still claimed, each on its own.
    assert b.claim_many([(i, key) for i in ids], "b") == {(ids[1], key), (ids[2], key)}
    assert a.claim_many([(i, key) for i in ids], "a") == set()
    fresh = [(i, "2026-11-29T10:00:01Z") for i in ids]
    assert a.claim_many(fresh, "a") == set(fresh)
    assert [a.claimed_by(i, key) for i in ids] == ["a", "b", "b"]
    found = a.get_many([*ids, 9999])
    assert sorted(found) == ids and found[ids[1]].name == "s1"
    assert a.get_many([]) == {}


def test_racing_batches_claim_each_once(make_store: MakeStore) -> None:
    nodes = [make_store() for _ in range(3)]
    ids = [nodes[0].create(sample(name=f"s{i}")).id for i in range(10)]
    for node in nodes:
        node.ensure_schema()
    items = [(i, "2026-11-29T10:00:00Z") for i in ids]
    start = threading.Barrier(len(nodes))
    won: list[set[tuple[int, str]]] = []

    def race(store: ScheduleStore, name: str) -> None:
        start.wait()
        won.append(store.claim_many(items, name))

    threads = [threading.Thread(target=race, args=(n, f"n{k}")) for k, n in enumerate(nodes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(item for got in won for item in got) == sorted(items)


def test_prune_claims(store: ScheduleStore) -> None:
    sid = store.create(sample()).id
    assert store.claim(sid, "old", "a")
    store.clock = lambda: NOW + 100
    assert store.claim(sid, "new", "a")
    assert store.prune_claims(NOW + 50) == 1
    assert store.claimed_by(sid, "old") is None and store.claimed_by(sid, "new") == "a"


def test_rows_from_other_tools_read_as_they_are(store: ScheduleStore) -> None:
    made = store.create(sample())
    store.db.write("UPDATE IQXNetWebJobSchedule SET Params = ?, NextRun = NULL WHERE ID = ?",
                   ("not json", made.id))
    got = store.get(made.id)
    assert got is not None and got.params == "not json" and got.next_run is None
    # A partial update keeps the stored params rather than refusing them.
    kept = check_schedule_input({"name": "renamed"}, "UTC", existing=got)
    assert kept.params == "not json"


# -- input checks (no database) ----------------------------------------------------------

BASE: dict[str, Any] = {"name": "n", "cron": "* * * * *", "jobName": "j"}


@pytest.mark.parametrize(("change", "field"), [
    ({"name": ""}, "name"), ({"name": "x" * 101}, "name"), ({"name": "a\nb"}, "name"),
    ({"name": 5}, "name"), ({"name": None}, "name"), ({"cron": None}, "cron"),
    ({"cron": 5}, "cron"), ({"jobName": None}, "jobName"),
    ({"params": [1]}, "params"), ({"params": "{oops"}, "params"), ({"params": "[1]"}, "params"),
    ({"enabled": "yes"}, "enabled"), ({"catchUp": "all"}, "catchUp"),
    ({"overlap": "queue"}, "overlap"), ({"maxRetries": 11}, "maxRetries"),
    ({"maxRetries": -1}, "maxRetries"), ({"maxRetries": True}, "maxRetries"),
    ({"maxRetries": 1.5}, "maxRetries"), ({"timezone": 3}, "timezone"),
    ({"colour": "red"}, "colour"),
])
def test_bad_input_names_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(BadRequest) as caught:
        check_schedule_input({**BASE, **change}, "UTC")
    assert caught.value.message.startswith(f"{field}:")


def test_bad_cron_zone_and_job_name() -> None:
    with pytest.raises(CronError):
        check_schedule_input({**BASE, "cron": "61 * * * *"}, "UTC")
    with pytest.raises(CronError):
        check_schedule_input({**BASE, "timezone": "Mars/Olympus"}, "UTC")
    with pytest.raises(BadJobName):
        check_schedule_input({**BASE, "jobName": "no spaces"}, "UTC")
    with pytest.raises(BadRequest):
        check_schedule_input([BASE], "UTC")


def test_defaults_and_forms() -> None:
    inp = check_schedule_input({**BASE, "params": '{ "a" : [1, 2] }', "job": "x"}, "Asia/Tokyo")
    assert (inp.enabled, inp.timezone, inp.catch_up, inp.overlap, inp.max_retries) == (
        False, "Asia/Tokyo", "skip", "skip", 0)
    assert inp.params == '{"a":[1,2]}' and inp.job_name == "j"
    assert check_schedule_input({**BASE, "job": "x", "jobName": None}, "UTC").job_name == "x"
    assert check_schedule_input(BASE, "UTC").params == "{}"
    # What a GET shows may come back in a PUT: read-only fields are ignored.
    existing = Schedule(1, "n", "* * * * *", "j", "{}", True, "UTC", "one", "allow", 2,
                        None, None, None, None, 0, NOW)
    merged = check_schedule_input({"id": 7, "nextRun": 1, "name": "m"}, "Asia/Tokyo",
                                  existing=existing)
    assert merged == ScheduleInput("m", "* * * * *", "j", "{}", True, "UTC", "one", "allow", 2)
    assert replace(existing, name="m").name == "m"
