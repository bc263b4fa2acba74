"""shared.errors: the failure class tree and its wire form."""

from __future__ import annotations

import re

import pytest

import console_app.client.errors  # noqa: F401  (its classes join the tree checked below)
import hub.schedule.cron  # noqa: F401
from shared import errors
from shared.errors import (
    JobError,
    LimitExceeded,
    RequestError,
    TooManyRequests,
    WebJobsError,
    error_class_for,
    error_from_wire,
)

# code -> (class name, HTTP status), as the module docstring's tree lays them out.
TREE = {
    "JOB-001": ("JobFailed", 500),
    "JOB-002": ("ModuleNotApproved", 500),
    "JOB-003": ("LimitExceeded", 500),
    "JOB-004": ("NoResult", 500),
    "JOB-005": ("NeighbourBroke", 500),
    "HUB-001": ("BadRequest", 400),
    "HUB-007": ("BadJobName", 400),
    "HUB-008": ("JobDoesNotParse", 400),
    "AUTH-SESSION-001": ("NotSignedIn", 401),
    "SYS-403": ("Forbidden", 403),
    "SYS-404": ("NotFound", 404),
    "SYS-413": ("BodyTooLarge", 413),
    "SYS-408": ("BodyStalled", 408),
    "SYS-431": ("HeadTooLarge", 431),
    "SYS-429": ("TooManyRequests", 429),
    "SYS-500": ("InternalError", 500),
    "SYS-503": ("StoreUnavailable", 503),
    "HUB-009": ("Conflict", 409),
    "HUB-010": ("JobChanged", 409),
}
CONCRETE = [getattr(errors, name) for name, _ in TREE.values()]


def test_docstring_tree_matches_table() -> None:
    doc = errors.__doc__ or ""
    listed = re.findall(r"(\w+)\s+([A-Z]+(?:-[A-Z]+)*-\d{3})\b", doc)
    assert sorted(listed) == sorted((name, code) for code, (name, _) in TREE.items())


@pytest.mark.parametrize(("code", "name", "status"), [(c, n, s) for c, (n, s) in TREE.items()])
def test_code_maps_to_class_and_status(code: str, name: str, status: int) -> None:
    cls = error_class_for(code)
    assert cls is getattr(errors, name)
    assert cls.code == code
    assert cls.http_status == status
    parent = JobError if code.startswith("JOB-") else RequestError if status < 500 else None
    assert issubclass(cls, parent or WebJobsError)


def test_no_two_concrete_classes_share_a_code() -> None:
    codes = [cls.code for cls in CONCRETE]
    assert len(codes) == len(set(codes))
    # ...and every WebJobsError subclass outside the intermediates is in the table.
    found: set[type[WebJobsError]] = set()
    todo = [WebJobsError]
    while todo:
        subs = todo.pop().__subclasses__()
        found.update(subs)
        todo.extend(subs)
    shared = {cls for cls in found if cls.__module__ == "shared.errors"}
    assert shared - {JobError, RequestError} == set(CONCRETE)
    # A hub-side refinement (e.g. the cron parser's error) travels as its parent: it
    # must not bring a code of its own. The console's own failures (no answer from a
    # hub) never travel at all: their codes are CONSOLE-… and unknown to the wire.
    for cls in found - shared:
        if cls.__module__.startswith("console_app."):
            assert cls.code.startswith("CONSOLE-"), cls
            assert error_class_for(cls.code) is WebJobsError, cls
            continue
        assert any(cls.code == base.code for base in cls.__mro__[1:]
                   if base.__module__ == "shared.errors"), cls


@pytest.mark.parametrize("cls", [JobError, RequestError, WebJobsError])
def test_intermediate_classes_are_not_registered(cls: type[WebJobsError]) -> None:
    assert error_class_for(cls.code) is not cls


@pytest.mark.parametrize("cls", CONCRETE)
def test_round_trip_keeps_class_message_ref_and_extras(cls: type[WebJobsError]) -> None:
    extras = {"limit": "memory", "line": 3, "column": 14, "retry_after": 30}
    err = cls("naïve — failed", ref="run_42", **extras)
    wire = err.to_wire()
    assert wire["success"] is False and wire["code"] == cls.code
    back = error_from_wire(wire)
    assert type(back) is cls
    assert (back.message, back.ref, str(back)) == ("naïve — failed", "run_42", "naïve — failed")
    assert back.extra == extras
    assert back.to_wire() == wire


def test_wire_omits_absent_ref_and_none_extras() -> None:
    wire = LimitExceeded("over", limit=None, line=None).to_wire()
    assert wire == {"success": False, "error": "over", "code": "JOB-003"}


def test_extra_attribute_access() -> None:
    err = TooManyRequests("slow down", retry_after=12)
    assert err.retry_after == 12
    assert err.limit is None and err.line is None and err.column is None
    with pytest.raises(AttributeError):
        _ = err.not_a_field


@pytest.mark.parametrize("code", ["NOPE-999", "job-001", "", "JOB-01"])
def test_unknown_code_gives_root_class_and_keeps_code(code: str) -> None:
    assert error_class_for(code) is WebJobsError
    err = error_from_wire({"error": "odd", "code": code})
    assert type(err) is WebJobsError and err.message == "odd"
    if code:
        assert err.code == code and err.to_wire()["code"] == code


@pytest.mark.parametrize(
    "obj",
    [{}, {"code": "JOB-003"}, {"error": "only a message"}, {"code": None}, {"code": 404},
     {"success": False, "unrelated": [1, 2]}],
)
def test_missing_or_odd_fields_never_raise(obj: dict[str, object]) -> None:
    err = error_from_wire(obj)
    assert isinstance(err, WebJobsError)
    assert isinstance(err.message, str) and err.ref is None
    assert err.to_wire()["success"] is False
