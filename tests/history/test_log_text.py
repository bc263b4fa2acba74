"""The hub's log never breaks on bad text: with the hub's own logging set-up (what
``webhub serve`` and the tests' hubs run), a lone surrogate in a message, in its
arguments or in a traceback is written as U+FFFD, on a stream that escapes what it
cannot encode (Python's stderr) and on one that refuses it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOGGING = r'''
import logging, sys
if sys.argv[1] == "strict":
    sys.stderr.reconfigure(errors="strict")
from hub.cli import configure_logging
configure_logging("info")
log = logging.getLogger("webhub.test")
log.info("asked by %s", "\ud800")
log.info("raw \udfff message")
log.info("a pair %s", "\ud83d\ude00")
try:
    raise ValueError("bad \ud800 value")
except ValueError:
    log.exception("failed")
'''


@pytest.mark.parametrize("errors", ["strict", "backslashreplace"])
def test_a_lone_surrogate_is_logged_as_a_replacement_character(errors: str) -> None:
    done = subprocess.run([sys.executable, "-c", LOGGING, errors], cwd=REPO,
                          capture_output=True, timeout=60, check=True)
    text = done.stderr.decode("utf-8")  # strictly
    assert "Logging error" not in text and "\\ud800" not in text and "\\udfff" not in text
    assert "asked by \ufffd" in text and "raw \ufffd message" in text
    assert "a pair \U0001f600" in text
    assert "ValueError: bad \ufffd value" in text
