"""The job list model and its filter proxy, without views, on the real hub's /available."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt

from console_app.client import jobs as api
from console_app.client.connection import HubConnection
from console_app.client.jobs import JobInfo, JobList, RunningRun
from console_app.history.fmt import elapsed
from console_app.models.jobs import (
    BADGES_ROLE,
    COL_LAST_RUN,
    COL_NAME,
    COL_NOW,
    DETAILS_ROLE,
    JOB_ROLE,
    NAME_ROLE,
    RUNNING_ROLE,
    Badge,
    JobDetails,
    JobsFilterProxy,
    JobsModel,
    badges_of,
)
from shared.wire import decode
from shared.wire.jobs import AvailableJob
from shared.wire.schedules import Schedule


class Clock:
    def __init__(self) -> None:
        self.wall, self.mono = 1_800_000_000.0, 100.0

    def advance(self, seconds: float) -> None:
        self.wall += seconds
        self.mono += seconds


_STATS = {"runs": 0, "failures": 0, "successRate": None, "lastRun": None, "p50Runtime": None,
          "running": False}
_LAST_RUN = {"started": 0.0, "outcome": None, "runtime": None, "by": None}
_SCHEDULE = {"id": 1, "name": "nightly", "enabled": False, "cron": "0 3 * * *"}


def _job(name: str, **kw: Any) -> JobInfo:
    """A job of /available as the hub sends it, with ``kw`` over the defaults (a given
    ``stats``, ``lastRun`` or schedule over theirs), read through the wire shape."""
    stats = {**_STATS, **kw.pop("stats", {})}
    if stats["lastRun"] is not None:
        stats["lastRun"] = {**_LAST_RUN, **stats["lastRun"]}
    obj = {"name": name, "title": "", "description": None, "author": None, "version": None,
           "lastUpdated": None, "access": "user", "mode": "job", "secrets": [],
           "limits": {"runtimeMs": 10000, "memoryMb": 256, "cpuMs": 5000},
           "extended": False, "warnings": [], "store": "files", "modified": 0.0,
           "currentVersion": 1, "stats": stats, "scheduled": False,
           "schedules": [{**_SCHEDULE, **each} for each in kw.pop("schedules", [])], **kw}
    return JobInfo.from_wire(decode(AvailableJob, obj, strict=True))


@pytest.fixture(scope="module")
def listed(console_hub: object) -> JobList:
    conn = console_hub.owner()  # type: ignore[attr-defined]
    try:
        name = f"sched_{uuid.uuid4().hex[:6]}"
        api.save(conn, name, "return 1")
        made = conn.post("/api/webjobs/schedules", json={"name": "off", "jobName": name,
                                                           "cron": "0 3 * * *"})
        found = api.available(conn)
        conn.delete(f"/api/webjobs/schedules/{made['schedule']['id']}")
        api.delete(conn, name)
        return found
    finally:
        conn.close()


def _model(listed: JobList, clock: Clock | None = None) -> JobsModel:
    clock = clock or Clock()
    model = JobsModel(clock=lambda: clock.wall, mono=lambda: clock.mono)
    model.set_jobs(listed)
    return model


def _names(proxy: JobsFilterProxy) -> set[str]:
    return {proxy.index(r, 0).data(NAME_ROLE) for r in range(proxy.rowCount())}


def test_shipped_jobs_with_their_badges(listed: JobList, qtmodeltester: object) -> None:
    model = _model(listed)
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    assert listed.store == "files" and model.state.store == "files"
    row = model.row_of("public_deeplink")
    assert model.index(row, COL_NAME).data() == "public_deeplink"
    assert [b.text for b in model.index(row, 1).data(BADGES_ROLE)] == ["public", "page"]
    slow = model.index(model.row_of("public_slow"), 1).data(BADGES_ROLE)
    assert Badge("extended", "extended") in slow
    assert model.index(model.row_of("echo"), 1).data(BADGES_ROLE) == []
    off = next(j for j in listed.jobs if j.name.startswith("sched_"))
    assert badges_of(off) == [Badge("schedule off", "schedule-off")]


def test_badges_for_scheduled_and_key_jobs() -> None:
    on = _job("a", scheduled=True, schedules=[{"id": 1, "enabled": True}], access="key")
    assert [b.kind for b in badges_of(on)] == ["scheduled", "key"]


def test_details_row_and_ages(listed: JobList, qtmodeltester: object) -> None:
    clock = Clock()
    ran = _job("ran", stats={"runs": 2, "failures": 1, "lastRun": {
        "started": clock.wall - 30, "outcome": "failed", "runtime": 4, "by": "owner"}})
    model = _model(JobList([ran, _job("idle")], "files"), clock)
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    assert model.index(0, COL_LAST_RUN).data() == "failed · 4 ms · 30 s ago"
    assert model.index(1, COL_LAST_RUN).data() == "never run"
    clock.advance(90)
    assert model.index(0, COL_LAST_RUN).data() == "failed · 4 ms · 2 min ago"
    slow = _job("slow", stats={"runs": 1, "failures": 0, "lastRun": {
        "started": clock.wall - 5, "outcome": "success", "runtime": 1444, "by": "owner"}})
    assert _model(JobList([slow], "files"), clock).index(0, COL_LAST_RUN).data() == \
        "success · 1.4 s · 5 s ago"  # as History writes a duration
    details = model.index(0, 0, model.index(0, 0))
    assert details.data(DETAILS_ROLE) is True and "Loading source" in details.data()
    nightly = decode(Schedule, {"id": 3, "name": "nightly", "jobName": "ran", "cron": "0 2 * * *",
                                "cronText": "At 02:00 (UTC)", "timezone": "UTC", "params": "{}",
                                "enabled": True}, strict=True)
    model.set_details("ran", JobDetails("// line one\nreturn 1", [nightly]))
    text = details.data()
    assert "runtime 10000 ms" in text and "nightly: At 02:00 (UTC)" in text
    assert "// line one" in text and model.rowCount(details) == 0


def test_running_indicator_ticks_without_new_calls(qtbot: object) -> None:
    clock = Clock()
    model = _model(JobList([_job("slow"), _job("other")], "files"), clock)
    model.set_running([RunningRun("job_1", "slow", "schedule", 12000)])
    assert model.index(0, COL_NOW).data(RUNNING_ROLE) == "running · scheduled · 12 s"
    clock.advance(3)
    assert model.index(0, COL_NOW).data() == "running · scheduled · 15 s"
    with qtbot.waitSignal(model.dataChanged):  # type: ignore[attr-defined]
        model.tick()
    model.set_running([])
    assert model.index(0, COL_NOW).data() == "" and elapsed(7200) == "2 h"


@pytest.mark.parametrize(("flag", "inside", "outside"), [
    ("public", "public_ping", "echo"),
    ("page", "public_test-page", "public_ping"),
    ("extended", "public_slow", "public_ping"),
])
def test_each_filter(listed: JobList, qtmodeltester: object, flag: str, inside: str,
                     outside: str) -> None:
    proxy = JobsFilterProxy()
    proxy.setSourceModel(_model(listed))
    proxy.set_filter(flag, True)
    qtmodeltester.check(proxy)  # type: ignore[attr-defined]
    assert inside in _names(proxy) and outside not in _names(proxy)
    proxy.set_filter(flag, False)
    assert outside in _names(proxy)


def test_scheduled_and_failed_filters_and_search() -> None:
    clock = Clock()
    failed = _job("bad", stats={"lastRun": {"started": clock.wall, "outcome": "failed"}})
    sched = _job("cron_job", description="Nightly export", scheduled=True,
                 schedules=[{"id": 1, "enabled": True}])
    proxy = JobsFilterProxy()
    proxy.setSourceModel(_model(JobList([failed, sched, _job("plain")], "db"), clock))
    proxy.set_filter("failed", True)
    assert _names(proxy) == {"bad"}
    proxy.set_filter("failed", False)
    proxy.set_filter("scheduled", True)
    assert _names(proxy) == {"cron_job"}
    proxy.set_filter("scheduled", False)
    proxy.set_search("EXPORT")
    assert _names(proxy) == {"cron_job"}
    proxy.set_search("")
    assert len(_names(proxy)) == 3
    first = proxy.index(0, 0)
    assert proxy.rowCount(first) == 1 and proxy.index(0, 0, first).data(DETAILS_ROLE)
    with pytest.raises(ValueError):
        proxy.set_filter("nope", True)


def test_same_names_keep_rows_and_new_names_reset(qtbot: object) -> None:
    model = _model(JobList([_job("a")], "files"))
    with qtbot.waitSignal(model.dataChanged):  # type: ignore[attr-defined]
        model.set_jobs(JobList([_job("a", description="changed")], "files"))
    assert model.index(0, 2).data() == "changed"
    with qtbot.waitSignal(model.modelReset):  # type: ignore[attr-defined]
        model.set_jobs(JobList([_job("a"), _job("b")], "files"))
    assert model.index(1, 0).data(JOB_ROLE).name == "b"
    assert model.index(5, 0) == QModelIndex() and model.data(QModelIndex()) is None
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Name"


def test_jobs_client_round_trip(connection: HubConnection) -> None:
    name = f"client_{uuid.uuid4().hex[:6]}"
    saved = api.save(connection, name, "/*\nDescription: hi\n*/\nreturn 2")
    assert saved.name == name
    assert "return 2" in api.code(connection, name)
    assert api.schedules_of(connection, name) == []
    assert api.job_url(connection, name).endswith(f"/api/webjobs/{name}")
    api.delete(connection, name)
    assert name not in {j.name for j in api.available(connection).jobs}
