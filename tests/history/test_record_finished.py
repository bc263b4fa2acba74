"""``RunRecord.finished`` is ``dataclasses.replace`` (done without its field walk), and
an empty console or call list is written as the encoder wrote it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from hub.history.columns import flatten
from hub.history.record import Caller, RunRecord


def _record() -> RunRecord:
    return RunRecord(job_id="job_1", job_name="ping", source="http",
                     caller=Caller("system", "system", "system", "OWNER"), started=1.5e9,
                     node="n1", ref="r1", params={"who": "bench"})


def test_finished_is_replace() -> None:
    record = _record()
    changes: dict[str, Any] = {"outcome": "success", "ended": 1.5e9 + 1, "runtime_ms": 3,
                               "logs": (), "result": '{"pong":"bench"}', "http_status": 200}
    done = record.finished(**changes)
    assert done == dataclasses.replace(record, **changes)
    assert type(done) is RunRecord and record.outcome == "running"  # the original stays
    with pytest.raises(dataclasses.FrozenInstanceError):
        done.outcome = "failed"  # type: ignore[misc]


def test_finished_refuses_an_unknown_field() -> None:
    with pytest.raises(TypeError, match="no_such_field"):
        _record().finished(no_such_field=1)


def test_empty_and_full_lists_are_written_as_json_writes_them() -> None:
    empty = flatten(_record())
    assert (empty["logs"], empty["calls"]) == (json.dumps([]), json.dumps([]))
    line = {"level": "log", "message": "é", "ms": 1}
    full = flatten(_record().finished(logs=(line,), calls=({"op": "db.exec"},)))
    assert full["logs"] == json.dumps([line], ensure_ascii=False)
    assert full["calls"] == json.dumps([{"op": "db.exec"}], ensure_ascii=False)
