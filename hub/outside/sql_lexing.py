"""A server's SQL text as tokens, read the way that server reads it.

What matters for :mod:`hub.outside.server_sql` is where code ends and a string or a
comment begins, exactly as the server sees it: a token the reader takes for a comment
but the server runs is a way past every check. So each dialect's rules are followed
to the letter —

* PostgreSQL: ``--`` to the end of the line (``\\n`` or ``\\r``); ``/* */`` comments
  nest; ``'…'`` strings take backslash escapes only when ``standard_conforming_strings``
  is off, ``E'…'`` always; dollar quotes ``$tag$…$tag$`` (a tag has no ``$``);
* MariaDB: ``#`` and ``--`` followed by a space or a control character (0x7F too) to
  the end of the line; ``/* */`` does not nest; an executable comment ``/*! … */`` or
  ``/*M! … */`` is code when the server's version reaches the one it names, else a
  comment — one in which a ``/* */`` may nest; ``'…'`` and ``"…"`` take backslash
  escapes unless ``NO_BACKSLASH_ESCAPES``; ``"…"`` is a name under ``ANSI_QUOTES``;
* other servers (SQL Server and the rest): ``--``, nesting ``/* */``, ``[names]``.

Spaces are the servers' ASCII ones (a no-break space is part of a name to both). What
cannot be known from the text is read every way it could be: quoting settings the hub
did not read from the server (:class:`Quoting`), and an executable comment as code,
as a comment, and as a comment holding a nested one. PostgreSQL's ``U&"…"`` and
``U&'…'`` (Unicode escapes, which could spell any name) come out as a token of their
own for the rules to refuse. The readings are linear in the text.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = ["NOTHING", "Dialect", "Quoting", "Token", "dialect_of", "readings"]

Dialect = Literal["postgresql", "mariadb", "other"]


def dialect_of(dbms_name: str) -> Dialect:
    """The dialect for an ODBC driver's ``SQL_DBMS_NAME``."""
    lowered = dbms_name.lower()
    if "postgres" in lowered:
        return "postgresql"
    if "maria" in lowered or "mysql" in lowered:
        return "mariadb"
    return "other"


@dataclass(frozen=True)
class Quoting:
    """What the server's settings say about quotes, read on the connection:
    PostgreSQL's ``standard_conforming_strings``, MariaDB's ``sql_mode``."""

    backslash_escapes: bool
    ansi_quotes: bool = False


class Token(NamedTuple):
    kind: str  # word (lower case), name (quoted identifier), string, uservar, uescape, other
    text: str


NOTHING = Token("other", "")


ExecReading = Literal["code", "comment", "nested"]


@dataclass(frozen=True)
class _Lexing:
    dialect: Dialect
    backslash: bool   # '…' (and MariaDB's "…") take backslash escapes
    ansi_quotes: bool  # MariaDB: "…" is a name
    executable: ExecReading  # MariaDB: how an executable comment is read


_SPACE = r"[ \t\n\r\f\v]+"
_WORD = r"[A-Za-z_\x80-\U0010FFFF][A-Za-z0-9_$\x80-\U0010FFFF]*"
_TAG = r"[A-Za-z_\x80-\U0010FFFF][A-Za-z0-9_\x80-\U0010FFFF]*"
_SINGLE = {False: r"'(?:[^']|'')*'?", True: r"'(?:[^'\\]|\\.|'')*'?"}
_DOUBLE = {False: r'"(?:[^"]|"")*"?', True: r'"(?:[^"\\]|\\.|"")*"?'}


@functools.cache
def _pattern(lexing: _Lexing) -> re.Pattern[str]:
    """One pattern whose every match is a token, a space, a comment or (nesting
    dialects) a comment's opening, for ``lexing``."""
    maria = lexing.dialect == "mariadb"
    if maria:
        skip = [_SPACE, r"--(?=[\x00-\x20\x7f]|\Z)[^\n]*", r"\#[^\n]*"]
        parts = [f"(?P<skip>{'|'.join(skip)})"]
        if lexing.executable == "code":  # the opener goes, and the closer: between is code
            parts += [r"(?P<exec_open>/\*M?!\d{0,6})", r"(?P<exec_close>\*/)"]
        elif lexing.executable == "nested":
            parts.append(r"(?P<nested>/\*M?!)")
        parts.append(r"(?P<skip2>/\*.*?(?:\*/|\Z))")
    else:
        parts = [rf"(?P<skip>{_SPACE}|--[^\n\r]*)", r"(?P<nested>/\*)"]
    if lexing.dialect == "postgresql":
        parts.append(r"(?P<uescape>[uU]&[\"'])")
        parts += [r"(?P<dollar>\$\$.*?(?:\$\$|\Z)"
                  rf"|\$(?P<tag>{_TAG})\$.*?(?:\$(?P=tag)\$|\Z))",
                  rf"(?P<estring>[eE]{_SINGLE[True]})"]
    parts.append(f"(?P<string>{_SINGLE[lexing.backslash]})")
    if maria and not lexing.ansi_quotes:
        parts.append(f"(?P<string2>{_DOUBLE[lexing.backslash]})")
    else:
        parts.append(f"(?P<name>{_DOUBLE[False]})")
    if maria:
        parts.append(r"(?P<backtick>`(?:[^`]|``)*`?)")
        # A user variable is one token, dots and all (@a.b is one variable).
        parts.append(r"(?P<uservar>@(?!@)(?:[A-Za-z0-9_$.\x80-\U0010FFFF]+"
                     rf"|{_SINGLE[lexing.backslash]}|{_DOUBLE[lexing.backslash]}|`(?:[^`]|``)*`?))")
    if lexing.dialect == "other":
        parts.append(r"(?P<bracket>\[[^\]]*\]?)")
    parts += [f"(?P<word>{_WORD})", r"(?P<other>.)"]
    return re.compile("|".join(parts), re.DOTALL)


def _inner(text: str, opener: int, closer: str) -> str:
    """A quoted token's text without its quotes (an unclosed one runs to the end)."""
    body = text[opener:]
    return body[:-len(closer)] if len(body) >= len(closer) and body.endswith(closer) else body


def _token(kind: str, text: str) -> Token:
    if kind == "word":
        return Token("word", text.lower())
    if kind == "dollar":
        delimiter = text[:text.index("$", 1) + 1]
        return Token("string", _inner(text, len(delimiter), delimiter))
    if kind == "estring":
        return Token("string", _inner(text, 2, "'"))
    if kind in ("string", "string2"):
        return Token("string", _inner(text, 1, text[0]))
    if kind in ("name", "backtick"):
        return Token("name", _inner(text, 1, text[0]))
    if kind == "bracket":
        return Token("name", _inner(text, 1, "]"))
    if kind == "uescape":
        return Token("uescape", text)
    if kind == "uservar":  # its name, unquoted, in lower case (MariaDB ignores case)
        name = text[1:]
        closer = {"'": "'", '"': '"', "`": "`"}.get(name[:1])
        return Token("uservar", (_inner(name, 1, closer) if closer else name).lower())
    return Token("other", text)


_COMMENT_MARKS = re.compile(r"/\*|\*/")


def _nested_comment_end(sql: str, pos: int, deepest: int | None = None) -> int:
    """Where a nesting ``/* … */`` comment opened just before ``pos`` ends; with
    ``deepest``, an opening past that depth is plain text (MariaDB nests one level in a
    skipped executable comment)."""
    depth = 1
    for mark in _COMMENT_MARKS.finditer(sql, pos):
        if mark.group() == "/*":
            depth += 1 if deepest is None or depth < deepest else 0
            continue
        depth -= 1
        if depth == 0:
            return mark.end()
    return len(sql)


def _tokens(sql: str, lexing: _Lexing) -> list[Token]:
    pattern, out, pos, end = _pattern(lexing), [], 0, len(sql)
    open_executable = 0  # MariaDB, read as code: executable comments not yet closed
    while pos < end:
        match = pattern.match(sql, pos)
        assert match is not None  # the last alternative takes any character
        kind, pos = match.lastgroup or "other", match.end()
        if kind == "nested":
            pos = _nested_comment_end(sql, pos, 2 if lexing.dialect == "mariadb" else None)
        elif kind == "exec_open":
            open_executable += 1
        elif kind == "exec_close" and open_executable:
            open_executable -= 1
        elif kind == "exec_close":  # "*" then, and "/" starts what follows
            out.append(Token("other", "*"))
            pos = match.start() + 1
        elif kind not in ("skip", "skip2"):
            out.append(_token(kind, match.group()))
    return out


def readings(sql: str, dialect: Dialect, quoting: Quoting | None) -> list[list[Token]]:
    """``sql`` as tokens, once for each way the server could read it."""
    if quoting is not None:
        quotings = [quoting]
    elif dialect == "mariadb":
        quotings = [Quoting(True), Quoting(False), Quoting(True, True)]
    else:
        quotings = [Quoting(False), Quoting(True)]
    if "\\" not in sql:  # no escape to read: the settings cannot differ
        quotings = list({Quoting(False, q.ansi_quotes) for q in quotings})
    if '"' not in sql:
        quotings = list({Quoting(q.backslash_escapes) for q in quotings})
    execs: list[ExecReading] = ["code"]
    if dialect == "mariadb" and re.search(r"/\*M?!", sql):
        execs += ["comment", "nested"]
    return [_tokens(sql, _Lexing(dialect, q.backslash_escapes, q.ansi_quotes, run))
            for q in quotings for run in execs]
