"""Outcomes and sources are one enum for both sides, and their values are the wire's."""

from __future__ import annotations

from shared.outcomes import OUTCOMES, SOURCES, Outcome, RunSource


def test_the_values_are_the_wire_strings_in_order() -> None:
    assert OUTCOMES == ("success", "failed", "running", "interrupted", "missed")
    assert SOURCES == ("http", "editor", "adhoc", "schedule", "debug")
    assert Outcome("failed") is Outcome.FAILED and Outcome.FAILED == "failed"
    assert RunSource.SCHEDULE == "schedule" and f"{RunSource.DEBUG}" == "debug"
