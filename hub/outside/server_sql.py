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

import re
from dataclasses import dataclass
from typing import Literal

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
_START = re.compile(
    rf"""
      (?P<space>\s+)
    | (?P<line>--[^\n]*|\#[^\n]*)
    | (?P<exec>/\*M?!\d{{0,6}})
    | (?P<block>/\*)
    | (?P<dollar>\$(?:{_WORD})?\$)
    | (?P<word>{_WORD})
    | (?P<quote>['"`\[])
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_PLAIN = {"'": re.compile(r"(?:[^']|'')*'?"), '"': re.compile(r'(?:[^"]|"")*"?'),
          "`": re.compile(r"(?:[^`]|``)*`?"), "[": re.compile(r"[^\]]*\]?")}
_ESCAPED = {"'": re.compile(r"(?:[^'\\]|\\.|'')*'?", re.DOTALL),
            '"': re.compile(r'(?:[^"\\]|\\.|"")*"?', re.DOTALL)}


@dataclass(frozen=True)
class _Token:
    kind: str  # word (lower case), name (quoted identifier), string, other
    text: str


def _tokens(sql: str, lexing: _Lexing) -> list[_Token]:
    out: list[_Token] = []
    pos, end = 0, len(sql)
    while pos < end:
        match = _START.match(sql, pos)
        if match is None:  # pragma: no cover - the last alternative matches any character
            break
        kind, text = match.lastgroup or "other", match.group()
        pos = match.end()
        if kind == "space":
            continue
        if kind == "line":
            if _is_line_comment(text, lexing.dialect):
                continue
            kind, text, pos = "other", text[0], match.start() + 1
        if kind == "exec":
            if lexing.dialect == "mariadb":
                continue  # MariaDB runs what an executable comment holds: read it as code
            kind = "block"
        if kind == "block":
            close = sql.find("*/", pos)
            pos = end if close < 0 else close + 2
            continue
        if kind == "dollar" and lexing.dialect == "postgresql":
            close = sql.find(text, pos)
            body_end = end if close < 0 else close
            out.append(_Token("string", sql[pos:body_end]))
            pos = end if close < 0 else close + len(text)
            continue
        if kind == "dollar":
            kind, text, pos = "other", "$", match.start() + 1
        if kind == "quote":
            # PostgreSQL's E'…' (the E right before the quote) takes backslash escapes.
            e_string = (bool(out) and out[-1] == _Token("word", "e")
                        and match.start() > 0 and sql[match.start() - 1] in "eE")
            token, pos = _quoted(sql, text, pos, lexing, e_string)
            out.append(token)
            continue
        out.append(_Token(kind, text.lower() if kind == "word" else text))
    return out


def _is_line_comment(text: str, dialect: Dialect) -> bool:
    if text.startswith("#"):
        return dialect == "mariadb"
    if dialect != "mariadb":
        return True
    # MariaDB: "--" starts a comment only before a space or a control character.
    return len(text) == 2 or text[2] <= " "


def _quoted(sql: str, quote: str, pos: int, lexing: _Lexing,
            e_string: bool) -> tuple[_Token, int]:
    if quote == "[" and lexing.dialect != "other":
        return _Token("other", "["), pos
    if quote == "'":
        escaped = lexing.backslash_single or (lexing.dialect == "postgresql" and e_string)
    else:
        escaped = quote == '"' and lexing.backslash_double and not lexing.double_is_name
    body = (_ESCAPED if escaped else _PLAIN)[quote].match(sql, pos)
    assert body is not None  # every pattern matches the empty string
    text = body.group()
    closing = "]" if quote == "[" else quote
    inner = text[:-1] if text.endswith(closing) else text
    if quote in "`[" or (quote == '"' and lexing.double_is_name):
        return _Token("name", inner), body.end()
    return _Token("string", inner), body.end()


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


def refused_in_server_text(sql: str, dialect: Dialect) -> str | None:
    """What ``sql`` does that a job may not, in words for the job; None when nothing."""
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
        if token == _Token("other", ";"):
            out.append([])
        else:
            out[-1].append(token)
    return [s for s in out if s]


def _words(tokens: list[_Token]) -> list[str]:
    return [t.text for t in tokens if t.kind == "word"]


def _anywhere(tokens: list[_Token], dialect: Dialect) -> str | None:
    """What is refused wherever it stands: grants, LOAD, file functions, dynamic SQL."""
    for index, token in enumerate(tokens):
        after = tokens[index + 1] if index + 1 < len(tokens) else _Token("other", "")
        if token.kind == "word" and token.text in ("grant", "revoke"):
            return f"{token.text.upper()} ({_LOGIN_CHANGE})"
        if token.kind == "word" and token.text == "load" and after.text.lower() in (
                "data", "xml"):
            return "LOAD DATA (it makes the hub send a file of its host)"
        if after == _Token("other", "(") and token.kind in ("word", "name"):
            refused = _call_refused(token.text.lower(), tokens[index + 2:], dialect)
            if refused:
                return refused
        if dialect == "mariadb":
            refused = _mariadb_anywhere(tokens, index)
            if refused:
                return refused
        if (dialect == "postgresql" and token == _Token("word", "update")
                and any(t.text.lower() == "pg_settings" for t in tokens[index + 1:index + 4])):
            return "UPDATE pg_settings (it sets the role or the hub's webhub.* settings)"
    return None


def _call_refused(name: str, args: list[_Token], dialect: Dialect) -> str | None:
    if name in _FILE_FUNCTIONS[dialect]:
        return f"the function {name}() (it reaches past the business tables)"
    if dialect == "postgresql" and name == "set_config":
        first = args[0] if args else _Token("other", "")
        # Only a plain literal can be read: a name built at run time could be 'role'.
        plain = first.kind == "string" and "\\" not in first.text
        if not plain or first.text.lower().startswith(_CONFIG_REFUSED):
            return "set_config() of the role or the hub's webhub.* settings"
    return None


def _mariadb_anywhere(tokens: list[_Token], index: int) -> str | None:
    words = [t.text if t.kind == "word" else "" for t in tokens[index:index + 3]]
    if words == ["begin", "not", "atomic"]:
        return f"BEGIN NOT ATOMIC ({_DYNAMIC})"
    if words[:2] == ["execute", "immediate"]:
        return f"EXECUTE IMMEDIATE ({_DYNAMIC})"
    if words[:1] == ["into"] and len(words) > 1 and words[1] in ("outfile", "dumpfile"):
        return f"INTO {words[1].upper()} (it writes a file on the database server)"
    if _writes_hub_variable(tokens, index):
        return "assigning @webhub_… (the hub's staff id for the statement)"
    return None


def _is_hub_variable(tokens: list[_Token], index: int) -> bool:
    """``@webhub_…`` at ``index`` (the ``@``), however the name is quoted."""
    if tokens[index] != _Token("other", "@") or index + 1 >= len(tokens):
        return False
    name = tokens[index + 1]
    return name.kind in ("word", "name", "string") and name.text.lower().startswith("webhub_")


def _writes_hub_variable(tokens: list[_Token], index: int) -> bool:
    if not _is_hub_variable(tokens, index):
        return False
    following = [t.text for t in tokens[index + 2:index + 4]]
    if following == [":", "="]:
        return True
    before = tokens[index - 1] if index > 0 else _Token("other", "")
    if following[:1] == ["="] and before in (_Token("word", "set"), _Token("other", ",")):
        return True  # SET @webhub_x = …, also inside a trigger's or a list's SET
    # SELECT … INTO @a, @webhub_x: walk back over the list to the INTO.
    back = index - 1
    while back >= 0:
        if tokens[back] == _Token("word", "into"):
            return True
        if tokens[back] != _Token("other", ",") or back < 2:
            return False
        if tokens[back - 2] != _Token("other", "@"):
            return False
        back -= 3
    return False


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
    if verb == "reset" and words[1:2] in (["role"], ["session"]):
        return f"RESET {words[1].upper()} ({_LOGIN_CHANGE})"
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
    names = [t.text.lower() for t in statement[1:] if t.kind in ("word", "name")]
    while names and names[0] in _SET_MODIFIERS and len(names) > 1:
        names = names[1:]
    if names[:2] == ["default", "role"]:
        return f"SET DEFAULT ROLE ({_LOGIN_CHANGE})"
    if names and names[0] in _SET_TARGETS:
        return f"{_SET_TARGETS[names[0]]} ({_LOGIN_CHANGE})"
    if names[:1] == ["session_authorization"]:
        return f"SET SESSION AUTHORIZATION ({_LOGIN_CHANGE})"
    if dialect != "mariadb" and names and names[0].startswith("webhub"):
        return "SET webhub.… (the hub's staff id for the statement)"
    return None
