"""Messages between the hub and its worker processes: one JSON object per line.

Hub → worker: ``{"op": "run", "source", "spec", "memoryMb", "caps"}``,
``{"op": "reply", "id", "ok", "value"}`` (answer to a bridge call), ``{"op": "exit"}``.

Worker → hub: ``{"t": "ready", "pid"}`` (a fresh context is waiting),
``{"t": "log", "lines": [[level, message, ms], ...]}``,
``{"t": "call", "id", "op", "args"}`` (the job calls the host),
``{"t": "done", "meta", "len", "cpuMs"}`` followed by ``len`` raw bytes of body; with
``"ready": true`` when the worker needs nothing before its next run (no ready line
follows), ``{"t": "closed"}`` (no new runs until the next ready).
The body travels unescaped after its line, so a large result is not re-encoded.

Both directions are UTF-8. JavaScript and JSON strings may hold lone surrogates,
which UTF-8 cannot carry: they cross as U+FFFD (see ``shared.text``).

Lines are written and read with orjson (a run costs two to four lines each way, and
the standard ``json`` spent more of the hub's CPU on them than the rest of the run's
bookkeeping). Whatever orjson would handle differently from ``json`` goes the old
way, so what crosses is what ``json`` made of it: a lone surrogate, a dict key that is
not a string, an integer beyond 64 bits, a type ``json`` refuses (orjson would write a
datetime or a dataclass) when writing; when reading, any line orjson refuses (``NaN``,
a surrogate written as UTF-8), any with 19 digits in a row (orjson would read an
integer beyond 64 bits as a float) or more than 900 brackets (nesting ``json`` may
refuse with a RecursionError where orjson goes on). One thing
differs: a ``NaN`` or infinite float is written as ``null`` (``json`` wrote ``NaN``,
which V8's JSON cannot read); nothing sends one, since the door refuses them in
parameters and outside values already turn them into ``null``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

from shared.text import clean_json

MB = 1024 * 1024
# JSON can spell one character as six bytes (``\\u001f``): the console a done line
# may carry is measured in characters, so its line can be six times as long.
_JSON_WORST_BYTES_PER_CHAR = 6
# Room for everything on a line that is not the capped part (meta, spec, source).
_LINE_SLACK = 8 * MB
# ``\\udXXX`` as JSON.stringify writes a lone surrogate, not itself escaped (an
# even run of backslashes before it). Well-formed JSON.stringify writes a pair
# as its character, so every such escape it makes is a lone one.
_LONE_ESCAPE = re.compile(rb"(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_REPLACEMENT_UTF8 = "\ufffd".encode()
# An integer orjson would not read as ``json`` does (beyond 64 bits it gives a float,
# and -9223372036854775809 has 19 digits): 19 digits in a row, found anywhere (in a
# string too: such a line is rare, and is then just read the old way). Every digit
# made a 0 and the rest a space, it is a plain substring search, which scans far
# faster than a regular expression for it.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_NUMBER = b"0" * 19
# Nesting that ``json`` may refuse (a RecursionError near its 1,000 frames) and orjson
# reads (up to 1,024 levels): a line with more brackets than this is read by ``json``.
_FEW_BRACKETS = 900
# Written by ``json`` instead (see the module docstring); a dataclass and a datetime,
# which ``json`` refuses, are handed to ``_refuse`` rather than written.
_ORJSON_WRITE = (orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS
                 | orjson.OPT_PASSTHROUGH_DATETIME)


@dataclass(frozen=True)
class Caps:
    """What one run may send: its result body, one bridge payload (a call or its
    reply), and its console (characters, plus 32 a line)."""

    result_bytes: int = 50 * MB
    payload_bytes: int = 64 * MB
    console_chars: int = 10 * MB

    @property
    def line_limit(self) -> int:
        """The longest line either side reads (the body after a done line is not a line)."""
        return max(self.payload_bytes,
                   self.console_chars * _JSON_WORST_BYTES_PER_CHAR) + _LINE_SLACK

    def as_message(self) -> dict[str, int]:
        return {"result": self.result_bytes, "payload": self.payload_bytes,
                "console": self.console_chars}

    @classmethod
    def from_message(cls, value: Any) -> Caps:
        fields = value if isinstance(value, dict) else {}
        given = {name: fields.get(key) for name, key in
                 (("result_bytes", "result"), ("payload_bytes", "payload"),
                  ("console_chars", "console"))}
        return cls(**{k: v for k, v in given.items() if type(v) is int and v > 0})


SETTINGS = {"result": "WEBJOB_MAX_RESULT_MB", "payload": "WEBJOB_MAX_PAYLOAD_MB",
            "console": "WEBJOB_MAX_CONSOLE_MB"}
_WHAT = {"result": "The job's result", "payload": "A bridge payload (a db.exec or http() call "
         "or its answer)", "console": "The job's console output"}


def over_cap(limit: str, cap: int) -> str:
    """The message of a run that went over one of its ``Caps``."""
    return f"{_WHAT[limit]} is over the limit of {cap / MB:g} MB ({SETTINGS[limit]})"


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is left to json")


def encode(obj: dict[str, Any]) -> bytes:
    """One line: ``obj`` as compact JSON in UTF-8 and a newline."""
    try:
        return orjson.dumps(obj, default=_refuse, option=_ORJSON_WRITE)
    except TypeError:  # see the module docstring: written as json writes it
        pass
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # Rare: a lone surrogate somewhere. Only then is the value walked.
        cleaned = json.dumps(clean_json(obj), ensure_ascii=False, separators=(",", ":"))
        return cleaned.encode("utf-8") + b"\n"


def decode(line: bytes) -> Any:
    """A line from the other side. Text escaped as a lone surrogate (``\\ud800``,
    which only a lying peer sends: ours writes UTF-8) is read as U+FFFD."""
    if b"\\u" in line and _LONE_ESCAPE.search(line):
        return clean_json(json.loads(line))
    return loads(line)


def loads(data: str | bytes) -> Any:
    """``json.loads(data)``, with orjson where it reads ``data`` the same way. Text
    holding a lone surrogate is not UTF-8 once encoded, so orjson refuses it."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if (_LONG_NUMBER not in raw.translate(_DIGITS_AS_ZERO)
            and raw.count(b"[") + raw.count(b"{") <= _FEW_BRACKETS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:  # read (or refused) as json reads it
            pass
    return json.loads(data)


def clean_json_text(data: bytes) -> bytes:
    """JSON text from ``JSON.stringify`` with each lone-surrogate escape as U+FFFD.
    The common case, no backslash at all, is one ``memchr`` (far faster than a search
    for the three bytes of ``\\ud``, which follows only when there is one)."""
    if b"\\" not in data or (b"\\ud" not in data and b"\\uD" not in data):
        return data
    return _LONE_ESCAPE.sub(lambda m: m.group(1) + _REPLACEMENT_UTF8, data)
