"""A run's console lines logged at its end are one batch: the hub's handler writes them
in one write, each line formatted and filtered as one logged alone would be."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
from collections.abc import Iterator

import pytest

from hub.logsetup import RunFields, one_write
from hub.secrets.logmask import LOG_MASK
from hub.services.job_console import JOB_LOG, ServerConsole
from shared.ndjson import LogLine
from tests.hub.test_server_log_lines import captured

FIELDS = RunFields("job_9", "batch", "r9", "user:bo")
LEVELS = ["log", "warn", "error", "info", "debug", "odd"]


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.handler: logging.Handler | None = None  # the hub's handler writing here

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


@pytest.fixture(params=["text", "json"])
def stream(request: pytest.FixtureRequest) -> Iterator[CountingStream]:
    out = CountingStream()
    with captured(request.param, stream=out):
        out.handler = JOB_LOG.handlers[-1]  # the one captured() added
        yield out


def _without_time(text: str) -> list[str]:
    """The lines with their time left out (a batch's lines share one)."""
    shown = []
    for line in text.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            record.pop("time")
            shown.append(json.dumps(record))
        else:
            shown.append(line.split(" ", 2)[2])
    return shown


def test_the_lines_at_a_runs_end_are_one_write_as_if_logged_one_by_one(
        stream: CountingStream) -> None:
    lines = [LogLine(LEVELS[i % len(LEVELS)], f"line {i} \u2028 %s %(x)s", i) for i in range(12)]
    one_by_one = ServerConsole(8, FIELDS)
    for line in lines:
        one_by_one.write(line)
    alone, writes = stream.getvalue(), stream.writes
    stream.seek(0)
    stream.truncate()
    stream.writes = 0
    batched = ServerConsole(8, FIELDS)
    batched.ended(lines)
    assert stream.writes == 1 and writes == 8
    text = stream.getvalue()
    # The same lines, and the note of what the cap left out after them.
    assert _without_time(text)[:-1] == _without_time(alone)
    assert "4 more console lines not logged (WEBJOB_LOG_LINES=8)" in text.splitlines()[-1]


def test_each_line_of_a_batch_has_its_level_and_passes_the_filters(
        stream: CountingStream) -> None:
    with LOG_MASK.hold(["s3cr3t-value"]):
        ServerConsole(10, FIELDS).ended([LogLine("error", "a s3cr3t-value", 0),
                                         LogLine("debug", "b s3cr3t-value", 1),
                                         LogLine("warn", "c\nd", 2)])
    text = stream.getvalue()
    assert "s3cr3t" not in text and text.count("***") == 2
    lines = text.splitlines()
    assert len(lines) == 3
    for line, level in zip(lines, ("ERROR", "DEBUG", "WARNING"), strict=True):
        assert f" {level} " in line or f'"level": "{level}"' in line
    assert "c\\nd" in lines[2] or "c\\\\nd" in lines[2]
    assert all("run=job_9" in line or '"run": "job_9"' in line for line in lines)


def test_a_batch_below_the_loggers_level_writes_nothing(stream: CountingStream) -> None:
    JOB_LOG.setLevel(logging.ERROR)
    ServerConsole(10, FIELDS).ended([LogLine("log", "quiet", 0), LogLine("warn", "w", 1)])
    assert stream.getvalue() == "" and stream.writes == 0


def test_a_live_line_after_a_batch_is_a_record_of_its_own(stream: CountingStream) -> None:
    console = ServerConsole(10, FIELDS)
    console.ended([LogLine("log", "first", 0)])
    console.write(LogLine("warn", "later", 1))
    assert stream.writes == 2
    assert "later" in stream.getvalue().splitlines()[1]


def test_other_threads_write_at_once_inside_a_batch(stream: CountingStream) -> None:
    with one_write():
        JOB_LOG.info("held")
        worker = threading.Thread(target=JOB_LOG.info, args=("from a thread",))
        worker.start()
        worker.join()
        assert "from a thread" in stream.getvalue() and "held" not in stream.getvalue()
        with one_write():  # nested: the outer block writes
            JOB_LOG.info("inner")
        assert "inner" not in stream.getvalue()
    assert stream.getvalue().splitlines()[1:] != []
    assert "held" in stream.getvalue() and "inner" in stream.getvalue()
    assert stream.writes == 2


def test_a_batch_the_stream_refuses_is_the_handlers_error(
        stream: CountingStream, monkeypatch: pytest.MonkeyPatch) -> None:
    handler = stream.handler
    assert handler is not None
    seen: list[logging.LogRecord | None] = []
    monkeypatch.setattr(handler, "handleError", seen.append)

    def refuse(text: str) -> int:
        raise OSError("disk full")

    monkeypatch.setattr(stream, "write", refuse)
    ServerConsole(10, FIELDS).ended([LogLine("log", "one", 0), LogLine("log", "two", 1)])
    assert len(seen) == 1 and seen[0] is not None and "two" in seen[0].getMessage()


def test_a_line_that_cannot_be_formatted_is_the_handlers_error(
        stream: CountingStream, monkeypatch: pytest.MonkeyPatch) -> None:
    handler = stream.handler
    assert handler is not None
    seen: list[logging.LogRecord | None] = []
    monkeypatch.setattr(handler, "handleError", seen.append)
    alone = logging.getLogger("webhub.test_log_batch")  # no other handler to refuse it
    monkeypatch.setattr(alone, "propagate", False)
    alone.addHandler(handler)
    try:
        with one_write():
            alone.error("%d", "not a number")
            alone.error("fine")
    finally:
        alone.removeHandler(handler)
    assert len(seen) == 1 and stream.getvalue().count("\n") == 1


def test_a_task_started_inside_a_batch_writes_at_once_after_it(stream: CountingStream) -> None:
    async def scenario() -> None:
        release = asyncio.Event()

        async def later() -> None:
            await release.wait()
            JOB_LOG.info("from a task")

        with one_write():
            task = asyncio.ensure_future(later())  # carries the block's context
            JOB_LOG.info("in the block")
        release.set()
        await task

    asyncio.run(scenario())
    assert stream.getvalue().count("\n") == 2 and "from a task" in stream.getvalue()
