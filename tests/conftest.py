"""Suite-wide guards: warnings are errors (pyproject), and a test fails on any
WARNING-or-worse log record it did not expect (mark it with ``expected_warning``
or use ``caplog`` to take ownership)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


class _FailOnWarning(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "expected_warning: the test expects WARNING logs")


@pytest.fixture(autouse=True)
def fail_on_unexpected_warnings(request: pytest.FixtureRequest) -> Iterator[None]:
    handler = _FailOnWarning()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
    if request.node.get_closest_marker("expected_warning"):
        return
    if handler.records:
        lines = "\n".join(f"{r.levelname} {r.name}: {r.getMessage()}" for r in handler.records)
        pytest.fail(f"unexpected WARNING logs:\n{lines}")
