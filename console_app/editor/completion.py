"""Which completions and call tip fit the text before the caret. Pure functions over
the line's text, so the editor widget only has to show what they return."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from console_app.editor.catalog import GLOBALS, JS_KEYWORDS, MEMBERS, SIGNATURES

__all__ = ["Completion", "call_tip", "complete"]

_IDENT = r"[A-Za-z_$][\w$]*"
# `secrets.get("str` / `require('da`: the quote is open and the name is being typed.
_STRING_ARG_RE = re.compile(r"\b(secrets\.get|require)\(\s*([\"'`])([^\"'`\\]*)$")
_MEMBER_RE = re.compile(rf"(?<![\w$.])({_IDENT}(?:\.{_IDENT})*)\.({_IDENT})?$")
_WORD_RE = re.compile(rf"(?<![\w$.])({_IDENT})$")
_CALLEE_RE = re.compile(rf"({_IDENT}(?:\s*\.\s*{_IDENT})*)\s*$")


@dataclass(frozen=True)
class Completion:
    """``items`` to offer, replacing the ``prefix`` already typed; ``kind`` is
    ``"string"`` (a name inside quotes), ``"member"`` or ``"global"``."""

    prefix: str
    items: tuple[str, ...]
    kind: str


def _matching(names: Sequence[str], prefix: str) -> tuple[str, ...]:
    low = prefix.lower()
    return tuple(sorted({n for n in names if n.lower().startswith(low)}, key=str.lower))


def complete(before: str, *, secrets: Sequence[str] = (), modules: Sequence[str] = (),
             min_word: int = 1) -> Completion | None:
    """Completions for the line text ``before`` the caret, or ``None``.

    ``secrets`` are the names the header declares and ``modules`` the approved
    modules; ``min_word`` is how much of a bare global must be typed (a member list
    opens straight after the dot)."""
    string_arg = _STRING_ARG_RE.search(before)
    if string_arg:
        names = secrets if string_arg.group(1) == "secrets.get" else modules
        prefix = string_arg.group(3)
        items = _matching(names, prefix)
        return Completion(prefix, items, "string") if items else None
    member = _MEMBER_RE.search(before)
    if member:
        owner = re.sub(r"\s+", "", member.group(1))
        entries = MEMBERS.get(owner, ())
        prefix = member.group(2) or ""
        items = _matching([e.name for e in entries], prefix)
        return Completion(prefix, items, "member") if items else None
    word = _WORD_RE.search(before)
    if word and len(word.group(1)) >= min_word:
        prefix = word.group(1)
        items = _matching([e.name for e in GLOBALS] + list(JS_KEYWORDS), prefix)
        # An exact, complete word needs no list (it would pop up after every keyword).
        if items and items != (prefix,):
            return Completion(prefix, items, "global")
    return None


def _open_paren(before: str) -> int:
    """Index of the innermost "(" still open in ``before``, or -1."""
    depth = 0
    for i in range(len(before) - 1, -1, -1):
        ch = before[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                return i
            depth -= 1
    return -1


def call_tip(before: str) -> str | None:
    """The signature of the call the caret is inside of, if it is a known one."""
    paren = _open_paren(before)
    if paren < 0:
        return None
    callee = _CALLEE_RE.search(before[:paren])
    if not callee:
        return None
    return SIGNATURES.get(re.sub(r"\s+", "", callee.group(1)))
