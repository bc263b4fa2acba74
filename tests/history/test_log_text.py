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


FORGING = r'''
import logging
from hub.cli import configure_logging
configure_logging("info")
log = logging.getLogger("webhub.test")
log.info("GET %s -> HUB-007", "/x\x1b[2J\x1b[31mred\x00")
log.info("No run job_x\n2026-12-01 22:00:00,000 WARNING webhub.auth: FORGED")
log.info("a\u0085b\tc")
'''


def test_text_from_outside_cannot_forge_a_log_line_or_drive_a_terminal() -> None:
    done = subprocess.run([sys.executable, "-c", FORGING], cwd=REPO, capture_output=True,
                          timeout=60, check=True)
    lines = done.stderr.decode("utf-8").splitlines()
    assert len(lines) == 3, lines
    assert "\x1b" not in lines[0] and "\x00" not in lines[0]
    assert lines[0].endswith("GET /x\\x1b[2J\\x1b[31mred\\x00 -> HUB-007")
    assert lines[1].endswith("No run job_x\\n2026-12-01 22:00:00,000 WARNING webhub.auth: FORGED")
    assert lines[2].endswith("a\\x85b\tc")
