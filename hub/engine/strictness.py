"""What a job does that strict mode refuses, found without running it.

Under the warm engine a job runs in strict mode (an SES compartment). A job written
for sloppy mode that assigns to an undeclared name, uses ``with``, a legacy octal
literal or escape, or deletes a plain name would now fail; ``POST /save``,
``POST /check`` and ``/available`` warn of each, with its line, unless the header
says ``Isolation: fresh``. The walk is ``js/strict_check.js`` over acorn's tree, in
the hub's acorn context (``hub.engine.instrument.acorn_call``).

Answers are kept by the hash of the job's text: ``/available`` lists every job on
every call, and a job's text seldom changes. A call may block for the parse; a
caller on the event loop runs it in a thread.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from hub.engine.instrument import acorn_call
from shared.errors import InternalError

__all__ = ["StrictFinding", "check", "strict_findings"]

log = logging.getLogger("webhub.strictness")

_KEPT = 4096  # answers remembered (every job of a large hub, usually)


@dataclass(frozen=True)
class StrictFinding:
    """``line`` and ``column`` are 1-based, in the job's own text (lines counted by
    ``\\n``, columns in characters, as the header's warnings are); ``kind`` is one of
    undeclared, built-in, arguments, with, octal, octal-escape, delete, more."""

    line: int
    column: int
    kind: str
    message: str

    def as_text(self) -> str:
        """The finding as one of a job's warnings in ``/available`` and a save's answer."""
        return f"Line {self.line}, column {self.column}: {self.message}"


def check(source: str) -> dict[str, Any]:
    """The walk's own answer: ``{"ok": True, "findings": [...], "more": n}``, or
    ``{"ok": False}`` when acorn cannot parse ``source``. InternalError if the walk
    itself fails (a bug here, never the job's fault)."""
    return acorn_call("__webjob_strict_check", source, "The strict-mode check failed")


def _findings(source: str) -> tuple[StrictFinding, ...]:
    try:
        answer = check(source)
    except InternalError as exc:
        # The check only advises: a failure of its own must not stop a save or /available.
        log.warning("strict-mode check skipped: %s", exc)
        return ()
    if not answer["ok"]:
        return ()
    found = [StrictFinding(int(f["line"]), int(f["column"]), str(f["kind"]), str(f["message"]))
             for f in answer["findings"]]
    more = int(answer["more"])
    if more and found:
        last = found[-1]
        found.append(StrictFinding(last.line, last.column, "more",
                                   f"... and {more} more places strict mode refuses"))
    return tuple(found)


_lock = threading.Lock()
_known: OrderedDict[bytes, tuple[StrictFinding, ...]] = OrderedDict()


def strict_findings(source: str) -> tuple[StrictFinding, ...]:
    """What strict mode refuses in ``source`` (a job's whole text, header included),
    in line order; none when it does not parse (the syntax check says why)."""
    key = hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest()
    with _lock:
        known = _known.get(key)
        if known is not None:
            _known.move_to_end(key)
            return known
    found = _findings(source)
    with _lock:
        _known[key] = found
        while len(_known) > _KEPT:
            _known.popitem(last=False)
    return found
