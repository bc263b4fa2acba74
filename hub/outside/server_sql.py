"""What a job's SQL may not do on PostgreSQL, MariaDB and other ODBC servers.

SQLite has an authorizer (:mod:`hub.outside.sqlite_guard`); a server has grants, and
grants are the last word on tables. But three things a job could do are out of reach
of grants, so the hub refuses them by reading the statement first:

* **files of the hub's host**: MariaDB's ``LOAD DATA|XML … LOCAL INFILE`` makes the
  *client* — the hub — send a file; the server's grants do not see it. Every ``LOAD``
  statement is refused (and the connector's own option is off as well, see
  :mod:`hub.outside.mariadb_client`), as are the server-file functions and
  ``INTO OUTFILE``, ``COPY`` and ``LOAD 'library'``;
* **the login itself**: any login may change its own password (``SET PASSWORD``,
  ``ALTER USER|ROLE CURRENT_USER``) or, on PostgreSQL, its stored settings, which locks
  every later ``db.exec`` out. Statements that change a login, a role, a grant, the
  session's identity (``SET ROLE``, ``SET SESSION AUTHORIZATION``) or the staff id the
  hub sets (``webhub.userstaffid``, ``@webhub_userstaffid``) are refused;
* **the doors around a reading**: SQL built at run time cannot be read, so what runs
  it is refused — PostgreSQL ``DO`` blocks, MariaDB ``PREPARE``/``EXECUTE``/
  ``EXECUTE IMMEDIATE`` and ``BEGIN NOT ATOMIC`` blocks, and creating functions,
  procedures and events (whose bodies would run later, unread).

The reading is exact about what is code: each dialect's strings (PostgreSQL's
``E'…'`` and dollar quotes, MariaDB's backslash escapes), comments (MariaDB's
executable ``/*! … */`` is code) and quoted names. Where a server setting changes
the lexing (``standard_conforming_strings``, ``NO_BACKSLASH_ESCAPES``,
``ANSI_QUOTES``) every variant is read and any refusal counts. Reading is linear in the
text. A refusal carries the SQL state ``42501``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = ["Dialect", "dialect_of", "refused_in_server_text"]

Dialect = Literal["postgresql", "mariadb", "other"]


def dialect_of(dbms_name: str) -> Dialect:
    """The dialect for an ODBC driver's ``SQL_DBMS_NAME``."""
    lowered = dbms_name.lower()
    if "postgres" in lowered:
        return "postgresql"
    if "maria" in lowered or "mysql" in lowered:
        return "mariadb"
    return "other"


# ---------------------------------------------------------------- reading the text


@dataclass(frozen=True)
class _Lexing:
    """How one server reads quotes: which quotes take backslash escapes, whether
    ``"`` quotes a name or a string, and the dialect's comments."""

    dialect: Dialect
    backslash_single: bool  # '…' (MariaDB by default; PostgreSQL with scs off)
    backslash_double: bool  # "…" as a MariaDB string
    double_is_name: bool


_WORD = r"[A-Za-z_\x80-\U0010FFFF][A-Za-z0-9_$\x80-\U0010FFFF]*"
_SINGLE = {False: r"'(?:[^']|'')*'?", True: r"'(?:[^'\\]|\\.|'')*'?"}
_DOUBLE = {False: r'"(?:[^"]|"")*"?', True: r'"(?:[^"\\]|\\.|"")*"?'}


class _Token(NamedTuple):
    kind: str  # word (lower case), name (quoted identifier), string, other
    text: str


_NOTHING = _Token("other", "")
_OPEN, _AT, _COMMA, _SEMICOLON = (_Token("other", c) for c in "(@,;")
_INTO, _SET = _Token("word", "into"), _Token("word", "set")


@functools.cache
def _pattern(lexing: _Lexing) -> re.Pattern[str]:
    """One pattern whose every match is a whole token, comment or space for
    ``lexing``: the reading is one pass of the regular-expression engine."""
    maria, postgres = lexing.dialect == "mariadb", lexing.dialect == "postgresql"
    skip = [r"\s+", r"/\*(?!M?!).*?(?:\*/|\Z)" if maria else r"/\*.*?(?:\*/|\Z)"]
    # MariaDB: "--" starts a comment only before a space or a control character, "#"
    # always; an executable comment's opener is dropped and what it holds read as code.
    skip += ([r"--(?=[\x00-\x20]|\Z)[^\n]*", r"\#[^\n]*", r"/\*M?!\d{0,6}"] if maria
             else [r"--[^\n]*"])
    parts = [f"(?P<skip>{'|'.join(skip)})"]
    if postgres:
        parts += [r"(?P<dollar>\$\$.*?(?:\$\$|\Z)"
                  rf"|\$(?P<tag>{_WORD})\$.*?(?:\$(?P=tag)\$|\Z))",
                  rf"(?P<estring>[eE]{_SINGLE[True]})"]  # E'…' takes backslash escapes
    parts.append(f"(?P<string>{_SINGLE[lexing.backslash_single]})")
    double = _DOUBLE[lexing.backslash_double and not lexing.double_is_name]
    parts.append(f"(?P<name>{double})" if lexing.double_is_name else f"(?P<string2>{double})")
    if maria:
        parts.append(r"(?P<backtick>`(?:[^`]|``)*`?)")
    if lexing.dialect == "other":
        parts.append(r"(?P<bracket>\[[^\]]*\]?)")
    parts += [f"(?P<word>{_WORD})", r"(?P<other>.)"]
    return re.compile("|".join(parts), re.DOTALL)


def _inner(text: str, opener: int, closer: str) -> str:
    """A quoted token's text without its quotes (an unclosed one runs to the end)."""
    body = text[opener:]
    return body[:-len(closer)] if len(body) >= len(closer) and body.endswith(closer) else body


def _token(kind: str, text: str) -> _Token:
    if kind == "word":
        return _Token("word", text.lower())
    if kind == "dollar":
        delimiter = text[:text.index("$", 1) + 1]
        return _Token("string", _inner(text, len(delimiter), delimiter))
    if kind == "estring":
        return _Token("string", _inner(text, 2, "'"))
    if kind in ("string", "string2"):
        return _Token("string", _inner(text, 1, text[0]))
    if kind in ("name", "backtick"):
        return _Token("name", _inner(text, 1, text[0]))
    if kind == "bracket":
        return _Token("name", _inner(text, 1, "]"))
    return _Token("other", text)


def _tokens(sql: str, lexing: _Lexing) -> list[_Token]:
    return [_token(match.lastgroup or "other", match.group())
            for match in _pattern(lexing).finditer(sql) if match.lastgroup != "skip"]


def _lexings(sql: str, dialect: Dialect) -> list[_Lexing]:
    """Every way the server might read ``sql``; one when no setting could matter."""
    backslash = "\\" in sql
    if dialect == "mariadb":
        ways = [_Lexing(dialect, True, True, False)]
        if backslash:
            ways.append(_Lexing(dialect, False, False, False))  # NO_BACKSLASH_ESCAPES
        if '"' in sql:
            ways.append(_Lexing(dialect, backslash, False, True))  # ANSI_QUOTES
        return ways
    ways = [_Lexing(dialect, False, False, True)]
    if backslash:
        ways.append(_Lexing(dialect, True, False, True))  # standard_conforming_strings off
    return ways


# ---------------------------------------------------------------- what is refused

_LOGIN_CHANGE = "it changes a login, a role or a grant, which would outlast the run"
_DYNAMIC = "it runs SQL built at run time, which the hub cannot read first"
# create/alter/drop/rename of these: the first such word after the verb names the object.
_OBJECT_WORDS = frozenset({
    "table", "view", "index", "sequence", "trigger", "type", "domain", "schema",
    "database", "user", "role", "group", "login", "function", "procedure", "package",
    "event", "extension", "system", "server", "tablespace", "language", "foreign",
    "subscription", "publication", "policy", "rule", "statistics", "collation",
    "operator", "cast", "conversion", "aggregate", "materialized", "default", "owned",
    "routine", "transform", "synonym", "text", "access",
})
_REFUSED_OBJECTS = {
    "user": _LOGIN_CHANGE, "role": _LOGIN_CHANGE, "group": _LOGIN_CHANGE,
    "login": _LOGIN_CHANGE, "default": _LOGIN_CHANGE, "owned": _LOGIN_CHANGE,
    "database": "it reaches past the business database",
    "system": "it changes the server for every login",
    "server": "it reaches another server", "foreign": "it reaches another server",
    "subscription": "it reaches another server",
    "tablespace": "it names files on the database server",
    "extension": "it loads code into the database server",
    "language": "it loads code into the database server",
}
_ROUTINES = {"function", "procedure", "package", "event", "routine"}  # create/alter only
_SET_TARGETS = {"password": "SET PASSWORD", "role": "SET ROLE",
                "authorization": "SET SESSION AUTHORIZATION"}
_SET_MODIFIERS = {"session", "local", "global"}
_FILE_FUNCTIONS = {
    "postgresql": frozenset({
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_ls_logdir", "pg_ls_waldir",
        "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_ls_logicalsnapdir",
        "pg_ls_logicalmapdir", "pg_ls_replslotdir", "pg_stat_file", "lo_import",
        "lo_export", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_logdir_ls",
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
        "pg_promote", "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u",
        "dblink_send_query", "dblink_open",
    }),
    "mariadb": frozenset({"load_file", "sys_exec", "sys_eval"}),
    "other": frozenset({"openrowset", "opendatasource", "openquery", "xp_cmdshell"}),
}
_CONFIG_REFUSED = ("role", "session_authorization", "webhub.")


# Every refusal below needs one of these in the text (a keyword, an object's kind, a
# function's name): a statement with none of them is not read at all. A bulk INSERT or
# a plain SELECT costs a lower-casing and a few substring searches, not a reading.
_NEEDED_WORDS = (
    "grant", "revoke", "load", "password", "role", "authorization", "webhub", "reassign",
    "user", "group", "login", "default", "owned", "database", "system", "server",
    "foreign", "subscription", "tablespace", "extension", "language", "function",
    "procedure", "package", "event", "routine",
)
_NEEDED_BY_DIALECT: dict[Dialect, tuple[str, ...]] = {
    "postgresql": ("copy", "import", "set_config", "pg_", "lo_", "dblink"),
    "mariadb": ("schema", "prepare", "execute", "deallocate", "kill", "shutdown", "install",
                "atomic", "immediate", "outfile", "dumpfile", "sys_"),
    "other": ("open", "xp_"),
}
_DO = re.compile(r"\bdo\b")


def _may_be_refused(sql: str, dialect: Dialect) -> bool:
    lowered = sql.lower()
    if dialect == "postgresql" and _DO.search(lowered):
        return True
    return any(word in lowered for word in _NEEDED_WORDS + _NEEDED_BY_DIALECT[dialect])


def refused_in_server_text(sql: str, dialect: Dialect) -> str | None:
    """What ``sql`` does that a job may not, in words for the job; None when nothing."""
    if not _may_be_refused(sql, dialect):
        return None
    for lexing in _lexings(sql, dialect):
        tokens = _tokens(sql, lexing)
        refused = _anywhere(tokens, dialect)
        for statement in _statements(tokens):
            refused = refused or _statement_refused(statement, dialect)
        if refused:
            return refused
    return None


def _statements(tokens: list[_Token]) -> list[list[_Token]]:
    out: list[list[_Token]] = [[]]
    for token in tokens:
        if token == _SEMICOLON:
            out.append([])
        else:
            out[-1].append(token)
    return [s for s in out if s]


def _words(tokens: list[_Token]) -> list[str]:
    return [t.text for t in tokens if t.kind == "word"]


_MARIADB_STARTS = frozenset({"begin", "execute", "into"})


def _anywhere(tokens: list[_Token], dialect: Dialect) -> str | None:
    """What is refused wherever it stands: grants, LOAD, file functions, dynamic SQL."""
    into_targets = _into_targets(tokens) if dialect == "mariadb" else set()
    count = len(tokens)
    for index, (kind, text) in enumerate(tokens):
        if kind == "other" and text != "@":
            continue
        after = tokens[index + 1] if index + 1 < count else _NOTHING
        if kind == "word" and text in ("grant", "revoke"):
            return f"{text.upper()} ({_LOGIN_CHANGE})"
        if kind == "word" and text == "load" and after.text.lower() in ("data", "xml"):
            return "LOAD DATA (it makes the hub send a file of its host)"
        if after == _OPEN and kind in ("word", "name"):
            refused = _call_refused(text.lower(), tokens[index + 2] if index + 2 < count
                                    else _NOTHING, dialect)
            if refused:
                return refused
        if dialect == "mariadb" and (text in _MARIADB_STARTS or text == "@"):
            refused = _mariadb_anywhere(tokens, index, index in into_targets)
            if refused:
                return refused
        if (dialect == "postgresql" and kind == "word" and text == "update"
                and any(t.text.lower() == "pg_settings" for t in tokens[index + 1:index + 4])):
            return "UPDATE pg_settings (it sets the role or the hub's webhub.* settings)"
    return None


def _call_refused(name: str, first: _Token, dialect: Dialect) -> str | None:
    """``name(first, …``: a refused function, or set_config() of what the hub owns."""
    if name in _FILE_FUNCTIONS[dialect]:
        return f"the function {name}() (it reaches past the business tables)"
    if dialect == "postgresql" and name == "set_config":
        # Only a plain literal can be read: a name built at run time could be 'role'.
        plain = first.kind == "string" and "\\" not in first.text
        if not plain or first.text.lower().startswith(_CONFIG_REFUSED):
            return "set_config() of the role or the hub's webhub.* settings"
    return None


def _mariadb_anywhere(tokens: list[_Token], index: int, into_target: bool) -> str | None:
    words = [t.text if t.kind == "word" else "" for t in tokens[index:index + 3]]
    if words == ["begin", "not", "atomic"]:
        return f"BEGIN NOT ATOMIC ({_DYNAMIC})"
    if words[:2] == ["execute", "immediate"]:
        return f"EXECUTE IMMEDIATE ({_DYNAMIC})"
    if words[:1] == ["into"] and len(words) > 1 and words[1] in ("outfile", "dumpfile"):
        return f"INTO {words[1].upper()} (it writes a file on the database server)"
    if _is_hub_variable(tokens, index) and (into_target or _assigned(tokens, index)):
        return "assigning @webhub_… (the hub's staff id for the statement)"
    return None


def _is_hub_variable(tokens: list[_Token], index: int) -> bool:
    """``@webhub_…`` at ``index`` (the ``@``), however the name is quoted."""
    if tokens[index] != _AT or index + 1 >= len(tokens):
        return False
    name = tokens[index + 1]
    return name.kind in ("word", "name", "string") and name.text.lower().startswith("webhub_")


def _assigned(tokens: list[_Token], index: int) -> bool:
    """``@x := …`` anywhere, or ``@x = …`` where a SET (or its list) assigns."""
    following = [t.text for t in tokens[index + 2:index + 4]]
    if following == [":", "="]:
        return True
    before = tokens[index - 1] if index > 0 else _NOTHING
    return following[:1] == ["="] and before in (_SET, _COMMA)


def _into_targets(tokens: list[_Token]) -> set[int]:
    """The ``@`` of each variable in a ``SELECT … INTO @a, @b`` list (one pass)."""
    targets: set[int] = set()
    index, count = 0, len(tokens)
    while index < count:
        if tokens[index] != _INTO:
            index += 1
            continue
        index += 1
        while index + 1 < count and tokens[index] == _AT:
            targets.add(index)
            index += 2
            if index < count and tokens[index] == _COMMA:
                index += 1
    return targets


def _statement_refused(statement: list[_Token], dialect: Dialect) -> str | None:
    """What is refused by a statement's first words."""
    words = _words(statement)
    if not words or statement[0].kind != "word":
        return None
    verb = words[0]
    if verb in ("create", "alter", "drop", "rename", "reassign"):
        return _definition_refused(verb, words[1:], dialect)
    if verb == "set":
        return _set_refused(statement, words[1:], dialect)
    if verb == "reset" and (words[1:2] in (["role"], ["session_authorization"])
                            or words[1:3] == ["session", "authorization"]):
        return f"RESET {' '.join(words[1:3]).upper()} ({_LOGIN_CHANGE})"
    if verb == "load":
        return "LOAD (it reads files or libraries into the database server)"
    return _verb_refused(verb, dialect)


def _verb_refused(verb: str, dialect: Dialect) -> str | None:
    if dialect == "postgresql":
        refused = {"do": f"DO blocks ({_DYNAMIC})",
                   "copy": "COPY (it reads or writes files on the database server)",
                   "import": "IMPORT FOREIGN SCHEMA (it reaches another server)"}
        return refused.get(verb)
    if dialect == "mariadb":
        if verb in ("prepare", "execute", "deallocate"):
            return f"{verb.upper()} ({_DYNAMIC})"
        if verb in ("kill", "shutdown", "install", "uninstall"):
            return f"{verb.upper()} (it acts on the server, not on the business tables)"
    return None


def _definition_refused(verb: str, rest: list[str], dialect: Dialect) -> str | None:
    if verb == "reassign":
        return f"REASSIGN OWNED ({_LOGIN_CHANGE})"
    target = next((word for word in rest if word in _OBJECT_WORDS), None)
    if target is None:
        return None
    if dialect == "mariadb" and target == "schema":
        target = "database"  # MariaDB's SCHEMA is a database
    if target in _ROUTINES and verb in ("create", "alter"):
        return f"{verb.upper()} {target.upper()} (its body would run later, unread)"
    why = _REFUSED_OBJECTS.get(target)
    return f"{verb.upper()} {target.upper()} ({why})" if why else None


def _set_refused(statement: list[_Token], rest: list[str], dialect: Dialect) -> str | None:
    if dialect == "mariadb" and any(
            _is_hub_variable(statement, i) for i in range(len(statement))):
        return "SET @webhub_… (the hub's staff id for the statement)"
    if dialect == "mariadb" and rest[:1] == ["statement"] and "for" in rest:
        inner = statement[[t.text for t in statement].index("for") + 1:]
        return _statement_refused(inner, dialect)
    every = [t.text.lower() for t in statement[1:] if t.kind in ("word", "name")]
    skip = 0
    while skip < len(every) - 1 and every[skip] in _SET_MODIFIERS:
        skip += 1
    names = every[skip:skip + 2]
    if names[:2] == ["default", "role"]:
        return f"SET DEFAULT ROLE ({_LOGIN_CHANGE})"
    if names and names[0] in _SET_TARGETS:
        return f"{_SET_TARGETS[names[0]]} ({_LOGIN_CHANGE})"
    if names[:1] == ["session_authorization"]:
        return f"SET SESSION AUTHORIZATION ({_LOGIN_CHANGE})"
    if dialect != "mariadb" and names and names[0].startswith("webhub"):
        return "SET webhub.… (the hub's staff id for the statement)"
    return None
