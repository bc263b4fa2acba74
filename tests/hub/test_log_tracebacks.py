"""A traceback in the hub's log shows what the text format shows, in the JSON format
too: secret values held by a run in flight as ``***``, lone surrogates as U+FFFD, and
the record one JSON object on one line whatever the exception's message holds."""

from __future__ import annotations

import json
import logging
from typing import Any

from hypothesis import given

from hub.logsetup import hub_handler
from hub.secrets.logmask import LOG_MASK
from tests.hub.test_server_log_lines import ANY_TEXT, captured

LOG = logging.getLogger("webhub.test_log_tracebacks")
SECRET = "pw_Trace-Secret-4f1a"


def _failed(message: str, log_format: str = "json") -> str:
    """What the hub's handler writes for a record logged with this exception."""
    with captured(log_format, LOG) as stream:
        try:
            raise ValueError(message)
        except ValueError:
            LOG.exception("the call failed")
    return stream.getvalue()


def _one_object(out: str) -> dict[str, Any]:
    assert out.endswith("\n") and out.count("\n") == 1, repr(out)
    record = json.loads(out)
    assert isinstance(record, dict)
    json.dumps(record, ensure_ascii=False).encode("utf-8")  # no lone surrogate in it
    return record


def test_a_held_secret_in_an_exception_is_masked_in_json() -> None:
    with LOG_MASK.hold([SECRET]):
        out = _failed(f"login refused: password={SECRET}")
    record = _one_object(out)
    assert SECRET not in out and "Trace-Secret" not in out
    assert record["exc_info"].endswith("ValueError: login refused: password=***")
    assert record["message"] == "the call failed"


def test_json_and_text_show_the_same_masked_traceback() -> None:
    with LOG_MASK.hold([SECRET]):
        json_trace = _one_object(_failed(f"key {SECRET}"))["exc_info"]
        text = _failed(f"key {SECRET}", "text")
    assert SECRET not in text and text.rstrip("\n").endswith(json_trace.splitlines()[-1])
    assert json_trace.splitlines()[-1] == "ValueError: key ***"


def test_a_lone_surrogate_and_newlines_in_an_exception_make_one_json_line() -> None:
    record = _one_object(_failed("bad \ud800 byte\nsecond line\r\n\x1b[31m"))
    assert "bad \ufffd byte\nsecond line" in record["exc_info"]


def test_a_traceback_another_handler_formatted_first_is_still_masked() -> None:
    with LOG_MASK.hold([SECRET]):
        try:
            raise RuntimeError(f"token {SECRET}")
        except RuntimeError as error:
            record = LOG.makeRecord(LOG.name, logging.ERROR, __file__, 1, "failed", (),
                                    (type(error), error, error.__traceback__))
        logging.Formatter().format(record)  # caches the raw traceback on the record
        assert record.exc_text is not None and SECRET in record.exc_text
        for log_format in ("json", "text"):
            with captured(log_format, LOG) as stream:
                LOG.handle(record)
            assert SECRET not in stream.getvalue() and "token ***" in stream.getvalue()


def test_stack_info_is_masked_and_cleaned_in_json() -> None:
    formatter = hub_handler("json", "node-a").formatter
    assert formatter is not None
    with LOG_MASK.hold([SECRET]):
        shown = formatter.formatStack(f"Stack (most recent call last):\n  {SECRET} \udfff")
    assert shown == "Stack (most recent call last):\n  *** \ufffd"


@given(text=ANY_TEXT)
def test_any_exception_message_is_one_masked_json_line(text: str) -> None:
    with LOG_MASK.hold([SECRET]):
        out = _failed(f"{text}{SECRET}{text}")
    record = _one_object(out)
    assert SECRET not in out and "***" in record["exc_info"]
