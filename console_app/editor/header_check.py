"""Header problems with their line and column, for marking them as the owner types.

``shared.header.parse_header`` decides what a value means (it reports warnings but no
positions), so each ``Key: value`` line found here is run through it on its own: the
hub's own rules give the verdict, this module only says where."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from shared.header import Limits, parse_header

__all__ = ["KNOWN_KEYS", "HeaderProblem", "check_header", "declared_secrets"]

# The same header and key-line shapes as shared/header.py (its patterns are private).
_OPEN_RE = re.compile(r"\A\ufeff?\s*/\*")
_HEADER_RE = re.compile(r"\A\ufeff?\s*/\*(.*?)\*/", re.DOTALL)
_LINE_RE = re.compile(r"^\s*\*?\s*([A-Za-z][A-Za-z0-9 _-]*?)\s*:(?!//)\s*(.*?)\s*$")

# What the hub reads (lower case → as the docs write it); anything else lands in extra.
_KEY_LABELS = {"name": "Name", "description": "Description", "author": "Author",
               "version": "Version", "last updated": "Last Updated", "runtime": "Runtime",
               "memory": "Memory", "cpu": "CPU", "access": "Access", "mode": "Mode",
               "secrets": "Secrets", "isolation": "Isolation"}
KNOWN_KEYS = tuple(_KEY_LABELS)
# Several Secrets: lines add up, so only these keys are overridden when repeated.
_SINGLE_KEYS = frozenset(KNOWN_KEYS) - {"secrets"}
_LIMIT_FIELDS = {"runtime": ("runtime", "runtime_ms"), "memory": ("memory", "memory_mb"),
                 "cpu": ("cpu", "cpu_ms")}


@dataclass(frozen=True)
class HeaderProblem:
    """``line`` and ``column`` are 1-based; ``length`` characters are underlined."""

    line: int
    column: int
    message: str
    length: int = 1


@dataclass(frozen=True)
class _KeyLine:
    line: int
    key: str          # as written
    value: str
    key_column: int
    value_column: int


def _key_lines(source: str) -> list[_KeyLine]:
    match = _HEADER_RE.match(source)
    if not match:
        return []
    first_line = source.count("\n", 0, match.start(1)) + 1
    first_column = match.start(1) - (source.rfind("\n", 0, match.start(1)) + 1)
    found = []
    for i, text in enumerate(match.group(1).split("\n")):
        m = _LINE_RE.match(text.rstrip("\r"))
        if not m:
            continue
        offset = first_column if i == 0 else 0
        found.append(_KeyLine(first_line + i, m.group(1).strip(), m.group(2),
                              offset + m.start(1) + 1, offset + m.start(2) + 1))
    return found


def _unknown_key(key: str) -> str:
    message = f"Unknown header key '{key}'; the hub ignores it"
    close = difflib.get_close_matches(key.lower(), KNOWN_KEYS, n=1, cutoff=0.6)
    return f"{message} (did you mean '{_KEY_LABELS[close[0]]}'?)" if close else message


def _value_problems(kl: _KeyLine, maxima: Limits | None) -> list[HeaderProblem]:
    header = parse_header(f"/*\n{kl.key}: {kl.value}\n*/")
    length = max(1, len(kl.value))
    problems = [HeaderProblem(kl.line, kl.value_column, w, length) for w in header.warnings]
    if header.extra and kl.key.lower() not in KNOWN_KEYS:
        problems.append(HeaderProblem(kl.line, kl.key_column, _unknown_key(kl.key),
                                      len(kl.key)))
    limit = _LIMIT_FIELDS.get(kl.key.lower())
    if limit and maxima is not None and not header.warnings:
        declared, cap = getattr(header, limit[0]), getattr(maxima, limit[1])
        if declared is not None and declared > cap:
            problems.append(HeaderProblem(
                kl.line, kl.value_column,
                f"{kl.key}: {declared} is above the server maximum {cap}; it will be clamped",
                length))
    return problems


def check_header(source: str, maxima: Limits | None = None) -> list[HeaderProblem]:
    """Problems in ``source``'s header, in line order: unknown keys, unreadable
    values, keys given twice, and (with the server's ``maxima``) limits the hub
    will clamp. An empty list for a clean header or none at all."""
    opening = _OPEN_RE.match(source)
    if opening and not _HEADER_RE.match(source):
        line = source.count("\n", 0, opening.end()) + 1
        column = opening.end() - 1 - (source.rfind("\n", 0, opening.end()) + 1)
        return [HeaderProblem(line, column, "The header comment is never closed with */; "
                              "the hub will see no header at all", 2)]
    problems: list[HeaderProblem] = []
    seen: dict[str, int] = {}
    for kl in _key_lines(source):
        problems.extend(_value_problems(kl, maxima))
        lowered = kl.key.lower()
        if lowered in seen and lowered in _SINGLE_KEYS:
            problems.append(HeaderProblem(
                kl.line, kl.key_column,
                f"'{kl.key}' is also given on line {seen[lowered]}; the last one counts",
                len(kl.key)))
        seen[lowered] = kl.line
    return problems


def declared_secrets(source: str) -> list[str]:
    """The names on the header's ``Secrets:`` line, in order."""
    return list(parse_header(source).secrets)
